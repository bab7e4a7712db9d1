// A node's fixed description: what it has, not what is in use (that is NodeState in cluster.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "greensched/core/gpu_model.hpp"

namespace greensched {

struct NodeSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu_count = 0;
  GpuModelId model = kNoGpuModel;
};

}  // namespace greensched
