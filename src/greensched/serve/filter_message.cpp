#include "greensched/serve/filter_message.hpp"

#include <fmt/format.h>

namespace greensched::serve {

using policy::FilterReason;

FilterFacts filter_facts(FilterReason reason, const NodeSpec& spec, const NodeState& state) {
  FilterFacts f;
  f.reason = reason;
  f.cpu_free_milli = state.cpu_free_milli;
  f.memory_free_mib = state.memory_free_mib;
  f.max_gpu_free_milli = state.max_gpu_free_milli;
  f.whole_free_gpus = state.whole_free_gpus;
  f.gpu_free_total_milli = state.gpu_free_total_milli;
  f.cpu_milli = spec.cpu_milli;
  f.memory_mib = spec.memory_mib;
  f.gpu_count = spec.gpu_count;
  f.model = spec.model;
  return f;
}

std::string_view filter_category(FilterReason reason) {
  switch (reason) {
    case FilterReason::kFits:
      return "Fits";
    case FilterReason::kNodeOffline:
      return "Node offline";
    case FilterReason::kInsufficientCpu:
      return "Insufficient cpu";
    case FilterReason::kInsufficientMemory:
      return "Insufficient memory";
    case FilterReason::kNoGpu:
      return "Node has no GPU";
    case FilterReason::kGpuModelNotAllowed:
      return "GPU model not allowed by the pod";
    case FilterReason::kInsufficientGpuShare:
      return "Insufficient GPU share on any single GPU";
    case FilterReason::kInsufficientWholeGpus:
      return "Insufficient fully free GPUs";
  }
  return "Unknown reason";
}

std::string filter_message(const FilterFacts& f, const PodSpec& pod,
                           const GpuModelRegistry& models) {
  const std::string_view what = policy::describe(f.reason);
  switch (f.reason) {
    case FilterReason::kFits:
    case FilterReason::kNodeOffline:
      return std::string(what);
    case FilterReason::kInsufficientCpu:
      return fmt::format("{}: free {} < {} milli (node has {})", what, f.cpu_free_milli,
                         pod.cpu_milli, f.cpu_milli);
    case FilterReason::kInsufficientMemory:
      return fmt::format("{}: free {} < {} MiB (node has {})", what, f.memory_free_mib,
                         pod.memory_mib, f.memory_mib);
    case FilterReason::kNoGpu:
      return fmt::format("{}: pod asks for {} GPU(s)", what, pod.num_gpu);
    case FilterReason::kGpuModelNotAllowed: {
      // The top bit stands for models no node has (see ClusterState::pod_spec).
      const GpuModelSet known = pod.gpu_spec & ((GpuModelSet{1} << (kMaxGpuModels - 1)) - 1);
      const bool named = f.model != kNoGpuModel && f.model < models.size();
      return fmt::format(
          "{}: node has {}, pod allows {}", what,
          named ? models.name(f.model) : std::string("none"),
          known == 0 ? std::string("only models no node has") : models.describe(known));
    }
    case FilterReason::kInsufficientGpuShare:
      return fmt::format("{}: max free {} < {} milli", what, f.max_gpu_free_milli, pod.gpu_milli);
    case FilterReason::kInsufficientWholeGpus:
      return fmt::format("{}: {} free < {} asked (node has {})", what, f.whole_free_gpus,
                         pod.num_gpu, f.gpu_count);
  }
  return std::string(what);
}

bool filter_unresolvable(const FilterFacts& f, const PodSpec& pod) {
  switch (f.reason) {
    case FilterReason::kFits:
      return false;
    case FilterReason::kNodeOffline:
    case FilterReason::kNoGpu:
    case FilterReason::kGpuModelNotAllowed:
      return true;
    case FilterReason::kInsufficientCpu:
      return pod.cpu_milli > f.cpu_milli;
    case FilterReason::kInsufficientMemory:
      return pod.memory_mib > f.memory_mib;
    case FilterReason::kInsufficientGpuShare:
      return false;
    case FilterReason::kInsufficientWholeGpus:
      return pod.num_gpu > f.gpu_count;
  }
  return false;
}

}  // namespace greensched::serve
