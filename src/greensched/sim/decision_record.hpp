// Decision records: everything a person needs to question one scheduling decision, captured
// at the moment it was made, as one JSON object (written one per line with --record).
//
// Schema (stable field names):
//   pod, step, time_s (replay), policy, request {cpu_milli, memory_mib, num_gpu, gpu_milli,
//   gpu_spec [models]}, nodes_total, feasible_nodes, reason_counts {reason: nodes},
//   candidates [{node, tie_rank, score, terms [{policy, weight, raw, score}], gpus [indices],
//   frag_delta_milli, power_delta_watts}] (the best few, best first),
//   chosen_node (null when the pod could not be placed), chosen_gpus, chosen_gpus_before
//   [used GPU milli of each GPU of the chosen node before this pod, by GPU index], score,
//   runner_up, runner_up_score, margin, tie_broken, frag_delta_milli, power_delta_watts, and
//   for a failed pod reason_counts_by_type {GPU model or "no GPU": {reason: nodes}} and
//   diagnosis {split_gpu_nodes, split_gpu_examples [nodes], shrink, move}; and for a pod that fit
//   nowhere but was placed after moving others (simulate --migrate-budget), rescued_by_moves
//   {node, gpus [indices], moves [{pod, from, from_gpus, to, to_gpus, gpu_milli, cpu_milli}],
//   freed {gpu_milli: on the GPUs the pod took, cpu_milli: on its node, net}}.
// A node emptied so that it sleeps (replay --consolidate) has a record of its own:
//   kind "drain", step, time_s, policy, node, busy_until_s (when its last job would have
//   ended), moves [{pod, from, from_gpus, to, to_gpus, gpu_milli, cpu_milli, lost_s}],
//   estimate {spared_kwh (idle energy the sleep spares), moved_saving_kwh (the jobs' power here
//   over there, above the node's idle power, over their run left), lost_kwh (run time lost),
//   kept_awake_kwh (destinations awake past their own jobs), net_kwh}.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/cluster.hpp"
#include "greensched/defrag/move_planner.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::sim {

struct RecordInputs {
  const Cluster* cluster = nullptr;  // the state the decision saw
  const GpuModelRegistry* models = nullptr;
  policy::Scheduler* scheduler = nullptr;                // just ran the cycle
  const policy::FilterCounts* counts = nullptr;          // of that cycle
  const frag::FragmentationModel* frag = nullptr;        // optional: fragmentation change
  const std::vector<power::NodePower>* power = nullptr;  // optional: power change
  std::function<const PodSpec*(PodId)> pod_of;           // placed pods, for "which pod to move"
  int top_k = 5;
};

nlohmann::json make_record(const RecordInputs& in, const PodSpec& pod,
                           const policy::Decision& decision, int64_t step,
                           std::optional<double> time_s = std::nullopt);

// The GPU indices of a mask, ascending, as records write them.
nlohmann::json gpu_list(GpuMask mask);

// A record's rescued_by_moves: the plan, carried out on `cluster`, that placed a pod.
nlohmann::json rescue_json(const defrag::FitPlan& plan, const Cluster& cluster,
                           const std::function<const PodSpec*(PodId)>& pod_of);

// The estimate behind a drain, joules (SiteEngineConfig::consolidate).
struct DrainEstimate {
  double spared_j = 0;
  double moved_saving_j = 0;
  double lost_j = 0;
  double kept_awake_j = 0;
  double net_j() const { return spared_j + moved_saving_j - lost_j - kept_awake_j; }
};

// The record of a drain carried out on `cluster`: node `node` emptied by `moves`, each losing
// lost_s[i] seconds of run.
nlohmann::json drain_record(std::string_view policy, NodeIndex node,
                            const std::vector<defrag::Move>& moves,
                            const std::vector<int64_t>& lost_s, const Cluster& cluster,
                            const std::function<const PodSpec*(PodId)>& pod_of,
                            const DrainEstimate& estimate, int64_t step, double time_s,
                            double busy_until_s);

// The request of `pod` as in a record.
nlohmann::json request_json(const PodSpec& pod, const GpuModelRegistry& models);

// Each record (one JSON object a line) of `records` with its run put first,
// {"run":{"KEY":NAME,"seed":SEED},...}, so that explain --policy NAME --seeds SEED picks them
// out of a file several runs share. KEY is "policy" (simulate) or "agent" (multi).
std::string tag_run_records(std::string_view records, std::string_view key, std::string_view name,
                            uint64_t seed);

}  // namespace greensched::sim
