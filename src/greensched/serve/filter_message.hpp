// Why a node cannot host a pod. Two forms:
//   filter_category: a fixed phrase per reason ("Insufficient cpu"), the per-node text of the
//     filter reply. kube-scheduler counts identical reasons across nodes ("0/1213 nodes are
//     available: 846 Insufficient cpu, ..."), so the phrase carries no numbers; cpu and memory
//     use the in-tree plugin's words, so their counts merge with kube-scheduler's own.
//   filter_message: the reason with the numbers that decided it ("insufficient GPU share on
//     any single GPU: max free 300 < 810 milli"), starting with policy::describe(reason) as the
//     simulator's explanations do; for bind errors and the decision log.
// Also says whether preemption could help: a node whose capacity (not just free share) is too
// small, or which has no GPU or the wrong model, is unresolvable and goes to
// FailedAndUnresolvableNodes.
//
// The facts are copied under the extender's lock and the text is written after it is
// released, so that a filter over thousands of failing nodes holds the lock only to decide.
#pragma once

#include <string>

#include "greensched/core/cluster.hpp"
#include "greensched/policy/filter.hpp"

namespace greensched::serve {

struct FilterFacts {
  policy::FilterReason reason = policy::FilterReason::kFits;
  int64_t cpu_free_milli = 0;
  int64_t memory_free_mib = 0;
  int32_t max_gpu_free_milli = 0;
  int32_t whole_free_gpus = 0;
  int64_t gpu_free_total_milli = 0;
  int64_t cpu_milli = 0;  // the node's capacity
  int64_t memory_mib = 0;
  int gpu_count = 0;
  GpuModelId model = kNoGpuModel;
};

FilterFacts filter_facts(policy::FilterReason reason, const NodeSpec& spec, const NodeState& state);

std::string_view filter_category(policy::FilterReason reason);

// Per-node phrases of nodes the policy never judged.
inline constexpr std::string_view kUnknownNodeCategory = "Node unknown to greensched";
inline constexpr std::string_view kRejectedNodeCategory =
    "Node unknown to greensched (unknown_nodes: reject)";
inline constexpr std::string_view kMalformedNodeCategory = "Node object malformed";
inline constexpr std::string_view kUnknownGpuModelCategory =
    "GPU model with no power figures (see greensched serve's log)";
inline constexpr std::string_view kBoundElsewhereCategory = "Pod already bound to another node";

std::string filter_message(const FilterFacts& facts, const PodSpec& pod,
                           const GpuModelRegistry& models);

bool filter_unresolvable(const FilterFacts& facts, const PodSpec& pod);

}  // namespace greensched::serve
