// The published simulator's workload tuning ("inflation"): shuffle the trace's pods, then keep
// appending pods drawn uniformly from the trace until the arrived GPU request would exceed
// tune x cluster GPU capacity. Pods only arrive; none depart.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/rng.hpp"

namespace greensched::trace {

// Returns indices into `pods` in arrival order. Stops at the first drawn pod whose *per-GPU*
// milli would take the total past the target (as the reference does), discarding it.
std::vector<uint32_t> inflate(std::span<const PodSpec> pods, double tune, int64_t cluster_gpu_milli,
                              Rng& rng);

}  // namespace greensched::trace
