// The FleetDispatch-v0 environment's engine for Python: multi::FleetEnv (episodes, the
// observation, action mask and reward over the fleet simulator's own event loop) with its
// observation and mask written straight into numpy buffers the Python class owns.
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "greensched/multi/fleet_env.hpp"

namespace greensched::python {
namespace {

using FloatArray = py::array_t<float, py::array::c_style>;
using MaskArray = py::array_t<uint8_t, py::array::c_style>;

class PyFleetEnv {
 public:
  explicit PyFleetEnv(const multi::FleetEnvOptions& o) : env_(unwrap(multi::FleetEnv::make(o))) {}

  void reset(uint64_t seed, FloatArray obs, MaskArray mask) {
    check_buffers(obs, mask);
    Status s;
    {
      py::gil_scoped_release release;
      s = env_->reset(seed);
    }
    check(s);
    env_->observe(obs.mutable_data());
    env_->mask(mask.mutable_data());
  }

  // (reward, done); the next observation and mask are written when not done.
  py::tuple step(int action, FloatArray obs, MaskArray mask) {
    check_buffers(obs, mask);
    const double reward = unwrap(env_->step(action));
    const bool done = env_->done();
    if (!done) {
      env_->observe(obs.mutable_data());
      env_->mask(mask.mutable_data());
    }
    return py::make_tuple(reward, done);
  }

  py::dict result() const {
    if (!env_->done()) throw BindingError("the episode has not ended");
    const multi::MultiResult& r = env_->result();
    py::dict d;
    d["carbon_kg"] = r.carbon_kg;
    d["energy_kwh"] = r.energy_kwh;
    d["ls_slo_violations"] = r.ls_slo_violations;
    d["jobs"] = r.jobs;
    d["jobs_moved"] = r.jobs_moved;
    d["jobs_deferred"] = r.jobs_deferred;
    d["jobs_never_started"] = r.jobs_never_started;
    d["mean_delay_s_ls"] = r.mean_delay_s_ls;
    d["mean_delay_s_be"] = r.mean_delay_s_be;
    d["gpu_alloc_pct"] = r.gpu_alloc_pct;
    d["window_s"] = r.window_s;
    d["total_reward"] = env_->total_reward();
    return d;
  }

  py::dict job() const {
    if (env_->done()) throw BindingError("the episode has ended");
    const multi::JobInfo& j = env_->job();
    py::dict d;
    d["pod"] = j.pod->name;
    d["home_site"] = j.home_site;
    d["latency_sensitive"] = j.latency_sensitive;
    d["submit_s"] = j.submit_s;
    d["now_s"] = env_->now_s();
    d["duration_s"] = j.duration_s;
    d["slack_s"] = j.slack_s;
    d["data_gb"] = j.data_gb;
    d["gpu_milli"] = j.pod->total_gpu_milli();
    d["again"] = j.again;
    return d;
  }

  std::vector<std::string> site_names() const {
    std::vector<std::string> names;
    for (const auto& s : env_->fleet().sites) names.push_back(s.name);
    return names;
  }

  multi::FleetEnv& env() { return *env_; }
  const multi::FleetEnv& env() const { return *env_; }

 private:
  void check_buffers(const FloatArray& obs, const MaskArray& mask) const {
    if (obs.size() != env_->obs_size() || mask.size() != env_->actions()) {
      throw BindingError(fmt::format("buffers: need {} floats and {} mask bytes", env_->obs_size(),
                                     env_->actions()));
    }
  }
  std::unique_ptr<multi::FleetEnv> env_;
};

}  // namespace

void bind_fleet_env(py::module_& m) {
  py::class_<PyFleetEnv>(m, "FleetEnv")
      .def(py::init([](const std::string& fleet, const std::string& data_dir,
                       const std::string& pods, const std::string& start, double load, double days,
                       double warmup_days, double slack, int64_t ls_bound, int64_t wake_delay,
                       int64_t power_down_idle, int64_t sample, double data_gb, bool preempt_be,
                       int horizon, const std::string& reward, double ls_penalty,
                       const std::string& expert, bool ls_home, bool room,
                       const std::string& forecast) {
             if (reward != "carbon" && reward != "cost" && reward != "dispatch-carbon") {
               throw BindingError(
                   fmt::format("reward: '{}' is not carbon, cost or dispatch-carbon", reward));
             }
             multi::FleetEnvOptions o;
             o.fleet_path = fleet;
             o.data_dir = data_dir;
             o.pods_path = pods;
             o.start = start;
             o.load_pct = load;
             o.days = days;
             o.warmup_days = warmup_days;
             o.slack_h = slack;
             o.ls_bound_s = ls_bound;
             o.wake_delay_s = wake_delay;
             o.power_down_idle_s = power_down_idle;
             o.sample_s = sample;
             o.data_gb = data_gb;
             o.preempt_be = preempt_be;
             o.horizon_h = horizon;
             o.reward_cost = reward == "cost";
             o.reward_at_dispatch = reward == "dispatch-carbon";
             o.ls_home = ls_home;
             o.room = room;
             o.ls_penalty = ls_penalty;
             o.expert = expert;
             o.forecast = forecast;
             return new PyFleetEnv(o);
           }),
           py::arg("fleet"), py::arg("data_dir"), py::arg("pods"), py::arg("start"),
           py::arg("load"), py::arg("days"), py::arg("warmup_days"), py::arg("slack"),
           py::arg("ls_bound"), py::arg("wake_delay"), py::arg("power_down_idle"),
           py::arg("sample"), py::arg("data_gb"), py::arg("preempt_be"), py::arg("horizon"),
           py::arg("reward"), py::arg("ls_penalty"), py::arg("expert"), py::arg("ls_home") = false,
           py::arg("room") = false, py::arg("forecast") = "same-hour")
      .def("reset", &PyFleetEnv::reset, py::arg("seed"), py::arg("obs"), py::arg("mask"))
      .def("step", &PyFleetEnv::step, py::arg("action"), py::arg("obs"), py::arg("mask"))
      .def("result", &PyFleetEnv::result)
      .def("job", &PyFleetEnv::job)
      .def_property_readonly("site_names", &PyFleetEnv::site_names)
      .def_property_readonly("sites", [](const PyFleetEnv& e) { return e.env().sites(); })
      .def_property_readonly("slots", [](const PyFleetEnv& e) { return e.env().slots(); })
      .def_property_readonly("actions", [](const PyFleetEnv& e) { return e.env().actions(); })
      .def_property_readonly("obs_size", [](const PyFleetEnv& e) { return e.env().obs_size(); })
      .def_property_readonly("done", [](const PyFleetEnv& e) { return e.env().done(); })
      .def_property_readonly("expert_action",
                             [](const PyFleetEnv& e) { return e.env().expert_action(); })
      .def(
          "agent_action",
          [](PyFleetEnv& e, const std::string& name) { return unwrap(e.env().agent_action(name)); },
          py::arg("name"));
}

}  // namespace greensched::python
