// The engine of greensched.envs.ClusterPlacementEnv: a sim::PlacementStepper over a loaded
// workload, writing its observation into numpy arrays made here once, so that a step from
// Python is one call and no loop over nodes.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "greensched/sim/placement_stepper.hpp"

namespace greensched::python {
namespace {

class PlacementEnvCore {
 public:
  PlacementEnvCore(const std::string& nodes, const std::string& pods,
                   const std::string& power_model_path, double pue, const std::string& gpu_power,
                   const std::string& policy, double tune, bool expert, double alloc_weight,
                   double energy_weight, double invalid_penalty)
      : workload_(load_workload(nodes, pods, false)) {
    power::PowerModel model = load_power_model(power_model_path, pue);
    if (!gpu_power.empty()) {
      auto rule = power::parse_gpu_power_rule(gpu_power);
      if (!rule.ok()) throw BindingError(fmt::format("gpu_power: {}", rule.error()));
      model.set_gpu_rule(rule.value());
    }
    check(power::check_gpu_models(model, workload_.nodes, workload_.models, "power_model"));
    scenario_ = unwrap(sim::make_scenario(workload_, model));
    sim::PlacementStepper::Config config;
    config.policy = policy;
    config.tune = tune;
    config.expert = expert;
    config.alloc_weight = alloc_weight;
    config.energy_weight = energy_weight;
    config.invalid_penalty = invalid_penalty;
    episode_ = unwrap(sim::PlacementStepper::create(scenario_, config));
    const auto n = static_cast<py::ssize_t>(episode_->nodes());
    gpu_free_milli_ = py::array_t<float>({n, static_cast<py::ssize_t>(episode_->gpu_slots())});
    cpu_free_milli_ = py::array_t<float>(n);
    memory_free_mib_ = py::array_t<float>(n);
    pod_ = py::array_t<float>(sim::PlacementStepper::kPodFeatures);
    load_ = py::array_t<float>(2);
    mask_ = py::array_t<bool>(n);
    for (py::array* a :
         {static_cast<py::array*>(&gpu_free_milli_), static_cast<py::array*>(&cpu_free_milli_),
          static_cast<py::array*>(&memory_free_mib_), static_cast<py::array*>(&pod_),
          static_cast<py::array*>(&load_)}) {
      std::fill_n(static_cast<float*>(a->mutable_data()), a->size(), 0.0f);
    }
    std::fill_n(mask_.mutable_data(), mask_.size(), false);
    static_assert(sizeof(bool) == sizeof(uint8_t));
    sim::PlacementStepper::Buffers b;
    b.gpu_free_milli = gpu_free_milli_.mutable_data();
    b.cpu_free_milli = cpu_free_milli_.mutable_data();
    b.memory_free_mib = memory_free_mib_.mutable_data();
    b.pod = pod_.mutable_data();
    b.load = load_.mutable_data();
    b.mask = reinterpret_cast<uint8_t*>(mask_.mutable_data());
    episode_->set_buffers(b);
  }

  void reset(uint64_t seed) { check(episode_->reset(seed)); }

  // (reward, placed, terminated, added facility watts)
  py::tuple step(int64_t node) {
    const sim::PlacementStepper::Step s = unwrap(episode_->step(node));
    return py::make_tuple(s.reward, s.placed, s.done, s.added_facility_watts);
  }

  py::dict counts() const {
    const sim::PlacementStepper::Counts& c = episode_->counts();
    py::dict d;
    d["pods_arrived"] = c.pods_arrived;
    d["pods_placed"] = c.pods_placed;
    d["pods_failed"] = c.pods_failed;
    d["pods_rejected"] = c.pods_rejected;
    d["arrived_gpu_milli"] = c.arrived_gpu_milli;
    d["allocated_gpu_milli"] = c.allocated_gpu_milli;
    d["cluster_gpu_milli"] = c.cluster_gpu_milli;
    d["facility_watts"] = c.facility_watts;
    d["frag_gpu_milli"] = c.frag_gpu_milli;
    return d;
  }

