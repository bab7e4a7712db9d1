#include "greensched/defrag/defrag_plan.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace greensched::defrag {
namespace {

Frees freed_between(const NodeState& before, const NodeState& after) {
  Frees f;
  f.whole_gpus = after.whole_free_gpus - before.whole_free_gpus;
  f.gpu_milli = after.gpu_free_total_milli - before.gpu_free_total_milli;
  f.cpu_milli = after.cpu_free_milli - before.cpu_free_milli;
  f.memory_mib = after.memory_free_mib - before.memory_free_mib;
  return f;
}

}  // namespace

DefragPlan plan_defrag(const Cluster& cluster, const std::vector<PendingPod>& pending,
                       PodLookup pod_of, Movable movable, policy::Scheduler& scheduler, Rng& rng,
                       int budget, PlannerLimits limits) {
  Cluster copy = cluster;
  std::set<PodId> pending_ids;
  for (const PendingPod& p : pending) pending_ids.insert(p.id);
  std::set<PodId> moved;  // a pod moves at most once: its replacement is another pod
  MovePlanner planner(
      [&](PodId id) -> const PodSpec* { return pending_ids.contains(id) ? nullptr : pod_of(id); },
      [&](PodId id) { return !moved.contains(id) && (!movable || movable(id)); });

  DefragPlan out;
  int left = std::max(budget, 0);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const PendingPod& p = pending[i];
    PodPlan plan;
    plan.pending = i;
    const policy::Decision d = scheduler.schedule(copy, p.spec, rng);
    if (d.node >= 0 && copy.allocate(p.id, p.spec, d.node, d.gpus).ok()) {
      plan.outcome = PlanOutcome::kFitsNow;
      plan.plan.node = d.node;
      plan.plan.gpus = d.gpus;
    } else if (!p.spec.needs_gpu()) {
      plan.outcome = PlanOutcome::kNoGpu;
    } else if (left == 0) {
      plan.outcome = PlanOutcome::kBudgetSpent;
    } else {
      PlannerLimits l = limits;
      l.max_moves = std::min(l.max_moves, left);
      // What the target nodes hold before: the plan's node is known only after the fit.
      std::vector<NodeState> before(copy.size());
      for (std::size_t n = 0; n < copy.size(); ++n)
        before[n] = copy.state(static_cast<NodeIndex>(n));
      if (auto fit = planner.fit(copy, p.id, p.spec, scheduler, rng, l)) {
        plan.outcome = PlanOutcome::kPlanned;
        // The node's free room after the moves, before the pod takes its share of it.
        NodeState after_moves = copy.state(fit->node);
        if (copy.release(p.id).ok()) {
          after_moves = copy.state(fit->node);
          (void)copy.allocate(p.id, p.spec, fit->node, fit->gpus);
        }
        plan.frees = freed_between(before[static_cast<std::size_t>(fit->node)], after_moves);
        for (const Move& m : fit->moves) moved.insert(m.pod);
        left -= static_cast<int>(fit->moves.size());
        out.moves += static_cast<int>(fit->moves.size());
        plan.plan = std::move(*fit);
      } else {
        plan.outcome = PlanOutcome::kNoPlan;
      }
    }
    out.pods.push_back(std::move(plan));
  }
  return out;
}

}  // namespace greensched::defrag
