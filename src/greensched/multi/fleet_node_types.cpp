#include "greensched/multi/fleet_node_types.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "greensched/multi/placement_preview.hpp"

namespace greensched::multi {

Result<FleetNodeTypes> fleet_node_types(const Fleet& fleet) {
  FleetNodeTypes out;
  const std::size_t sites = fleet.sites.size();
  out.site_cores.assign(sites, 0.0);
  // Per site, (type, GPUs) of each node; the types are known only once every site is read.
  std::vector<std::vector<std::pair<std::size_t, double>>> gpus_of(sites);
  for (std::size_t s = 0; s < sites; ++s) {
    for (const NodeSpec& n : fleet.sites[s].nodes) {
      const auto same = [&](const NodeSpec& k) {
        return k.cpu_milli == n.cpu_milli && k.memory_mib == n.memory_mib &&
               k.gpu_count == n.gpu_count && k.model == n.model;
      };
      const auto t = static_cast<std::size_t>(
          std::find_if(out.types.begin(), out.types.end(), same) - out.types.begin());
      if (t == out.types.size()) {
        if (t == 32) {
          return Error{fmt::format("fleet node types: more than 32 node shapes (site {})",
                                   fleet.sites[s].name)};
        }
        out.types.push_back(n);
      }
      gpus_of[s].emplace_back(t, n.gpu_count);
      out.site_cores[s] += static_cast<double>(n.cpu_milli) / 1000.0;
    }
  }
  out.gpus.assign(sites, std::vector<double>(out.types.size(), 0.0));
  for (std::size_t s = 0; s < sites; ++s) {
    for (const auto& [t, g] : gpus_of[s]) out.gpus[s][t] += g;
  }
  return out;
}

uint32_t fitting_types(const FleetNodeTypes& types, const PodSpec& pod) {
  uint32_t mask = 0;
  for (std::size_t t = 0; t < types.types.size(); ++t) {
    if (fits_empty_node(types.types[t], pod)) mask |= 1u << t;
  }
  return mask;
}

}  // namespace greensched::multi
