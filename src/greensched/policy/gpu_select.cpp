#include "greensched/policy/gpu_select.hpp"

namespace greensched::policy {

GpuMask first_whole_free_gpus(const NodeSpec& spec, const NodeState& s, int count) {
  GpuMask mask = 0;
  int taken = 0;
  for (int g = 0; g < spec.gpu_count && taken < count; ++g) {
    if (s.gpu_free_milli[g] == kGpuMilli) {
      mask |= GpuMask{1} << g;
      ++taken;
    }
  }
  return taken == count ? mask : 0;
}

GpuMask tightest_fitting_gpu(const NodeSpec& spec, const NodeState& s, int32_t milli) {
  int best = -1;
  for (int g = 0; g < spec.gpu_count; ++g) {
    const int32_t f = s.gpu_free_milli[g];
    if (f >= milli && (best < 0 || f < s.gpu_free_milli[best])) best = g;
  }
  return best < 0 ? 0 : GpuMask{1} << best;
}

GpuMask random_fitting_gpu(const NodeSpec& spec, const NodeState& s, int32_t milli, Rng& rng) {
  int chosen = -1;
  uint64_t seen = 0;
  for (int g = 0; g < spec.gpu_count; ++g) {
    if (s.gpu_free_milli[g] >= milli && rng.uniform(++seen) == 0) chosen = g;
  }
  return chosen < 0 ? 0 : GpuMask{1} << chosen;
}

}  // namespace greensched::policy
