// The target workload M of the FGD paper: the task shapes of a trace with their popularity,
// keeping the most popular shapes until they cover a share (95 %) of all tasks. A shape is
// (cpu_milli, num_gpu, gpu_milli, gpu_spec); memory is not part of it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/pod.hpp"

namespace greensched::frag {

struct TargetShape {
  int64_t cpu_milli = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;
  GpuModelSet gpu_spec = 0;
  int64_t count = 0;  // pods of this shape in the trace
};

struct TargetWorkload {
  std::vector<TargetShape> shapes;  // most popular first
  int64_t covered_pods = 0;         // sum of counts of the kept shapes (popularity denominator)
  int64_t trace_pods = 0;
  std::size_t distinct_shapes = 0;  // before the cut

  double popularity(std::size_t i) const {
    return static_cast<double>(shapes[i].count) / static_cast<double>(covered_pods);
  }
};

// Most popular first (ties: smaller cpu, num_gpu, gpu_milli, spec first), adding shapes until
// the kept ones cover at least `coverage` of the pods.
TargetWorkload build_target_workload(std::span<const PodSpec> pods, double coverage = 0.95);

}  // namespace greensched::frag
