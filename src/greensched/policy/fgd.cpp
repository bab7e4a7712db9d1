#include <algorithm>
#include <cmath>

#include "greensched/policy/gpu_select.hpp"
#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

// FGD (Weng et al., ATC'23): score = int(100 * sigmoid((F_n before - F_n after) / 1000)), no
// normalisation. A sharing pod tries every GPU that fits and keeps the best (first index among
// equal integer scores); other pods take GPUs by the whole-GPU rule.
//
// The score depends only on the node's interned state and the pod's shape, so it is memoised
// per (state, shape): identical nodes are scored once, and a node is rescored only after it
// changes.
class FgdPolicy final : public Policy {
 public:
  FgdPolicy(std::shared_ptr<frag::FragmentationModel> model, uint32_t shape_count)
      : model_(std::move(model)), stride_(std::max<uint32_t>(shape_count, 1)) {}

  std::string_view name() const override { return "fgd"; }
  bool scores_by_class() const override { return true; }
  uint32_t class_key_parts() const override { return 0; }
  bool raw_score_by_shape(const PodSpec& pod) const override { return pod.shape < stride_; }
  bool best_is_highest_raw() const override { return true; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng&) override {
    for (Candidate& c : candidates) {
      const frag::StateId id = model_->node_state(cluster, c.node);
      if (pod.shape >= stride_) {
        c.raw = score_state(model_->state(id), pod);
        continue;
      }
      const std::size_t slot = static_cast<std::size_t>(id) * stride_ + pod.shape;
      if (slot >= memo_.size()) memo_.resize((model_->state_count() + 64) * stride_, kUnknown);
      if (memo_[slot] == kUnknown)
        memo_[slot] = static_cast<int8_t>(score_state(model_->state(id), pod));
      c.raw = memo_[slot];
    }
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    if (!pod.shares_gpu()) return Policy::select_gpus(cluster, node, pod, rng);
    const frag::NodeFragState& st = model_->state(model_->node_state(cluster, node));
    const NodeState& s = cluster.state(node);
    int best = -1;
    int64_t best_score = -1;
    for (int g = 0; g < cluster.spec(node).gpu_count; ++g) {
      const int32_t f = s.gpu_free_milli[g];
      if (f < pod.gpu_milli) continue;
      const int64_t sc = score_share_on(st, f, pod);
      if (sc > best_score) {
        best_score = sc;
        best = g;
      }
    }
    return best < 0 ? 0 : GpuMask{1} << best;
  }

 private:
  static constexpr int8_t kUnknown = -1;

  int64_t to_score(int64_t before_scaled, int64_t after_scaled) const {
    const double delta = model_->to_gpu_milli(before_scaled - after_scaled);
    const double sigmoid = 1.0 / (1.0 + std::exp(-delta / 1000.0));
    return static_cast<int64_t>(sigmoid * 100.0);
  }

  // Score of placing sharing pod `pod` on a GPU that has `free` milli left, in state `st`.
  int64_t score_share_on(const frag::NodeFragState& st, int32_t free, const PodSpec& pod) const {
    auto gpus = st.gpu_free_sorted;
    *std::find(gpus.begin(), gpus.begin() + st.gpu_count, free) -= pod.gpu_milli;
    const int64_t after =
        model_->scaled_frag(st.model, st.gpu_count, st.cpu_free_milli - pod.cpu_milli, gpus.data());
    return to_score(st.frag_scaled, after);
  }

  int64_t score_state(const frag::NodeFragState& st, const PodSpec& pod) const {
    if (pod.shares_gpu()) {
      int64_t best = -1;
      for (int g = 0; g < st.gpu_count; ++g) {
        const int32_t f = st.gpu_free_sorted[g];
        if (f < pod.gpu_milli) break;  // sorted descending
        if (g > 0 && f == st.gpu_free_sorted[g - 1]) continue;
        best = std::max(best, score_share_on(st, f, pod));
      }
      return best;
    }
    auto gpus = st.gpu_free_sorted;
    if (pod.needs_gpu()) {
      // Whole free GPUs sort first; the pod empties the first num_gpu of them.
      for (int g = 0; g < pod.num_gpu; ++g) gpus[g] = 0;
    }
    const int64_t after =
        model_->scaled_frag(st.model, st.gpu_count, st.cpu_free_milli - pod.cpu_milli, gpus.data());
    return to_score(st.frag_scaled, after);
  }

  std::shared_ptr<frag::FragmentationModel> model_;
  uint32_t stride_;
  std::vector<int8_t> memo_;
};

}  // namespace

std::unique_ptr<Policy> make_fgd_policy(std::shared_ptr<frag::FragmentationModel> model,
                                        uint32_t shape_count) {
  return std::make_unique<FgdPolicy>(std::move(model), shape_count);
}

}  // namespace greensched::policy
