// Predicts a job's duration from its requested shape and QoS with empirical quantiles of the
// jobs seen before, per group, falling back to coarser groups where a group has too little
// history (fewer than `min_support` jobs):
//   0 shape+memory+QoS: (cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos)
//   1 shape+QoS:        (cpu_milli, num_gpu, gpu_milli, gpu_spec, qos)
//   2 kind+QoS:         (CPU-only / shared / one GPU / multi-GPU, qos)
//   3 QoS
//   4 all jobs
//   5 prior (no history at all): `prior_s`
// Durations are heavy-tailed (seconds to months), so quantiles, which need no distribution
// and give a p50 and a p90 directly, suit them better than a mean or a regression on them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "greensched/core/pod.hpp"

namespace greensched::trace {

struct DurationPrediction {
  double p50_s = 0;
  double p90_s = 0;
  int level = 0;        // the group that answered (see above)
  int64_t support = 0;  // jobs of that group in the history
};

class DurationPredictor {
 public:
  static constexpr int kGroupLevels = 5;  // levels 0-4; 5 is the prior
  explicit DurationPredictor(int64_t min_support = 5, double prior_s = 3600.0);

  // Adds a finished job to the history.
  void observe(const PodSpec& pod, double duration_s);
  DurationPrediction predict(const PodSpec& pod) const;
  int64_t history_size() const { return history_; }
  static const char* level_name(int level);

 private:
  using Key = std::array<int64_t, 6>;
  static Key key(const PodSpec& pod, int level);

  int64_t min_support_;
  double prior_s_;
  int64_t history_ = 0;
  std::array<std::map<Key, std::vector<double>>, kGroupLevels> groups_;  // sorted durations
};

// Duration of a pod in the trace (deletion - creation, at least 1 s), or -1 without times.
double trace_duration_s(const PodSpec& pod);

// For each pod, the p50 duration predicted online: from the pods that had finished by its
// creation time (deletion_time <= creation_time), as a scheduler would know them. Pods
// without times get the prior. Returns seconds, at least 1.
std::vector<int64_t> predict_durations_online(std::span<const PodSpec> pods,
                                              int64_t min_support = 5);

}  // namespace greensched::trace
