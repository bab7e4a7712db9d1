// A pod request for hand-made test cases: name, CPU milli, GPUs and GPU milli each, 1 GiB of
// memory, no times and no GPU model constraint.
#pragma once

#include <cstdint>

#include "greensched/core/pod.hpp"

namespace greensched::testing {

inline PodSpec test_pod(const char* name, int64_t cpu_milli, int num_gpu, int32_t gpu_milli) {
  PodSpec p;
  p.name = name;
  p.cpu_milli = cpu_milli;
  p.memory_mib = 1024;
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  return p;
}

}  // namespace greensched::testing
