#include "greensched/policy/gpu_select.hpp"
#include "greensched/policy/policies.hpp"
#include "greensched/policy/power_delta.hpp"

namespace greensched::policy {
namespace {

// PWR (Lettich et al., CCGrid'25): raw = int(node power before - node power after placing the
// pod), <= 0 watts, with the pod's best GPU (power_delta.hpp). Min-max normalised over the
// feasible nodes; all equal gives all 100.
class PwrPolicy final : public Policy {
 public:
  explicit PwrPolicy(std::shared_ptr<const std::vector<power::NodePower>> power)
      : power_(std::move(power)), power_ids_(power_profile_ids(*power_)) {}

  std::string_view name() const override { return "pwr"; }
  bool reads_gpu_power_rule() const override { return true; }
  bool scores_by_class() const override { return true; }
  uint32_t class_key_parts() const override { return kKeyCapacity; }
  uint32_t node_class_tag(NodeIndex node) const override { return power_ids_[node]; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng&) override {
    for (Candidate& c : candidates) c.raw = raw_on(cluster, c.node, pod);
  }

  void normalize(std::span<Candidate> candidates) const override {
    normalize_min_max(candidates, 100);
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    const GpuMask best =
        pod.shares_gpu() ? least_power_increase(cluster, node, pod, (*power_)[node]).gpus : 0;
    return best != 0 ? best : Policy::select_gpus(cluster, node, pod, rng);
  }

 private:
  // Same arithmetic as before - after on whole-node power (all terms are whole watts).
  int64_t raw_on(const Cluster& cluster, NodeIndex node, const PodSpec& pod) const {
    return static_cast<int64_t>(-least_power_increase(cluster, node, pod, (*power_)[node]).watts);
  }

  std::shared_ptr<const std::vector<power::NodePower>> power_;
  std::vector<uint32_t> power_ids_;
};

}  // namespace

std::unique_ptr<Policy> make_pwr_policy(
    std::shared_ptr<const std::vector<power::NodePower>> power) {
  return std::make_unique<PwrPolicy>(std::move(power));
}

}  // namespace greensched::policy
