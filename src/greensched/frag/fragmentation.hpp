// The GPU fragmentation measure of FGD (Weng et al., ATC'23). For node n with free share R_g
// on GPU g and target shape m (k_m GPUs of d_m each):
//   F_n(m) = sum_g R_g                  if m needs no GPU, or n cannot host m (model, CPU, or
//                                       fewer than k_m GPUs with R_g >= d_m);
//   F_n(m) = sum_g R_g * [R_g < d_m]    otherwise;
//   F_n(M) = sum_m p_m F_n(m),   cluster F = sum_n F_n(M).
// Values are kept exact as integers scaled by the target's covered pod count:
// scaled = sum_m count_m F_n(m), so F_n(M) = scaled / covered_pods (in GPU milli).
//
// Node states (model, GPU count, free CPU, multiset of free GPU shares) are interned to ids so
// that identical nodes share every computation; most of a cluster's nodes look alike.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/frag/target_workload.hpp"

namespace greensched::frag {

using StateId = uint32_t;

struct NodeFragState {
  GpuModelId model = kNoGpuModel;
  int gpu_count = 0;
  int64_t cpu_free_milli = 0;
  std::array<int32_t, kMaxGpusPerNode> gpu_free_sorted{};  // descending, 0 beyond gpu_count
  int64_t frag_scaled = 0;
};

class FragmentationModel {
 public:
  explicit FragmentationModel(TargetWorkload target);

  const TargetWorkload& target() const { return target_; }

  // Scaled F_n(M) of an explicit node state (any GPU order).
  int64_t scaled_frag(GpuModelId model, int gpu_count, int64_t cpu_free_milli,
                      const int32_t* gpu_free_milli) const;
  // Converts a scaled value to GPU milli.
  double to_gpu_milli(int64_t scaled) const {
    if (target_.covered_pods == 0) return 0.0;  // empty target: nothing counts as stranded
    return static_cast<double>(scaled) / static_cast<double>(target_.covered_pods);
  }
  int64_t covered_pods() const { return target_.covered_pods; }

  // The interned state of a cluster node; recomputed only when the node changed.
  StateId node_state(const Cluster& cluster, NodeIndex node);
  const NodeFragState& state(StateId id) const { return states_[id]; }
  std::size_t state_count() const { return states_.size(); }

 private:
  struct Key {
    std::array<uint64_t, 4> words{};
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  StateId intern(NodeFragState s);

  TargetWorkload target_;
  std::vector<NodeFragState> states_;
  // The id of each key: open addressing with linear probing, at most half full (a node-based
  // map misses the cache twice at every node change).
  struct IdSlot {
    uint32_t hash = 0;
    uint32_t id_plus_1 = 0;  // 0: empty
  };
  std::vector<Key> keys_;               // by id
  std::vector<IdSlot> ids_;             // size a power of two
  std::vector<uint32_t> node_version_;  // per node: version seen when node_state_ was set
  std::vector<StateId> node_state_;
};

// Cluster fragmentation F, kept up to date one changed node at a time.
class ClusterFragmentation {
 public:
  ClusterFragmentation(FragmentationModel& model, const Cluster& cluster);
  // Call after a node changed.
  void update(const Cluster& cluster, NodeIndex node);
  double gpu_milli() const { return model_.to_gpu_milli(total_scaled_); }

 private:
  FragmentationModel& model_;
  std::vector<int64_t> node_scaled_;
  int64_t total_scaled_ = 0;
};

}  // namespace greensched::frag
