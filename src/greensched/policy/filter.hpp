// The filter phase: can a node host a pod at all? Returns the first reason it cannot, in the
// order the kube-scheduler checks (resources fit, then the GPU-share plugin).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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

// What the filter reads of each row (a node, or a node class), one 32-bit column per field as
// Cluster::FitColumns: saturated at INT32_MAX, -1 CPU offline, -1 GPU room without GPUs.
struct FitView {
  const int32_t* cpu_free_milli;
  const int32_t* memory_free_mib;
  const int32_t* max_gpu_free_milli;
  const int32_t* whole_free_gpus;
  const GpuModelId* model;
  std::size_t rows;
};

// The rows `pod` fits (its CPU and memory within the columns' range), in order, written to the
// front of `out` (room for every row); returns how many. Compared in blocks without branches
// (whether a row fits is unpredictable, so branches would mispredict on every other row), then
// compacted.
std::size_t fitting_rows(const FitView& view, const PodSpec& pod, int32_t* out);

// Every node where filter_node(...) == kFits, in index order, written to the front of `out`
// (room for every node); returns how many. The scheduler's pass over the whole cluster:
// fitting_rows over the cluster's fit columns.
std::size_t fitting_nodes(const Cluster& cluster, const PodSpec& pod, std::span<NodeIndex> out);

}  // namespace greensched::policy
