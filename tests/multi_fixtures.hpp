// A hand-made two-site fleet shared by the multi-cluster tests: one T4 node per site, a power
// model small enough to compute energies by hand, and a job builder.
#pragma once

#include <string>
#include <utility>

#include "greensched/multi/fleet_sim.hpp"
#include "greensched/power/power_model.hpp"
#include "test_pod.hpp"

namespace greensched::multi::fixtures {

// One T4 node per site (2 GPUs, 16 vCPU = 8 cores on one 16-core socket): idle 15 W CPU +
// 2 x 10 W GPUs = 35 W; a working core makes the socket draw 120 W, a used GPU 70 W.
inline power::PowerModel tiny_power_model() {
  auto m = power::PowerModel::parse(R"({
    "gpus": {"T4": {"idle_watts": 10, "max_watts": 70}},
    "cpus": {"c": {"idle_watts": 15, "max_watts": 120, "cores_per_socket": 16}},
    "default_cpu": "c"})",
                                    "tiny.json");
  return std::move(m.value());
}

// Sites "a" and "b", each one T4 node, with constant carbon intensities ci_a and ci_b.
inline Fleet two_sites(double ci_a, double ci_b) {
  Fleet fleet;
  const GpuModelId t4 = *fleet.models.intern("T4");
  for (const auto& [name, ci] : {std::pair{"a", ci_a}, std::pair{"b", ci_b}}) {
    SiteSpec s;
    s.name = name;
    s.nodes = {NodeSpec{std::string(name) + "/n0", 16000, 65536, 2, t4}};
    s.carbon = TimeSeries(fleet.start_s, 3600, {ci});
    fleet.sites.push_back(std::move(s));
  }
  return fleet;
}

inline PodSpec job(const char* name, int64_t cpu, int num_gpu, int32_t milli, int64_t from,
                   int64_t to, Qos qos = Qos::kBE) {
  PodSpec p = testing::test_pod(name, cpu, num_gpu, milli);
  p.creation_time = from;
  p.deletion_time = to;
  p.qos = qos;
  return p;
}

}  // namespace greensched::multi::fixtures
