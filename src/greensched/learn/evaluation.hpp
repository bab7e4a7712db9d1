// Evaluating policies against the allocation bound: runs of several policies and seeds (plain
// inflation or the drift protocol) in parallel, the bound per seed over the same arrivals (with
// an offline packing of them beside it), and the figures at 100 % arrival that the bound
// command and the README tables report.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/learn/arrivals.hpp"
#include "greensched/learn/bound.hpp"
#include "greensched/learn/offline_packing.hpp"
#include "greensched/sim/simulator.hpp"

namespace greensched::learn {

struct EvalPlan {
  std::vector<std::string> policies;
  std::vector<uint64_t> seeds;
  double tune = 1.3;  // the policies' runs
  int jobs = 0;
  // Drift protocol (drift_arrivals) when set: switch after this fraction of the arrivals.
  std::optional<double> drift_switch;
};

using EvalProgressFn =
    std::function<void(std::size_t done, std::size_t total, const sim::RunResult& result)>;

// Every (policy, seed) run, policy-major then seed, for `scenario` (whose workload is
// drift->workload when `drift` is given).
Result<std::vector<sim::RunResult>> run_policies(const sim::Scenario& scenario,
                                                 const DriftWorkload* drift, const EvalPlan& plan,
                                                 const EvalProgressFn& progress = {});

// The bound at arrival bin `pct` for each seed: over arrivals_through_bin, or with `drift` over
// the drift sequence of the plan's tune cut at that bin.
Result<std::vector<BoundResult>> bounds_per_seed(const trace::Workload& workload,
                                                 const DriftWorkload* drift, const EvalPlan& plan,
                                                 int pct, const BoundOptions& options);

// The bound of each seed as bounds_per_seed gives it and, with `pack`, an offline packing of the
// same pods (offline_packing.hpp; lp-rounding rounds this bound's solution, placements not
// kept): what a placement reaches beside what none can exceed.
struct SeedBound {
  BoundResult bound;
  std::optional<OfflinePacking> packing;
};
Result<std::vector<SeedBound>> bounds_and_packings_per_seed(const trace::Workload& workload,
                                                            const DriftWorkload* drift,
                                                            const EvalPlan& plan, int pct,
                                                            const BoundOptions& options, bool pack);

// A policy's figures in arrival bin `pct`, means over its seeds.
struct PolicySummary {
  std::string policy;
  std::vector<double> alloc_pct;  // per seed, in plan order
  double mean_alloc_pct = 0;
  double mean_unallocated_gpus = 0;  // cluster GPUs minus allocated GPUs
  double mean_power_watts = 0;
  double mean_failed_pods = 0;  // over the whole run
  double mean_wall_seconds = 0;
};
std::vector<PolicySummary> summarize(const std::vector<sim::RunResult>& results, int pct);

}  // namespace greensched::learn
