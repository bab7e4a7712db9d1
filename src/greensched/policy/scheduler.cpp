#include "greensched/policy/scheduler.hpp"

#include <numeric>

namespace greensched::policy {

Scheduler::Scheduler(Policy& policy, std::vector<uint32_t> tie_rank)
    : policy_(policy), tie_rank_(std::move(tie_rank)) {}

Decision Scheduler::schedule(const Cluster& cluster, const PodSpec& pod, Rng& rng,
                             FilterCounts* counts) {
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
