#include "greensched/policy/policy.hpp"

#include <algorithm>
#include <cstdint>

#include "greensched/policy/gpu_select.hpp"

namespace greensched::policy {

void Policy::normalize(std::span<Candidate> candidates) const {
  for (Candidate& c : candidates) c.score = c.raw;
}

GpuMask Policy::select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod, Rng&) {
  if (!pod.needs_gpu()) return 0;
  const NodeSpec& spec = cluster.spec(node);
  const NodeState& s = cluster.state(node);
  if (pod.shares_gpu()) return tightest_fitting_gpu(spec, s, pod.gpu_milli);
  return first_whole_free_gpus(spec, s, pod.num_gpu);
}

std::vector<TermScore> Policy::terms(std::span<const Candidate> candidates, std::size_t i) const {
  return {TermScore{std::string(name()), 1, candidates[i].raw, candidates[i].score}};
}

void normalize_min_max(std::span<Candidate> candidates, int64_t all_equal) {
  if (candidates.empty()) return;
  int64_t low = candidates.front().raw;
  int64_t high = low;
  for (const Candidate& c : candidates) {
    low = std::min(low, c.raw);
    high = std::max(high, c.raw);
  }
  if (high == low) {
    for (Candidate& c : candidates) c.score = all_equal;
    return;
  }
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  if (range <= UINT32_MAX / 100) {
    // 32-bit division (the usual case, a few times faster): every (raw - low) * 100 fits.
    const auto range32 = static_cast<uint32_t>(range);
    for (Candidate& c : candidates) {
      c.score = static_cast<uint32_t>(static_cast<uint64_t>(c.raw - low) * 100) / range32;
    }
    return;
  }
  for (Candidate& c : candidates) c.score = (c.raw - low) * 100 / (high - low);
}

}  // namespace greensched::policy
