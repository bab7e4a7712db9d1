#include "greensched/learn/learned_policy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "greensched/learn/features.hpp"
#include "greensched/learn/score_memo.hpp"
#include "greensched/policy/power_delta.hpp"

namespace greensched::learn {
namespace {

class LearnedPolicy final : public policy::Policy {
 public:
  LearnedPolicy(LinearModel model, std::string name, const policy::PolicyContext& context)
      : model_(std::move(model)),
        name_(std::move(name)),
        features_(context.frag, context.shape_count, context.power),
        inverse_resolution_(1.0 / model_.resolution),
        power_ids_(policy::power_profile_ids(*context.power)) {}

  std::string_view name() const override { return name_; }
  // The score is a function of the memo's key (FeatureExtractor::option_key): the node's
  // fragmentation state, spec and power figures, whether it is empty, its free memory and CPU.
  bool scores_by_class() const override { return true; }
  uint32_t class_key_parts() const override { return kKeyMemory | kKeyPods | kKeyCapacity; }
  uint32_t node_class_tag(NodeIndex node) const override { return power_ids_[node]; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<policy::Candidate> candidates,
             Rng&) override {
    begin(cluster, pod);
    // Equal nodes score alike: each distinct node key is scored once per pod.
    memo_.begin_pass(candidates.size());
    for (policy::Candidate& c : candidates) {
      c.raw = memo_.get(features_.option_key(cluster, c.node),
                        [&] { return best_option(cluster, c.node, pod); });
    }
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    if (!pod.shares_gpu()) return Policy::select_gpus(cluster, node, pod, rng);
    begin(cluster, pod);
    // As FGD does: the first GPU in index order whose option has the best score.
    const auto& node_options = features_.options(cluster, node, pod);
    const double base = dot(node_options.base);
    std::array<int64_t, kMaxGpusPerNode> raw{};
    int64_t best = std::numeric_limits<int64_t>::min();
    const auto& options = node_options.options;
    for (std::size_t i = 0; i < options.size(); ++i) {
      raw[i] = to_raw(FeatureExtractor::NodeOptions::score(weights_, base, options[i]));
      best = std::max(best, raw[i]);
    }
    const NodeState& s = cluster.state(node);
    for (int g = 0; g < cluster.spec(node).gpu_count; ++g) {
      for (std::size_t i = 0; i < options.size(); ++i) {
        if (options[i].gpu_free == s.gpu_free_milli[g] && raw[i] == best) return GpuMask{1} << g;
      }
    }
    return 0;
  }

 private:
  void begin(const Cluster& cluster, const PodSpec& pod) {
    features_.begin(cluster, pod);
    weights_ = model_.effective(pod_class(pod), features_.load());
  }

  double dot(const FeatureVector& x) const {
    double s = 0;
    for (int f = 0; f < kFeatureCount; ++f) s += weights_[f] * x[f];
    return s;
  }

  // Integer scores, as every policy returns: the score in multiples of the model's
  // resolution, so nodes within it tie and go to the reference tie order.
  int64_t to_raw(double s) const {
    s = std::clamp(s * inverse_resolution_, -1e15, 1e15);
    return static_cast<int64_t>(s >= 0 ? s + 0.5 : s - 0.5);
  }

  int64_t best_option(const Cluster& cluster, NodeIndex node, const PodSpec& pod) {
    const auto& node_options = features_.options(cluster, node, pod);
    const double base = dot(node_options.base);
    int64_t best = std::numeric_limits<int64_t>::min();
    for (const FeatureExtractor::Option& o : node_options.options) {
      best = std::max(best, to_raw(FeatureExtractor::NodeOptions::score(weights_, base, o)));
    }
    return best;
  }

  LinearModel model_;
  std::string name_;
  FeatureExtractor features_;
  double inverse_resolution_;
  FeatureVector weights_{};
  ScoreMemo memo_;
  std::vector<uint32_t> power_ids_;
};

}  // namespace

Result<std::unique_ptr<policy::Policy>> make_learned_policy(LinearModel model, std::string name,
                                                            const policy::PolicyContext& context) {
  if (!context.frag) return Error{"learned policy needs a target workload (fragmentation model)"};
  if (!context.power) return Error{"learned policy needs the nodes' power figures"};
  return std::unique_ptr<policy::Policy>(
      std::make_unique<LearnedPolicy>(std::move(model), std::move(name), context));
}

}  // namespace greensched::learn
