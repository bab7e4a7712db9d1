#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

// Base 25 * (8000 - free GPU milli) / 8000, plus 75 if the node hosts only pods of the pod's
// GPU tag, 50 if that tag among others, 25 if no GPU pod at all, 0 if only other tags.
// CPU-only pods score 0 everywhere.
class GpuClusteringPolicy final : public Policy {
 public:
  std::string_view name() const override { return "clustering"; }
  bool scores_by_class() const override { return true; }
  uint32_t class_key_parts() const override { return kKeyPodsByTag; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng&) override {
    const int tag = gpu_tag(pod);
    for (Candidate& c : candidates) {
      if (tag == 0) {
        c.raw = 0;
        continue;
      }
      const NodeState& s = cluster.state(c.node);
      int tags_present = 0;
      for (int t = 1; t < kGpuTagCount; ++t) tags_present += s.pods_by_tag[t] > 0;
      const int64_t base = 25 * (kMaxSpecGpuMilli - s.gpu_free_total_milli) / kMaxSpecGpuMilli;
      int64_t bonus = 0;
      if (s.pods_by_tag[tag] > 0) {
        bonus = tags_present == 1 ? 75 : 50;
      } else if (tags_present == 0) {
        bonus = 25;
      }
      c.raw = base + bonus;
    }
  }
};

}  // namespace

std::unique_ptr<Policy> make_gpu_clustering_policy() {
  return std::make_unique<GpuClusteringPolicy>();
}

}  // namespace greensched::policy
