// An offline upper bound on the GPU allocation any scheduling policy can reach for a given set
// of arrived pods: a linear program (optionally integer) over node types and pod shapes,
// solved with COIN-OR CLP (CBC for the integer form). See bound.cpp for the model and the proof
// that it is never below what a policy achieves.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "greensched/core/node.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"

namespace greensched::learn {

struct BoundOptions {
  bool integer = false;        // integer pod counts per node type (CBC); else the LP (CLP)
  double time_limit_s = 60;    // for the integer form; the bound is then the proven dual bound
  bool packing_cuts = true;    // valid inequalities from dual-feasible functions (see bound.cpp)
  bool keep_solution = false;  // fill BoundResult::solution (for a rounding, offline_packing.hpp)
};

// One nonzero variable of the solved program: `pods` pods of a shape placed on the nodes of a
// type (fractional in the LP). A node type is (model, GPU count, CPU, memory); a pod shape is
// (CPU, memory, GPU count, per-GPU share, allowed models).
struct BoundFlow {
  GpuModelId model = kNoGpuModel;
  int gpus = 0;
  int64_t node_cpu_milli = 0;
  int64_t node_memory_mib = 0;
  int64_t pod_cpu_milli = 0;
  int64_t pod_memory_mib = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;
  GpuModelSet gpu_spec = 0;
  double pods = 0;
};

struct BoundResult {
  int64_t cluster_gpu_milli = 0;
  int64_t requested_gpu_milli = 0;  // summed GPU request of the pods given
  // No placement of any subset of the pods allocates more GPU milli than this.
  double upper_bound_gpu_milli = 0;
  int node_types = 0;  // distinct (model, GPU count, CPU, memory)
  int pod_shapes = 0;  // distinct GPU pod shapes (cpu, memory, num_gpu, gpu_milli, gpu_spec)
  int rows = 0;
  int columns = 0;
  bool proven_optimal = true;  // false: the integer solve stopped at its time limit
  double solve_seconds = 0;
  // With BoundOptions::keep_solution: the solution's nonzero variables, node type by node type
  // (for the integer form CBC's best integer solution, empty if it found none).
  std::vector<BoundFlow> solution;

  double upper_bound_alloc_pct() const {
    return cluster_gpu_milli > 0
               ? upper_bound_gpu_milli / static_cast<double>(cluster_gpu_milli) * 100.0
               : 0.0;
  }
};

// The bound for placing (a subset of) `pods` on the empty cluster `nodes`. Offline nodes are
// not modelled: every node is available.
Result<BoundResult> allocation_upper_bound(std::span<const NodeSpec> nodes,
                                           std::span<const PodSpec> pods,
                                           const BoundOptions& options = BoundOptions());

}  // namespace greensched::learn
