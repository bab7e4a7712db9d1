// Why a node cannot host a pod, in words with the numbers that decided it, for the
// FailedNodes map of the extender's filter reply ("insufficient GPU share on any single GPU:
// max free 300 < 810 milli"). The text starts with policy::describe(reason), so it reads the
// same as the simulator's explanations. Also says whether preemption could help: a node whose
// capacity (not just free share) is too small, or which has no GPU or the wrong model, is
// unresolvable and goes to FailedAndUnresolvableNodes.
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
  int64_t cpu_milli = 0;  // the node's capacity
  int64_t memory_mib = 0;
  int gpu_count = 0;
  GpuModelId model = kNoGpuModel;
};

FilterFacts filter_facts(policy::FilterReason reason, const NodeSpec& spec, const NodeState& state);

std::string filter_message(const FilterFacts& facts, const PodSpec& pod,
                           const GpuModelRegistry& models);

bool filter_unresolvable(const FilterFacts& facts, const PodSpec& pod);

}  // namespace greensched::serve
