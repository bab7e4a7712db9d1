#include "greensched/policy/gpu_select.hpp"
#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

class RandomPolicy final : public Policy {
 public:
  std::string_view name() const override { return "random"; }

  void score(const Cluster&, const PodSpec&, std::span<Candidate> candidates, Rng& rng) override {
    const uint64_t chosen = rng.uniform(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) candidates[i].raw = i == chosen ? 100 : 0;
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    if (pod.shares_gpu()) {
      return random_fitting_gpu(cluster.spec(node), cluster.state(node), pod.gpu_milli, rng);
    }
    return Policy::select_gpus(cluster, node, pod, rng);
  }
};

}  // namespace

std::unique_ptr<Policy> make_random_policy() {
  return std::make_unique<RandomPolicy>();
}

}  // namespace greensched::policy