  // Static facts for the spaces and the documentation: node names and specs, the bounds.
  py::dict spec() const {
    int64_t pod_cpu = 0, pod_memory = 0, pod_gpus = 0, pod_gpu_milli = 0, trace_gpu_milli = 0;
    for (const PodSpec& p : workload_.pods) {
      pod_cpu = std::max(pod_cpu, p.cpu_milli);
      pod_memory = std::max(pod_memory, p.memory_mib);
      pod_gpus = std::max<int64_t>(pod_gpus, p.needs_gpu() ? p.num_gpu : 0);
      pod_gpu_milli = std::max(pod_gpu_milli, p.total_gpu_milli());
      trace_gpu_milli += p.total_gpu_milli();
    }
    const std::vector<NodeSpec>& specs = workload_.nodes;
    TableBuilder nodes;
    nodes.add("name", specs, &NodeSpec::name);
    nodes.add("model", specs, [&](const NodeSpec& n) {
      return n.model == kNoGpuModel ? std::string() : workload_.models.name(n.model);
    });
    nodes.add("cpu_milli", specs, &NodeSpec::cpu_milli);
    nodes.add("memory_mib", specs, &NodeSpec::memory_mib);
    nodes.add("gpu_count", specs, &NodeSpec::gpu_count);
    py::dict d;
    d["nodes"] = nodes.release();
    d["gpu_slots"] = episode_->gpu_slots();
    d["max_pod_cpu_milli"] = pod_cpu;
    d["max_pod_memory_mib"] = pod_memory;
    d["max_pod_gpus"] = pod_gpus;
    d["max_pod_gpu_milli"] = pod_gpu_milli;
    d["trace_gpu_milli"] = trace_gpu_milli;  // the pod list's pods, each arriving once
    d["cluster_gpu_milli"] = episode_->counts().cluster_gpu_milli;
    d["idle_facility_watts"] = episode_->idle_facility_watts();
    d["full_facility_watts"] = episode_->full_facility_watts();
    d["nodes_source"] = workload_.nodes_source;
    d["pods_source"] = workload_.pods_source;
    return d;
  }

  trace::Workload workload_;
  sim::Scenario scenario_;
  std::unique_ptr<sim::PlacementStepper> episode_;
  py::array_t<float> gpu_free_milli_, cpu_free_milli_, memory_free_mib_, pod_, load_;
  py::array_t<bool> mask_;
};

}  // namespace

void bind_placement_env(py::module_& m) {
  py::class_<PlacementEnvCore>(m, "_PlacementEnvCore")
      .def(py::init<const std::string&, const std::string&, const std::string&, double,
                    const std::string&, const std::string&, double, bool, double, double, double>(),
           py::arg("nodes"), py::arg("pods"), py::arg("power_model"), py::arg("pue"),
           py::arg("gpu_power"), py::arg("policy"), py::arg("tune"), py::arg("expert"),
           py::arg("alloc_weight"), py::arg("energy_weight"), py::arg("invalid_penalty"))
      .def("reset", &PlacementEnvCore::reset, py::arg("seed"))
      .def("step", &PlacementEnvCore::step, py::arg("node"))
      .def("counts", &PlacementEnvCore::counts)
      .def("spec", &PlacementEnvCore::spec)
      .def_property_readonly("done", [](const PlacementEnvCore& e) { return e.episode_->done(); })
      .def_property_readonly("expert_node",
                             [](const PlacementEnvCore& e) { return e.episode_->expert_node(); })
      .def_property_readonly("feasible_nodes",
                             [](const PlacementEnvCore& e) { return e.episode_->feasible_nodes(); })
      .def_readonly("gpu_free_milli", &PlacementEnvCore::gpu_free_milli_)
      .def_readonly("cpu_free_milli", &PlacementEnvCore::cpu_free_milli_)
      .def_readonly("memory_free_mib", &PlacementEnvCore::memory_free_mib_)
      .def_readonly("pod", &PlacementEnvCore::pod_)
      .def_readonly("load", &PlacementEnvCore::load_)
      .def_readonly("mask", &PlacementEnvCore::mask_);
}

}  // namespace greensched::python
