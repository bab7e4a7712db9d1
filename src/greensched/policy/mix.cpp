#include <algorithm>

#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

// kube-scheduler style weighted sum: each member scores and normalises on its own, and the
// node's total is sum(weight x normalised score). The total is not normalised again.
class MixPolicy final : public Policy {
 public:
  MixPolicy(std::string name, std::vector<MixMember> members, std::size_t gpu_select)
      : name_(std::move(name)), members_(std::move(members)), gpu_select_(gpu_select) {}

  std::string_view name() const override { return name_; }
  bool reads_gpu_power_rule() const override {
    for (const MixMember& m : members_) {
      if (m.policy->reads_gpu_power_rule()) return true;
    }
    return false;
  }

  bool scores_by_class() const override {
    for (const MixMember& m : members_) {
      if (!m.policy->scores_by_class()) return false;
    }
    return true;
  }
  uint32_t class_key_parts() const override {
    uint32_t parts = 0;
    for (const MixMember& m : members_) parts |= m.policy->class_key_parts();
    return parts;
  }
  // The members' tags all come from the run's one power model (or are 0), so they are equal
  // wherever they are not 0: the largest is exact.
  uint32_t node_class_tag(NodeIndex node) const override {
    uint32_t tag = 0;
    for (const MixMember& m : members_) tag = std::max(tag, m.policy->node_class_tag(node));
    return tag;
  }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng& rng) override {
    for (Candidate& c : candidates) c.raw = 0;
    if (capture_) captured_.assign(members_.size(), {});
    for (std::size_t k = 0; k < members_.size(); ++k) {
      MixMember& m = members_[k];
      scratch_.assign(candidates.begin(), candidates.end());
      m.policy->score(cluster, pod, scratch_, rng);
      m.policy->normalize(scratch_);
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        candidates[i].raw += m.weight * scratch_[i].score;
      }
      if (capture_) captured_[k] = scratch_;
    }
  }

  void capture_terms(bool on) override { capture_ = on; }

  std::vector<TermScore> terms(std::span<const Candidate> candidates,
                               std::size_t i) const override {
    if (!capture_ || captured_.size() != members_.size()) return Policy::terms(candidates, i);
    std::vector<TermScore> out;
    for (std::size_t k = 0; k < members_.size(); ++k) {
      out.push_back(TermScore{std::string(members_[k].policy->name()), members_[k].weight,
                              captured_[k][i].raw, captured_[k][i].score});
    }
    return out;
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    return members_[gpu_select_].policy->select_gpus(cluster, node, pod, rng);
  }

 private:
  std::string name_;
  std::vector<MixMember> members_;
  std::size_t gpu_select_;
  std::vector<Candidate> scratch_;
  bool capture_ = false;
  std::vector<std::vector<Candidate>> captured_;  // per member, for explanations
};

}  // namespace

std::unique_ptr<Policy> make_mix_policy(std::string name, std::vector<MixMember> members,
                                        std::size_t gpu_select) {
  return std::make_unique<MixPolicy>(std::move(name), std::move(members), gpu_select);
}

}  // namespace greensched::policy
