// Units and limits shared by every layer. Units are in the names: cpu_milli (1000 = one core),
// memory_mib, gpu_milli (1000 = one whole GPU).
#pragma once

#include <cstdint>

namespace greensched {

inline constexpr int32_t kGpuMilli = 1000;           // one whole GPU
inline constexpr int kMaxGpusPerNode = 16;           // GpuMask below has one bit per GPU index
inline constexpr int64_t kMaxSpecCpuMilli = 128000;  // normalisers used by the published scores
inline constexpr int64_t kMaxSpecGpuMilli = 8000;

using NodeIndex = int32_t;
using PodId = uint32_t;
using GpuMask = uint32_t;  // bit i set = GPU index i

inline int gpu_mask_count(GpuMask mask) {
  return __builtin_popcount(mask);
}

}  // namespace greensched
