// How a fleet run turns pods into jobs, shared by the simulator (fleet_sim) and the bound
// (fleet_bound) so that both see the same jobs: each job's home site is drawn in proportion to
// the sites' GPU capacity from the run's seed, its data is its memory request unless a size is
// given, and a GPU-hour at a site costs its GPU nodes' full-power IT watts per GPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "greensched/core/node.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::multi {

// A site's GPU capacity in milli-GPUs.
int64_t site_gpu_milli(const SiteSpec& site);

// Per site, its GPU capacity in milli-GPUs (at least 1): the weight of its home draws.
std::vector<double> site_home_weights(const Fleet& fleet);

// One home site per job, in job order, drawn from `homes` in proportion to `weights`.
std::vector<int> draw_home_sites(std::size_t jobs, std::span<const double> weights, Rng& homes);

// The home sites run_fleet draws for `jobs` jobs with `seed`: its seed stream gives each site
// two seeds (tie order, preview draws) and then the home draw's.
std::vector<int> fleet_home_sites(const Fleet& fleet, std::size_t jobs, uint64_t seed);

// GB moved with a job that runs away from home: `data_gb_per_job` when >= 0, else the pod's
// memory request in GiB.
double job_data_gb(const PodSpec& pod, double data_gb_per_job);

// The least IT watts a pod without GPUs draws on any of `nodes` it fits (CPU and memory): its
// share of the node's CPU power with every socket busy (power::pod_floor_watts), or 0 where no
// node fits. The fleet bound charges CPU-only jobs this.
double cpu_only_floor_watts(std::span<const NodeSpec> nodes,
                            std::span<const power::NodePower> figures, const PodSpec& pod);

// IT watts per GPU of a site's GPU nodes at full power (0 without GPUs).
double full_gpu_it_watts(std::span<const NodeSpec> nodes,
                         std::span<const power::NodePower> figures);

// The seed of site `site`'s scheduler (its node tie order and its policy's draws): the run's
// seed plus the site's index, so that a fleet's first site schedules as
// `simulate --mode replay --seed SEED` does.
inline uint64_t site_seed(uint64_t seed, std::size_t site) {
  return seed + site;
}

}  // namespace greensched::multi
