// A defragmentation plan for a live cluster (the extender's GET /v1/defrag): for pending pods
// in the caller's order, the moves of running pods that let each fit, within one budget of
// moves in total. Planned on a copy of the cluster, which is thrown away: the caller's
// cluster is never changed.
//
// Each pending pod in turn, on the copy:
//  - if it fits as the copy stands, it is placed where the scheduler puts it (kFitsNow);
//  - a pod needing no GPU is not planned for (kNoGpu), nor any pod once the budget is spent
//    (kBudgetSpent);
//  - else MovePlanner::fit looks for the fewest moves, at most the budget left (and
//    limits.max_moves), and carries them out on the copy (kPlanned), or finds none (kNoPlan).
// Plans are kept on the copy, so a later pod's plan sees the moves and placements of the
// earlier ones. Pods placed for earlier plans are never moved by later ones.
#pragma once

#include <cstdint>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/defrag/move_planner.hpp"
#include "greensched/policy/scheduler.hpp"

namespace greensched::defrag {

// A pod waiting to be scheduled; `id` is placed under on the copy and must not be the id of
// a pod placed in the cluster.
struct PendingPod {
  PodId id = 0;
  PodSpec spec;
};

enum class PlanOutcome { kPlanned, kFitsNow, kNoGpu, kBudgetSpent, kNoPlan };

// What a plan's moves free on the node the pod then takes, before the pod is placed there
// (differences of the node's free resources; moves within the node count both ways).
struct Frees {
  int32_t whole_gpus = 0;
  int64_t gpu_milli = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
};

struct PodPlan {
  std::size_t pending = 0;  // index in the pending list
  PlanOutcome outcome = PlanOutcome::kNoPlan;
  FitPlan plan;  // kPlanned: the moves, then the pod on plan.node with plan.gpus; kFitsNow:
                 // no moves, the node and GPUs it takes as things stand
  Frees frees;   // kPlanned
};

struct DefragPlan {
  std::vector<PodPlan> pods;  // one per pending pod, in the pending list's order
  int moves = 0;              // moves planned in all
};

// `pod_of` and `movable` are MovePlanner's (placed pods' specs; which may move). At most
// `budget` moves in all (budget >= 0); limits.max_moves caps each plan besides.
DefragPlan plan_defrag(const Cluster& cluster, const std::vector<PendingPod>& pending,
                       PodLookup pod_of, Movable movable, policy::Scheduler& scheduler, Rng& rng,
                       int budget, PlannerLimits limits = {});

}  // namespace greensched::defrag
