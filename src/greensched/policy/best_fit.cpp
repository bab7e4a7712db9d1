#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

// raw = int(100 * (1 - (0.5 (c - rc)/Cmax + 0.5 (g - rg)/Gmax))): the less CPU and GPU the
// node has left after placement, the higher; then integer min-max normalisation.
class BestFitPolicy final : public Policy {
 public:
  std::string_view name() const override { return "bestfit"; }
  bool scores_by_class() const override { return true; }
  uint32_t class_key_parts() const override { return 0; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng&) override {
    for (Candidate& c : candidates) {
      const NodeState& s = cluster.state(c.node);
      const double left =
          static_cast<double>(s.cpu_free_milli - pod.cpu_milli) / kMaxSpecCpuMilli * 0.5 +
          static_cast<double>(s.gpu_free_total_milli - pod.total_gpu_milli()) / kMaxSpecGpuMilli *
              0.5;
      c.raw = static_cast<int64_t>((1.0 - left) * 100.0);
    }
  }

  void normalize(std::span<Candidate> candidates) const override { normalize_min_max(candidates); }
};

}  // namespace

std::unique_ptr<Policy> make_best_fit_policy() {
  return std::make_unique<BestFitPolicy>();
}

}  // namespace greensched::policy
