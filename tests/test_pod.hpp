// A pod request for hand-made test cases: name, CPU milli, GPUs and GPU milli each, the GPU
// models allowed (0: any), memory (1 GiB unless given), no times.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "greensched/core/pod.hpp"

namespace greensched::testing {

inline PodSpec test_pod(std::string name, int64_t cpu_milli, int num_gpu, int32_t gpu_milli,
                        GpuModelSet gpu_spec = 0, int64_t memory_mib = 1024) {
  PodSpec p;
  p.name = std::move(name);
  p.cpu_milli = cpu_milli;
  p.memory_mib = memory_mib;
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  p.gpu_spec = gpu_spec;
  return p;
}

}  // namespace greensched::testing
