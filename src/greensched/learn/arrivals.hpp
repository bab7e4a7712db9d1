// Arrival sequences beyond the plain inflation run: the pods that have arrived by the end of
// an arrival bin (what the bound is computed over), and a drift sequence that switches from
// one pod list to another part way through.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "greensched/core/rng.hpp"
#include "greensched/core/status.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::learn {

// The arrivals (indices into workload.pods) of a seeded inflation run whose arrival bin
// round(arrived GPU milli / cluster GPU milli x 100) is at most `pct`. Inflation sequences of
// one seed are prefixes of each other whatever the tune, so these are exactly the pods seen by
// the end of bin `pct` in a run of that seed with any tune.
std::vector<uint32_t> arrivals_through_bin(const trace::Workload& workload, uint64_t seed, int pct);

// Two pod lists on one node list: pods [0, first_count) come from the first, the rest from
// the second. Shape ids are assigned over both.
struct DriftWorkload {
  trace::Workload workload;
  std::size_t first_count = 0;
};
Result<DriftWorkload> load_drift_workload(const std::string& nodes_path,
                                          const std::string& first_pods,
                                          const std::string& second_pods);

// The drift protocol: the first list's inflation order (shuffled pods, then draws) until the
// arrived GPU requests reach `switch_fraction` x tune x cluster capacity, then the second
// list's inflation order until they reach tune x capacity. One generator, `rng`, drives both.
std::vector<uint32_t> drift_arrivals(const DriftWorkload& drift, double tune,
                                     double switch_fraction, Rng& rng);

}  // namespace greensched::learn
