// An achievable offline packing beside the allocation bound (bound.hpp): the same pods, all
// known in advance and none departing, placed on the empty cluster by offline heuristics
// (best-fit decreasing, FGD over the pods sorted large first, a rounding of the bound's LP
// solution; each followed by a repair pass that moves, swaps or displaces a placed pod to make
// room). Every placement goes through Cluster::allocate, so the best packing's GPU allocation
// is reached by a real placement: the offline optimum lies between it and the LP bound. See
// offline_packing.cpp for the heuristics.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/node.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/resources.hpp"
#include "greensched/core/status.hpp"
#include "greensched/learn/bound.hpp"

namespace greensched::learn {

struct PackingOptions {
  bool repair = true;  // the repair pass after each heuristic
  // The bound over the same nodes and pods solved with BoundOptions::keep_solution, for
  // lp-rounding; when null (or without a solution), the LP is solved here.
  const BoundResult* lp = nullptr;
  bool keep_placements = true;  // fill PackingMethod::placements
};

// A pod (index into the pods given) on a node, on the GPUs of the mask.
struct PackedPod {
  uint32_t pod = 0;
  NodeIndex node = -1;
  GpuMask gpus = 0;
};

struct PackingMethod {
  std::string name;                 // bfd, fgd-sorted, lp-rounding
  int64_t allocated_gpu_milli = 0;  // after the repair pass
  int64_t heuristic_gpu_milli = 0;  // the heuristic alone
  int64_t pods_placed = 0;
  int repairs = 0;  // placements the repair pass made
  double seconds = 0;
  std::vector<PackedPod> placements;  // in pod order; with PackingOptions::keep_placements
};

struct OfflinePacking {
  int64_t cluster_gpu_milli = 0;
  int64_t requested_gpu_milli = 0;
  std::vector<PackingMethod> methods;  // in the order of packing_method_names()
  std::size_t best = 0;                // the method with the most GPU milli (first among equals)
  double seconds = 0;

  const PackingMethod& best_method() const { return methods[best]; }
  int64_t allocated_gpu_milli() const {
    return methods.empty() ? 0 : best_method().allocated_gpu_milli;
  }
  double alloc_pct(int64_t milli) const {
    return cluster_gpu_milli > 0
               ? static_cast<double>(milli) / static_cast<double>(cluster_gpu_milli) * 100.0
               : 0.0;
  }
  double alloc_pct() const { return alloc_pct(allocated_gpu_milli()); }
};

// The heuristics, in the order they run and are reported.
std::span<const std::string_view> packing_method_names();

// Packs the GPU pods of `pods` on the empty cluster `nodes` with every heuristic.
Result<OfflinePacking> pack_offline(std::span<const NodeSpec> nodes, std::span<const PodSpec> pods,
                                    const PackingOptions& options = PackingOptions());

}  // namespace greensched::learn
