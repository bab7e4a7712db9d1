// One scheduling cycle for one pod: filter every node, let the policy score and normalise the
// feasible ones, pick the highest score, and ask the policy for the GPUs. Ties between equal
// best scores go to the node that comes first in a tie order fixed for the whole run (the
// reference prefixes node names with a seeded permutation index and takes the smallest name).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "greensched/policy/filter.hpp"
#include "greensched/policy/node_classes.hpp"
#include "greensched/policy/policy.hpp"
#include "greensched/policy/shape_best.hpp"

namespace greensched::policy {

// How many nodes each filter reason ruled out (index: FilterReason), for explanations.
struct FilterCounts {
  std::array<int32_t, kFilterReasonCount> by_reason{};
};

struct Decision {
  NodeIndex node = -1;  // -1: no feasible node
  GpuMask gpus = 0;
  int64_t score = 0;
  int32_t feasible_nodes = -1;  // nodes that passed the filter; -1: not counted (node classes)
};

// Whether a scheduler scores node classes (node_classes.hpp) instead of every node. The
// decisions are the same either way; kAuto uses classes where the policy allows them and the
// cluster has at least kNodeClassesFrom nodes. The GREENSCHED_NODE_CLASSES environment
// variable (on, off, auto) sets the default, to compare the two on a whole run.
enum class NodeClassMode { kAuto, kOn, kOff };
inline constexpr std::size_t kNodeClassesFrom = 256;
NodeClassMode default_node_class_mode();

class Scheduler {
 public:
  // tie_rank[n] is node n's position in the tie order (a permutation of 0..nodes-1).
  Scheduler(Policy& policy, std::vector<uint32_t> tie_rank);

  // With `counts`, also tallies the filter reason of every node (a pass over every node, so
  // that explanations name every candidate).
  Decision schedule(const Cluster& cluster, const PodSpec& pod, Rng& rng,
                    FilterCounts* counts = nullptr);
  Policy& policy() { return policy_; }
  const std::vector<uint32_t>& tie_rank() const { return tie_rank_; }
  void set_node_class_mode(NodeClassMode mode) { class_mode_ = mode; }
  // Whether, with classes, the best class is kept per pod shape (shape_best.hpp) where the
  // policy allows it (Policy::raw_score_by_shape and best_is_highest_raw; FGD). On by default;
  // off, every class is filtered and scored for each pod. The decisions are the same.
  void set_shape_best(bool on) { shape_best_on_ = on; }
  // How many node classes the last cycle over classes had (0: none yet).
  std::size_t class_count() const { return classes_ ? classes_->size() : 0; }

  // Feasible candidates of the last cycle, with raw and normalised scores: every feasible node
  // when `counts` was given, else one node per feasible class where classes were used, or only
  // the chosen node where the best class was kept per shape.
  const std::vector<Candidate>& last_candidates() const { return candidates_; }

 private:
  bool use_classes(const Cluster& cluster) const;
  Decision schedule_classes(const Cluster& cluster, const PodSpec& pod, Rng& rng);

  Policy& policy_;
  std::vector<uint32_t> tie_rank_;
  std::vector<Candidate> candidates_;
  std::vector<NodeIndex> fitting_;  // scratch for the filter pass
  NodeClassMode class_mode_ = default_node_class_mode();
  std::unique_ptr<NodeClasses> classes_;
  std::vector<int32_t> candidate_class_;  // class of each candidate (class path)
  // Raw scores kept per pod shape and class position (Policy::raw_score_by_shape), valid while
  // the class at that position has the generation stored.
  struct KeptScore {
    uint64_t generation = 0;
    int64_t raw = 0;
  };
  std::vector<std::vector<KeptScore>> kept_scores_;  // [shape][class position]
  std::vector<uint32_t> unscored_;                   // candidates whose score was not kept
  std::vector<Candidate> to_score_;
  bool shape_best_on_ = true;
  std::unique_ptr<ShapeBest> shape_best_;
};

// A uniformly random permutation of 0..n-1 drawn from `rng`, as a rank per node.
std::vector<uint32_t> random_tie_rank(std::size_t n, Rng& rng);

}  // namespace greensched::policy
