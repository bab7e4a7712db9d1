#include "greensched/multi/fleet_node_types.hpp"

#include <fmt/format.h>

#include "greensched/core/gpu_model.hpp"

namespace greensched::multi {

Result<FleetNodeTypes> fleet_node_types(const Fleet& fleet) {
  FleetNodeTypes out;
  const std::size_t sites = fleet.sites.size();
  out.gpus.assign(sites, {});
  out.site_cores.assign(sites, 0.0);
  for (std::size_t s = 0; s < sites; ++s) {
    for (const NodeSpec& n : fleet.sites[s].nodes) {
      std::size_t t = 0;
      while (t < out.types.size() &&
             !(out.types[t].cpu_milli == n.cpu_milli && out.types[t].memory_mib == n.memory_mib &&
               out.types[t].gpu_count == n.gpu_count && out.types[t].model == n.model)) {
        ++t;
      }
      if (t == out.types.size()) {
        if (t == 32) {
          return Error{fmt::format("fleet node types: more than 32 node shapes (site {})",
                                   fleet.sites[s].name)};
        }
        out.types.push_back(n);
      }
      out.site_cores[s] += static_cast<double>(n.cpu_milli) / 1000.0;
    }
  }
  for (std::size_t s = 0; s < sites; ++s) {
    out.gpus[s].assign(out.types.size(), 0.0);
    for (const NodeSpec& n : fleet.sites[s].nodes) {
      for (std::size_t t = 0; t < out.types.size(); ++t) {
        const NodeSpec& k = out.types[t];
        if (k.cpu_milli == n.cpu_milli && k.memory_mib == n.memory_mib &&
            k.gpu_count == n.gpu_count && k.model == n.model) {
          out.gpus[s][t] += n.gpu_count;
          break;
        }
      }
    }
  }
  return out;
}

uint32_t fitting_types(const FleetNodeTypes& types, const PodSpec& pod) {
  uint32_t mask = 0;
  for (std::size_t t = 0; t < types.types.size(); ++t) {
    const NodeSpec& n = types.types[t];
    if (pod.cpu_milli > n.cpu_milli || pod.memory_mib > n.memory_mib) continue;
    if (pod.needs_gpu() && (n.gpu_count < pod.num_gpu || !model_allowed(pod.gpu_spec, n.model))) {
      continue;
    }
    mask |= 1u << t;
  }
  return mask;
}

}  // namespace greensched::multi
