#include "greensched/trace/inflation.hpp"

#include <numeric>

namespace greensched::trace {

std::vector<uint32_t> inflate(std::span<const PodSpec> pods, double tune, int64_t cluster_gpu_milli,
                              Rng& rng) {
  std::vector<uint32_t> order(pods.size());
  std::iota(order.begin(), order.end(), 0U);
  rng.shuffle(std::span<uint32_t>(order));
  if (pods.empty()) return order;

  int64_t total = 0;
  bool any_gpu = false;
  for (const PodSpec& p : pods) {
    total += p.total_gpu_milli();
    any_gpu = any_gpu || p.needs_gpu();
  }
  if (!any_gpu) return order;  // nothing would ever move the total towards the target
  const double target = tune * static_cast<double>(cluster_gpu_milli);
  while (true) {
    const auto i = static_cast<uint32_t>(rng.uniform(pods.size()));
    if (static_cast<double>(total + pods[i].gpu_milli) > target) break;
    order.push_back(i);
    total += pods[i].total_gpu_milli();
  }
  return order;
}

}  // namespace greensched::trace
