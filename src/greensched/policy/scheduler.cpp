#include "greensched/policy/scheduler.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string_view>

namespace greensched::policy {
namespace {
// Shapes above this are scored every time (a workload has a few hundred).
constexpr uint32_t kMaxKeptShapes = 1 << 16;
}  // namespace

NodeClassMode default_node_class_mode() {
  static const NodeClassMode mode = [] {
    const char* v = std::getenv("GREENSCHED_NODE_CLASSES");
    const std::string_view s = v != nullptr ? v : "auto";
    if (s == "on") return NodeClassMode::kOn;
    if (s == "off") return NodeClassMode::kOff;
    return NodeClassMode::kAuto;
  }();
  return mode;
}

bool Scheduler::use_classes(const Cluster& cluster) const {
  if (class_mode_ == NodeClassMode::kOff || !policy_.scores_by_class()) return false;
  return class_mode_ == NodeClassMode::kOn || cluster.size() >= kNodeClassesFrom;
}

// The pass below over classes instead of nodes: filter each class on its columns (free memory
// as the largest of its members), score one member per feasible class, and take, among the
// classes with the best score, the first member in tie order that has the memory.
Decision Scheduler::schedule_classes(const Cluster& cluster, const PodSpec& pod, Rng& rng) {
  if (!classes_) classes_ = std::make_unique<NodeClasses>(policy_, tie_rank_);
  classes_->sync(cluster);
  if (shape_best_on_ && pod.shape < kMaxKeptShapes && policy_.raw_score_by_shape(pod) &&
      policy_.best_is_highest_raw()) {
    if (!shape_best_) shape_best_ = std::make_unique<ShapeBest>(policy_, tie_rank_);
    const ShapeBest::Best best = shape_best_->find(cluster, *classes_, pod, rng);
    candidates_.clear();
    Decision d;
    if (best.node < 0) return d;
    candidates_.push_back(Candidate{best.node, best.raw, best.raw});
    d.node = best.node;
    d.score = best.raw;
    d.gpus = policy_.select_gpus(cluster, best.node, pod, rng);
    return d;
  }
  const NodeClasses::Columns& c = classes_->columns();
  const std::size_t n = classes_->size();
  // The scratch only grows: resizing it to every class each cycle would write it whole.
  if (candidate_class_.size() < n) candidate_class_.resize(n);
  const std::size_t kept = fitting_rows(
      FitView{c.cpu_free_milli.data(), c.max_memory_free_mib.data(), c.max_gpu_free_milli.data(),
              c.whole_free_gpus.data(), c.model.data(), n},
      pod, candidate_class_.data());
  candidates_.clear();
  for (std::size_t j = 0; j < kept; ++j) {
    candidates_.push_back(Candidate{classes_->representative(candidate_class_[j]), 0, 0});
  }
  Decision d;
  if (candidates_.empty()) return d;
  if (pod.shape < kMaxKeptShapes && policy_.raw_score_by_shape(pod)) {
    // The kept raw scores of this shape; the policy scores only the classes new since.
    if (kept_scores_.size() <= pod.shape) kept_scores_.resize(pod.shape + 1);
    std::vector<KeptScore>& kept = kept_scores_[pod.shape];
    if (kept.size() < n) kept.resize(n);
    unscored_.clear();
    to_score_.clear();
    for (std::size_t j = 0; j < candidates_.size(); ++j) {
      const auto i = static_cast<std::size_t>(candidate_class_[j]);
      if (kept[i].generation == classes_->generation(i)) {
        candidates_[j].raw = kept[i].raw;
      } else {
        unscored_.push_back(static_cast<uint32_t>(j));
        to_score_.push_back(candidates_[j]);
      }
    }
    if (!to_score_.empty()) {
      policy_.score(cluster, pod, to_score_, rng);
      for (std::size_t u = 0; u < unscored_.size(); ++u) {
        const uint32_t j = unscored_[u];
        candidates_[j].raw = to_score_[u].raw;
        const auto i = static_cast<std::size_t>(candidate_class_[j]);
        kept[i] = KeptScore{classes_->generation(i), to_score_[u].raw};
      }
    }
  } else {
    policy_.score(cluster, pod, candidates_, rng);
  }
  policy_.normalize(candidates_);
  int64_t best_score = candidates_.front().score;
  for (const Candidate& cand : candidates_) best_score = std::max(best_score, cand.score);
  NodeIndex best = -1;
  for (std::size_t j = 0; j < candidates_.size(); ++j) {
    if (candidates_[j].score != best_score) continue;
    // The representative is the class's first member in tie order: no member of a class
    // whose representative ranks after the best so far can win.
    if (best >= 0 && tie_rank_[candidates_[j].node] > tie_rank_[best]) continue;
    const NodeIndex node = classes_->first_fitting(candidate_class_[j], pod.memory_mib);
    if (best < 0 || tie_rank_[node] < tie_rank_[best]) best = node;
  }
  d.node = best;
  d.score = best_score;
  d.gpus = policy_.select_gpus(cluster, best, pod, rng);
  return d;
}

Scheduler::Scheduler(Policy& policy, std::vector<uint32_t> tie_rank)
    : policy_(policy), tie_rank_(std::move(tie_rank)) {}

Decision Scheduler::schedule(const Cluster& cluster, const PodSpec& pod, Rng& rng,
                             FilterCounts* counts) {
  constexpr int64_t kColumnMax = std::numeric_limits<int32_t>::max();
  const bool in_column_range = pod.cpu_milli >= 0 && pod.memory_mib >= 0 &&
                               pod.cpu_milli < kColumnMax && pod.memory_mib < kColumnMax;
  if (counts == nullptr && in_column_range && use_classes(cluster)) {
    return schedule_classes(cluster, pod, rng);
  }
  candidates_.clear();
  const auto n = static_cast<NodeIndex>(cluster.size());
  if (counts != nullptr) {
    *counts = FilterCounts{};
    for (NodeIndex i = 0; i < n; ++i) {
      const FilterReason r = filter_node(cluster.spec(i), cluster.state(i), pod);
      ++counts->by_reason[static_cast<int>(r)];
      if (r == FilterReason::kFits) candidates_.push_back(Candidate{i, 0, 0});
    }
  } else {
    fitting_.resize(static_cast<std::size_t>(n));
    const std::size_t kept = fitting_nodes(cluster, pod, fitting_);
    candidates_.resize(kept);
    for (std::size_t i = 0; i < kept; ++i) candidates_[i] = Candidate{fitting_[i], 0, 0};
  }
  Decision d;
  d.feasible_nodes = static_cast<int32_t>(candidates_.size());
  if (candidates_.empty()) return d;

  policy_.score(cluster, pod, candidates_, rng);
  policy_.normalize(candidates_);

  const Candidate* best = &candidates_.front();
  for (const Candidate& c : candidates_) {
    if (c.score > best->score ||
        (c.score == best->score && tie_rank_[c.node] < tie_rank_[best->node])) {
      best = &c;
    }
  }
  d.node = best->node;
  d.score = best->score;
  d.gpus = policy_.select_gpus(cluster, best->node, pod, rng);
  return d;
}

std::vector<uint32_t> random_tie_rank(std::size_t n, Rng& rng) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0U);
  rng.shuffle(std::span<uint32_t>(order));
  std::vector<uint32_t> rank(n);
  for (uint32_t pos = 0; pos < n; ++pos) rank[order[pos]] = pos;
  return rank;
}

}  // namespace greensched::policy
