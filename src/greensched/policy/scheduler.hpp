// One scheduling cycle for one pod: filter every node, let the policy score and normalise the
// feasible ones, pick the highest score, and ask the policy for the GPUs. Ties between equal
// best scores go to the node that comes first in a tie order fixed for the whole run (the
// reference prefixes node names with a seeded permutation index and takes the smallest name).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "greensched/policy/filter.hpp"
#include "greensched/policy/policy.hpp"

namespace greensched::policy {

// How many nodes each filter reason ruled out (index: FilterReason), for explanations.
struct FilterCounts {
  std::array<int32_t, kFilterReasonCount> by_reason{};
};

struct Decision {
  NodeIndex node = -1;  // -1: no feasible node
  GpuMask gpus = 0;
  int64_t score = 0;
  int32_t feasible_nodes = 0;
};

class Scheduler {
 public:
  // tie_rank[n] is node n's position in the tie order (a permutation of 0..nodes-1).
  Scheduler(Policy& policy, std::vector<uint32_t> tie_rank);

  // With `counts`, also tallies the filter reason of every node.
  Decision schedule(const Cluster& cluster, const PodSpec& pod, Rng& rng,
                    FilterCounts* counts = nullptr);
  Policy& policy() { return policy_; }
  const std::vector<uint32_t>& tie_rank() const { return tie_rank_; }

  // Feasible candidates of the last cycle, with raw and normalised scores.
  const std::vector<Candidate>& last_candidates() const { return candidates_; }

 private:
  Policy& policy_;
  std::vector<uint32_t> tie_rank_;
  std::vector<Candidate> candidates_;
  std::vector<NodeIndex> fitting_;  // scratch for the filter pass
};

// A uniformly random permutation of 0..n-1 drawn from `rng`, as a rank per node.
std::vector<uint32_t> random_tie_rank(std::size_t n, Rng& rng);

}  // namespace greensched::policy
