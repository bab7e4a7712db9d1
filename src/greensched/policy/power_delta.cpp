#include "greensched/policy/power_delta.hpp"

#include <map>
#include <tuple>

namespace greensched::policy {

PowerDelta least_power_increase(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                                const power::NodePower& figures) {
  const NodeSpec& spec = cluster.spec(node);
  const NodeState& s = cluster.state(node);
  const double cpu_before = power::cpu_power_watts(spec, figures.cpu, s.cpu_free_milli);
  const double cpu_after =
      power::cpu_power_watts(spec, figures.cpu, s.cpu_free_milli - pod.cpu_milli);
  const double gpu_up = figures.gpu.max_watts - figures.gpu.idle_watts;
  PowerDelta out;
  double gpus_powering_up = 0;
  if (figures.gpu_rule == power::GpuPowerRule::kProportional) {
    gpus_powering_up = static_cast<double>(pod.total_gpu_milli()) / kGpuMilli;
  } else if (pod.shares_gpu()) {
    int first_free = -1;
    for (int g = 0; g < spec.gpu_count && out.gpus == 0; ++g) {
      const int32_t f = s.gpu_free_milli[g];
      if (f < pod.gpu_milli) continue;
      if (f < kGpuMilli) {
        out.gpus = GpuMask{1} << g;
      } else if (first_free < 0) {
        first_free = g;
      }
    }
    if (out.gpus == 0 && first_free >= 0) {
      out.gpus = GpuMask{1} << first_free;
      gpus_powering_up = 1;
    }
  } else if (pod.needs_gpu()) {
    gpus_powering_up = pod.num_gpu;
  }
  out.watts = (cpu_after - cpu_before) + gpus_powering_up * gpu_up;
  return out;
}

std::vector<uint32_t> power_profile_ids(std::span<const power::NodePower> figures) {
  using Key = std::tuple<double, double, double, double, int, power::GpuPowerRule>;
  std::map<Key, uint32_t> ids;
  std::vector<uint32_t> out;
  out.reserve(figures.size());
  for (const power::NodePower& f : figures) {
    const Key key{f.gpu.idle_watts, f.gpu.max_watts,        f.cpu.idle_watts,
                  f.cpu.max_watts,  f.cpu.cores_per_socket, f.gpu_rule};
    out.push_back(ids.emplace(key, static_cast<uint32_t>(ids.size())).first->second);
  }
  return out;
}

}  // namespace greensched::policy
