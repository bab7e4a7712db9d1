// The filter phase: can a node host a pod at all? Returns the first reason it cannot, in the
// order the kube-scheduler checks (resources fit, then the GPU-share plugin).
#pragma once

#include <cstdint>
#include <string_view>

#include "greensched/core/cluster.hpp"

namespace greensched::policy {

enum class FilterReason : uint8_t {
  kFits,
  kNodeOffline,
  kInsufficientCpu,
  kInsufficientMemory,
  kNoGpu,                  // the pod needs a GPU, the node has none
  kGpuModelNotAllowed,     // node's model not in the pod's gpu_spec
  kInsufficientGpuShare,   // no single GPU has the share a sharing pod asks for
  kInsufficientWholeGpus,  // fewer fully free GPUs than the pod asks for
};
inline constexpr int kFilterReasonCount = 8;

std::string_view describe(FilterReason reason);

inline FilterReason filter_node(const NodeSpec& spec, const NodeState& s, const PodSpec& pod) {
  if (!s.online) return FilterReason::kNodeOffline;
  if (pod.cpu_milli > s.cpu_free_milli) return FilterReason::kInsufficientCpu;
  if (pod.memory_mib > s.memory_free_mib) return FilterReason::kInsufficientMemory;
  if (!pod.needs_gpu()) return FilterReason::kFits;
  if (spec.gpu_count == 0) return FilterReason::kNoGpu;
  if (!model_allowed(pod.gpu_spec, spec.model)) return FilterReason::kGpuModelNotAllowed;
  if (pod.gpu_milli < kGpuMilli) {
    return s.max_gpu_free_milli >= pod.gpu_milli ? FilterReason::kFits
                                                 : FilterReason::kInsufficientGpuShare;
  }
  return s.whole_free_gpus >= pod.num_gpu ? FilterReason::kFits
                                          : FilterReason::kInsufficientWholeGpus;
}

// filter_node(...) == kFits, from the cluster's packed row of the node: the scheduler's pass
// over every node. Written without branches on the node (whether a node fits is unpredictable,
// so branches would mispredict on every other node); the pod's kind is loop-invariant.
inline bool fits(const FitRow& r, const PodSpec& pod) {
  bool ok = r.online & (pod.cpu_milli <= r.cpu_free_milli) & (pod.memory_mib <= r.memory_free_mib);
  if (!pod.needs_gpu()) return ok;
  // Models are ids below 64; a CPU-only node (model kNoGpuModel) has no GPU and fails anyway.
  const bool model_ok = pod.gpu_spec == 0 || ((pod.gpu_spec >> (r.model & 63U)) & 1U) != 0;
  const bool room = pod.gpu_milli < kGpuMilli ? r.max_gpu_free_milli >= pod.gpu_milli
                                              : r.whole_free_gpus >= pod.num_gpu;
  return ok & (r.gpu_count != 0) & model_ok & room;
}

}  // namespace greensched::policy
