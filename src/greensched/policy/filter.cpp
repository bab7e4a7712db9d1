#include "greensched/policy/filter.hpp"

namespace greensched::policy {

std::string_view describe(FilterReason reason) {
  switch (reason) {
    case FilterReason::kFits:
      return "fits";
    case FilterReason::kNodeOffline:
      return "node offline";
    case FilterReason::kInsufficientCpu:
      return "insufficient cpu";
    case FilterReason::kInsufficientMemory:
      return "insufficient memory";
    case FilterReason::kNoGpu:
      return "node has no GPU";
    case FilterReason::kGpuModelNotAllowed:
      return "gpu model not in spec";
    case FilterReason::kInsufficientGpuShare:
      return "insufficient GPU share on any single GPU";
    case FilterReason::kInsufficientWholeGpus:
      return "insufficient fully free GPUs";
  }
  return "unknown";
}

}  // namespace greensched::policy
