// One simulation run of the published protocol: inflate the trace to `tune` x cluster GPU
// capacity with a seeded generator, let the pods arrive one by one (none depart), schedule
// each with the policy, and record allocation and fragmentation per arrival event.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/sim/metrics.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::sim {

struct RunSpec {
  std::string policy;
  uint64_t seed = 42;
  double tune = 1.3;
};

struct RunResult {
  RunSpec spec;
  int64_t pods_arrived = 0;
  int64_t pods_scheduled = 0;
  int64_t pods_failed = 0;
  int64_t arrived_gpu_milli = 0;
  int64_t allocated_gpu_milli = 0;  // at the end of the run
  int64_t cluster_gpu_milli = 0;
  std::vector<CurvePoint> curve;
  double wall_seconds = 0;
};

// `target` is the FGD target workload of the trace before tuning.
Result<RunResult> run_inflation(const trace::Workload& workload, const frag::TargetWorkload& target,
                                const RunSpec& spec);

}  // namespace greensched::sim
