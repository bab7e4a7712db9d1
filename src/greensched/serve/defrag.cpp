// Extender::defrag (GET /v1/defrag?budget=N): which running pods to evict, and where each
// would go, so that the pending pods fit (defrag/defrag_plan.hpp plans it; docs/SERVE.md,
// "Defragmentation").
//
// The state is copied under the locks in their documented order: the state lock shared (no
// writer changes the pods meanwhile), then decide_mu_ for the pending pods and their shape
// ids. Both are released before planning, which runs on the copy with a policy of its own
// (ClusterState::planning_policy: the same decisions, none of the live policy's caches), so
// filters, prioritizes and binds go on while a plan is made, and the state is never changed.
//
// Which pods may move: pods the extender bound (or took in a resync) whose pod carries
// greensched.io/movable: "true", and not named in the request's exclusions. Assumed pods (a
// bind under way), pods placed for an earlier plan and pods moved once already stay.
// Which pods are planned for: the pending pods (seen by filter or prioritize, not bound)
// seen within ExtenderOptions::defrag_pending_seconds, first seen first. A pod assumed on a
// node is being bound and is not planned for.
//
// The reply:
//   {"budget": N, "policy": "fgd", "moves_planned": k,
//    "plans": [{"pod": "ns/name", "uid", "node", "gpus": [0],
//               "moves": [{"pod", "uid", "from", "from_gpus", "to", "to_gpus", "gpu_milli"}],
//               "frees": {"node", "whole_gpus", "gpu_milli", "cpu_milli", "memory_mib"}}],
//    "unplanned": [{"pod", "uid", "reason"}]}
// Moves are listed in the order they are to be carried out.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "greensched/defrag/defrag_plan.hpp"
#include "greensched/serve/extender.hpp"
#include "greensched/sim/decision_record.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

// A placed pod of the copy, by its id.
struct PlacedPod {
  PodRef ref;
  PodSpec spec;
  bool movable = false;
};

}  // namespace

Result<json> Extender::defrag(const DefragRequest& request) {
  std::optional<Cluster> cluster;
  std::map<PodId, PlacedPod> placed;  // bound pods (assumed ones are not movable)
  std::vector<PodRef> pending_refs;
  std::vector<defrag::PendingPod> pending;
  json unplanned = json::array();
  std::unique_ptr<policy::Policy> policy;
  std::string policy_spec;
  uint64_t seed = 0;
  {
    std::shared_lock lock(state_mu_);
    cluster.emplace(state_->cluster());
    PodId next_id = 0;
    for (const auto& [key, pod] : state_->pods()) {
      placed[pod.id] = PlacedPod{pod.request.ref, pod.spec,
                                 pod.request.movable && !request.exclude.contains(key)};
      next_id = std::max(next_id, pod.id + 1);
    }
    for (const auto& [key, pod] : state_->assumed()) next_id = std::max(next_id, pod.id + 1);
    auto made = state_->planning_policy();
    if (!made.ok()) return Error{made.error(), ErrorCode::kInternal};
    policy = std::move(made.value());
    policy_spec = state_->policy_spec();
    seed = state_->seed();
    const auto since =
        PendingPods::Clock::now() - std::chrono::seconds(options_.defrag_pending_seconds);
    std::lock_guard decide(decide_mu_);
    for (const PendingPods::Seen& seen : pending_.oldest_first(since)) {
      const std::string key = seen.request.ref.key();
      if (state_->find_pod(key) != nullptr) continue;  // bound meanwhile
      if (const BoundPod* assumed = state_->find_assumed(key)) {
        unplanned.push_back(
            json{{"pod", key},
                 {"uid", seen.request.ref.uid},
                 {"reason", fmt::format("assumed on {}: its bind is under way", assumed->node)}});
        continue;
      }
      pending_refs.push_back(seen.request.ref);
      pending.push_back(defrag::PendingPod{next_id++, state_->pod_spec(seen.request)});
    }
  }

  std::vector<uint32_t> rank(cluster->size());
  for (std::size_t n = 0; n < rank.size(); ++n) rank[n] = static_cast<uint32_t>(n);
  policy::Scheduler scheduler(*policy, std::move(rank));
  Rng rng(seed);
  defrag::PlannerLimits limits;
  limits.max_moves = std::max(request.budget, 0);
  const defrag::DefragPlan plan = defrag::plan_defrag(
      *cluster, pending,
      [&](PodId id) -> const PodSpec* {
        auto it = placed.find(id);
        return it == placed.end() ? nullptr : &it->second.spec;
      },
      [&](PodId id) {
        auto it = placed.find(id);
        return it != placed.end() && it->second.movable;
      },
      scheduler, rng, request.budget, limits);

  const auto node_name = [&](NodeIndex n) { return cluster->spec(n).name; };
  json plans = json::array();
  int left = request.budget;
  for (const defrag::PodPlan& p : plan.pods) {
    const PodRef& ref = pending_refs[p.pending];
    std::string reason;
    switch (p.outcome) {
      case defrag::PlanOutcome::kPlanned: {
        json moves = json::array();
        for (const defrag::Move& m : p.plan.moves) {
          const PlacedPod& moved = placed.at(m.pod);
          moves.push_back(json{{"pod", moved.ref.key()},
                               {"uid", moved.ref.uid},
                               {"from", node_name(m.from)},
                               {"from_gpus", sim::gpu_list(m.from_gpus)},
                               {"to", node_name(m.to)},
                               {"to_gpus", sim::gpu_list(m.to_gpus)},
                               {"gpu_milli", m.gpu_milli}});
        }
        left -= static_cast<int>(p.plan.moves.size());
        plans.push_back(json{{"pod", ref.key()},
                             {"uid", ref.uid},
                             {"node", node_name(p.plan.node)},
                             {"gpus", sim::gpu_list(p.plan.gpus)},
                             {"moves", std::move(moves)},
                             {"frees",
                              {{"node", node_name(p.plan.node)},
                               {"whole_gpus", p.frees.whole_gpus},
                               {"gpu_milli", p.frees.gpu_milli},
                               {"cpu_milli", p.frees.cpu_milli},
                               {"memory_mib", p.frees.memory_mib}}}});
        continue;
      }
      case defrag::PlanOutcome::kFitsNow:
        reason = fmt::format("fits without moves (on {})", node_name(p.plan.node));
        break;
      case defrag::PlanOutcome::kNoGpu:
        reason = "asks for no GPU: only GPU pods are planned for";
        break;
      case defrag::PlanOutcome::kBudgetSpent:
        reason = fmt::format("the budget of {} moves is spent", request.budget);
        break;
      case defrag::PlanOutcome::kNoPlan:
        reason = fmt::format(
            "no plan of at most {} moves of movable pods (annotated {}: \"true\") lets it fit",
            left, kMovableAnnotation);
        break;
    }
    unplanned.push_back(json{{"pod", ref.key()}, {"uid", ref.uid}, {"reason", std::move(reason)}});
  }
  return json{{"budget", request.budget},
              {"policy", policy_spec},
              {"moves_planned", plan.moves},
              {"plans", std::move(plans)},
              {"unplanned", std::move(unplanned)}};
}

}  // namespace greensched::serve
