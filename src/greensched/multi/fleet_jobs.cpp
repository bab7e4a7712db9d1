#include "greensched/multi/fleet_jobs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace greensched::multi {

int64_t site_gpu_milli(const SiteSpec& site) {
  int64_t milli = 0;
  for (const NodeSpec& node : site.nodes) milli += int64_t{node.gpu_count} * kGpuMilli;
  return milli;
}

std::vector<double> site_home_weights(const Fleet& fleet) {
  std::vector<double> weights;
  weights.reserve(fleet.sites.size());
  for (const SiteSpec& site : fleet.sites) {
    weights.push_back(static_cast<double>(std::max<int64_t>(site_gpu_milli(site), 1)));
  }
  return weights;
}

std::vector<int> draw_home_sites(std::size_t jobs, std::span<const double> weights, Rng& homes) {
  double total = 0;
  for (double w : weights) total += w;
  std::vector<int> out(jobs, 0);
  for (std::size_t j = 0; j < jobs; ++j) {
    double u = homes.uniform_real() * total;
    out[j] = static_cast<int>(weights.size()) - 1;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (u < weights[i]) {
        out[j] = static_cast<int>(i);
        break;
      }
      u -= weights[i];
    }
  }
  return out;
}

std::vector<int> fleet_home_sites(const Fleet& fleet, std::size_t jobs, uint64_t seed) {
  Rng seeds(seed);
  for (std::size_t s = 0; s < fleet.sites.size(); ++s) seeds.next();  // the sites' previews
  Rng homes(seeds.next());
  return draw_home_sites(jobs, site_home_weights(fleet), homes);
}

double job_data_gb(const PodSpec& pod, double data_gb_per_job) {
  return data_gb_per_job >= 0 ? data_gb_per_job : static_cast<double>(pod.memory_mib) / 1024.0;
}

double full_gpu_it_watts(std::span<const NodeSpec> nodes,
                         std::span<const power::NodePower> figures) {
  double watts = 0, gpus = 0;
  for (std::size_t n = 0; n < nodes.size() && n < figures.size(); ++n) {
    const NodeSpec& node = nodes[n];
    if (node.gpu_count == 0) continue;
    const std::vector<int32_t> free(static_cast<std::size_t>(node.gpu_count), 0);
    watts += power::node_power_watts(node, figures[n], 0, free.data());
    gpus += node.gpu_count;
  }
  return gpus > 0 ? watts / gpus : 0.0;
}

double cpu_only_floor_watts(std::span<const NodeSpec> nodes,
                            std::span<const power::NodePower> figures, const PodSpec& pod) {
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t n = 0; n < nodes.size() && n < figures.size(); ++n) {
    const NodeSpec& node = nodes[n];
    if (node.cpu_milli < pod.cpu_milli || node.memory_mib < pod.memory_mib) continue;
    least = std::min(least, power::pod_floor_watts(node, figures[n], pod));
  }
  return std::isfinite(least) ? least : 0.0;
}

}  // namespace greensched::multi
