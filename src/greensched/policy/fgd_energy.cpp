#include <algorithm>

#include "greensched/policy/policies.hpp"
#include "greensched/policy/power_delta.hpp"

namespace greensched::policy {
namespace {

// Energy-aware FGD: FGD's score decides, and only among nodes FGD scores equal (its integer
// sigmoid ties often) does energy choose, in this order:
//   1. a node already running pods over an empty one, so empty nodes stay empty and can sleep;
//   2. the smallest power increase (power_delta.hpp): a share on a GPU already drawing power,
//      a socket already busy, the GPU model with the least watts per GPU;
//   3. BestFit's score (least CPU and GPU left), which keeps FGD's allocation where a fixed
//      node order would pack like first-fit.
// The terms are packed into one integer, most significant first; no normalisation, so a mix
// sees the same order. GPUs inside the node are FGD's choice.
class FgdEnergyPolicy final : public Policy {
 public:
  FgdEnergyPolicy(std::unique_ptr<Policy> fgd, std::unique_ptr<Policy> best_fit,
                  std::shared_ptr<const std::vector<power::NodePower>> power)
      : fgd_(std::move(fgd)),
        best_fit_(std::move(best_fit)),
        power_(std::move(power)),
        power_ids_(power_profile_ids(*power_)) {}

  std::string_view name() const override { return "fgd-energy"; }
  bool reads_gpu_power_rule() const override { return true; }
  bool scores_by_class() const override { return true; }
  uint32_t class_key_parts() const override { return kKeyPods | kKeyCapacity; }
  uint32_t node_class_tag(NodeIndex node) const override { return power_ids_[node]; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng& rng) override {
    fgd_->score(cluster, pod, candidates, rng);
    fgd_raw_.resize(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) fgd_raw_[i] = candidates[i].raw;
    best_fit_->score(cluster, pod, candidates, rng);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      Candidate& c = candidates[i];
      const bool in_use = cluster.state(c.node).pods > 0;
      const double watts = least_power_increase(cluster, c.node, pod, (*power_)[c.node]).watts;
      c.raw = pack(fgd_raw_[i], in_use, watts, c.raw);
    }
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    return fgd_->select_gpus(cluster, node, pod, rng);
  }

  // fgd (0..100) | in use (1 bit) | watts saved below kWattsSpan (20 bits) | bestfit (7 bits).
  static int64_t pack(int64_t fgd, bool in_use, double watts, int64_t best_fit) {
    constexpr int64_t kWattsSpan = int64_t{1} << 20;
    const int64_t power =
        kWattsSpan - 1 - std::clamp<int64_t>(static_cast<int64_t>(watts), 0, kWattsSpan - 1);
    return (((fgd * 2 + (in_use ? 1 : 0)) << 20 | power) << 7) |
           std::clamp<int64_t>(best_fit, 0, 127);
  }

 private:
  std::unique_ptr<Policy> fgd_;
  std::unique_ptr<Policy> best_fit_;
  std::shared_ptr<const std::vector<power::NodePower>> power_;
  std::vector<uint32_t> power_ids_;
  std::vector<int64_t> fgd_raw_;
};

}  // namespace

std::unique_ptr<Policy> make_fgd_energy_policy(
    std::shared_ptr<frag::FragmentationModel> model, uint32_t shape_count,
    std::shared_ptr<const std::vector<power::NodePower>> power) {
  return std::make_unique<FgdEnergyPolicy>(make_fgd_policy(std::move(model), shape_count),
                                           make_best_fit_policy(), std::move(power));
}

}  // namespace greensched::policy
