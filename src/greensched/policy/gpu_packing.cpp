#include <algorithm>
#include <array>
#include <numeric>

#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

// From high to low: (1) the pod fits on partly used GPUs: 100 - (sum over the GPUs it would
// use of free% ) / 10, at least 50; (2) it must take fully free GPUs of a used node:
// 50 - (fully free GPUs it takes), at least 33; (3) the node is entirely free:
// max(33 - free GPUs, free GPUs). CPU-only pods score 0.
class GpuPackingPolicy final : public Policy {
 public:
  std::string_view name() const override { return "packing"; }
  bool scores_by_class() const override { return true; }
  uint32_t class_key_parts() const override { return 0; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng&) override {
    for (Candidate& c : candidates) c.raw = pod.needs_gpu() ? score_node(cluster, c.node, pod) : 0;
  }

 private:
  static int64_t score_node(const Cluster& cluster, NodeIndex node, const PodSpec& pod) {
    const NodeSpec& spec = cluster.spec(node);
    const NodeState& s = cluster.state(node);
    if (s.whole_free_gpus == spec.gpu_count) {
      return std::max<int64_t>(33 - s.whole_free_gpus, s.whole_free_gpus);
    }
    // GPUs by free share, least free first (stable in index order).
    std::array<int, kMaxGpusPerNode> order{};
    std::iota(order.begin(), order.begin() + spec.gpu_count, 0);
    std::stable_sort(order.begin(), order.begin() + spec.gpu_count,
                     [&](int a, int b) { return s.gpu_free_milli[a] < s.gpu_free_milli[b]; });
    int needed = pod.num_gpu;
    int whole_used = 0;
    int64_t free_pct_on_used = 0;
    for (int i = 0; i < spec.gpu_count && needed > 0; ++i) {
      const int32_t f = s.gpu_free_milli[order[i]];
      if (f >= pod.gpu_milli) {
        --needed;
        whole_used += f == kGpuMilli;
        free_pct_on_used += int64_t{f} * 100 / kGpuMilli;
      }
    }
    if (whole_used > 0) return std::max<int64_t>(50 - whole_used, 33);
    return std::max<int64_t>(100 - free_pct_on_used / 10, 50);
  }
};

}  // namespace

std::unique_ptr<Policy> make_gpu_packing_policy() {
  return std::make_unique<GpuPackingPolicy>();
}

}  // namespace greensched::policy
