// One simulation run of the published protocol: inflate the trace to `tune` x cluster GPU
// capacity with a seeded generator, let the pods arrive one by one (none depart), schedule
// each with the policy, and record allocation, fragmentation and power per arrival event.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "greensched/core/rng.hpp"
#include "greensched/core/status.hpp"
#include "greensched/defrag/move_planner.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/metrics.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::sim {

// What every run of an experiment shares, prepared once.
struct Scenario {
  const trace::Workload* workload = nullptr;
  frag::TargetWorkload target;  // FGD's target workload, from the trace before tuning
  std::shared_ptr<const std::vector<power::NodePower>> power;  // per node
  double pue = 1.0;
};

// Builds the scenario: target workload and per-node power figures.
Result<Scenario> make_scenario(const trace::Workload& workload,
                               const power::PowerModel& power_model);

struct RunSpec {
  RunSpec() = default;
  RunSpec(std::string policy_spec, uint64_t run_seed, double run_tune, std::string select = {})
      : policy(std::move(policy_spec)),
        seed(run_seed),
        tune(run_tune),
        gpu_select(std::move(select)) {}

  std::string policy;  // a policy name or mix, e.g. "pwr:200+fgd:800"
  uint64_t seed = 42;
  double tune = 1.3;
  std::string gpu_select;  // in a mix: whose GPU rule to use ("" = default)
  bool record = false;     // keep a decision record per pod (sim/decision_record.hpp)
  int snapshot_pct = -1;   // >= 0: keep every GPU's use when arrivals first reach this %
  // Bounded migration (defrag/move_planner.hpp): when a GPU pod fits nowhere, running pods may
  // be moved to make room, up to this % of the pods placed so far, counted cumulatively.
  double migrate_budget_pct = 0;
  defrag::PlannerLimits move_limits;
};

struct RunResult {
  RunSpec spec;
  int64_t pods_arrived = 0;
  int64_t pods_scheduled = 0;
  int64_t pods_failed = 0;
  int64_t arrived_gpu_milli = 0;
  int64_t allocated_gpu_milli = 0;  // at the end of the run
  int64_t cluster_gpu_milli = 0;
  int64_t pods_migrated = 0;       // moves of running pods (a pod moved twice counts twice)
  int64_t pods_rescued = 0;        // pods placed only thanks to moves (in pods_scheduled)
  int64_t migrated_gpu_milli = 0;  // GPU requests of the moved pods, summed
  std::vector<CurvePoint> curve;
  // Mean facility power in the 100 % arrival bin, by the nodes' GPU model (watts).
  std::vector<std::pair<std::string, double>> power_by_model_at_100;
  std::string records;  // JSON Lines, when spec.record
  // When spec.snapshot_pct >= 0: the arrival % at the snapshot and used milli per GPU, node by
  // node (gpu_count entries each).
  int snapshot_at_pct = -1;
  std::vector<std::vector<int32_t>> snapshot_used_milli;
  double wall_seconds = 0;
};

// Makes the policy of a run from its context; for policies that are not in the registry (e.g.
// a model being trained).
using PolicyMaker =
    std::function<Result<std::unique_ptr<policy::Policy>>(const policy::PolicyContext& context)>;

// Without `make`, spec.policy is made by the registry.
Result<RunResult> run_inflation(const Scenario& scenario, const RunSpec& spec,
                                const PolicyMaker& make = {});

// The event loop of run_inflation over a given arrival sequence (indices into the scenario's
// pods), for other protocols (e.g. a workload that drifts). `rng` continues the run's one
// generator: it has drawn the arrivals and draws the node tie order, then the policy's
// draws. Given the inflation sequence it reproduces run_inflation exactly. The curve has bins
// up to spec.tune x 100. Without `make`, spec.policy is made by the registry.
Result<RunResult> run_arrivals(const Scenario& scenario, const RunSpec& spec,
                               std::span<const uint32_t> arrivals, Rng& rng,
                               const PolicyMaker& make = {});

}  // namespace greensched::sim
