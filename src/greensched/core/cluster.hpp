// The cluster's allocation truth: which pod holds which share of which GPU on which node.
// It knows nothing of policies, files or time, and refuses any allocation that would
// overcommit CPU, memory or a GPU; policies only read it, the simulator or extender commits.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "greensched/core/node.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/resources.hpp"
#include "greensched/core/status.hpp"

namespace greensched {

struct NodeState {
  int64_t cpu_free_milli = 0;
  int64_t memory_free_mib = 0;
  std::array<int32_t, kMaxGpusPerNode> gpu_free_milli{};  // 0 beyond gpu_count
  // Derived from gpu_free_milli, kept so that filters are a few compares.
  int32_t max_gpu_free_milli = 0;
  int32_t whole_free_gpus = 0;
  int64_t gpu_free_total_milli = 0;
  int32_t pods = 0;
  // An offline node (down, or powered off) takes no pods and draws no power.
  bool online = true;
  // Bumped on every change, so caches keyed by node can tell when they are stale.
  uint32_t version = 0;
  // Pods hosted per GPU affinity tag (see gpu_tag()).
  std::array<uint16_t, kGpuTagCount> pods_by_tag{};
};

// What the filter reads of every node, one column per field, so that a pass over the cluster
// (policy::fitting_nodes) is a few 32-bit compares per node that the compiler vectorises. Kept
// equal to the nodes' specs and states by the cluster. Values saturate at INT32_MAX; an offline
// node has cpu_free_milli -1 and a node without GPUs has -1 GPU room, so neither fits anything
// that needs them.
struct FitColumns {
  std::vector<int32_t> cpu_free_milli;
  std::vector<int32_t> memory_free_mib;
  std::vector<int32_t> max_gpu_free_milli;
  std::vector<int32_t> whole_free_gpus;
  std::vector<GpuModelId> model;
};

struct Allocation {
  NodeIndex node = -1;
  GpuMask gpus = 0;
  int32_t gpu_milli_each = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int tag = 0;
};

class Cluster {
 public:
  explicit Cluster(std::vector<NodeSpec> nodes);

  std::size_t size() const { return specs_.size(); }
  const NodeSpec& spec(NodeIndex n) const { return specs_[n]; }
  const NodeState& state(NodeIndex n) const { return states_[n]; }
  std::span<const NodeSpec> specs() const { return specs_; }
  const FitColumns& fit_columns() const { return fit_columns_; }

  int64_t total_gpu_milli() const { return total_gpu_milli_; }
  int64_t allocated_gpu_milli() const { return allocated_gpu_milli_; }
  int64_t total_cpu_milli() const { return total_cpu_milli_; }
  int64_t allocated_cpu_milli() const { return allocated_cpu_milli_; }
  int64_t total_memory_mib() const { return total_memory_mib_; }
  int64_t allocated_memory_mib() const { return allocated_memory_mib_; }
  // Free GPU milli summed over the nodes of each GPU model (offline nodes included).
  int64_t free_gpu_milli_of_model(GpuModelId model) const {
    return model < kMaxGpuModels ? free_gpu_milli_by_model_[model] : 0;
  }
  int total_gpus() const { return static_cast<int>(total_gpu_milli_ / kGpuMilli); }

  // Places `pod` (identified by `id`) on `node` using the GPUs in `gpus`: for a sharing pod one
  // GPU, for a k-GPU pod k whole free GPUs, for a CPU-only pod none. Fails without changing
  // anything if it would overcommit, if the mask does not match the request, or if `id` is
  // already placed.
  Status allocate(PodId id, const PodSpec& pod, NodeIndex node, GpuMask gpus);
  // Frees what `id` holds. Fails if it holds nothing.
  Status release(PodId id);
  std::optional<Allocation> allocation_of(PodId id) const;
  // The pods placed on a node, in id order (kept on every allocation and release, so that a
  // node's pods are found without a pass over every pod).
  std::span<const PodId> pods_on(NodeIndex node) const { return pods_on_[node]; }
  // Room for pods with ids below `count` (ids are dense: a replay's job indexes), so that
  // their records are not over-allocated by growth.
  void reserve_pods(std::size_t count) { record_of_pod_.reserve(count); }
  // Takes a node offline (it must host no pod) or back online.
  Status set_online(NodeIndex node, bool online);
  // Every placed pod, in id order (for explanations; not on the scheduling path).
  template <typename Fn>
  void for_each_allocation(Fn&& fn) const {
    for (std::size_t id = 0; id < record_of_pod_.size(); ++id) {
      const uint32_t r = record_of_pod_[id];
      if (r != kNoRecord) fn(static_cast<PodId>(id), records_[r].unpack());
    }
  }
  // Recomputes the derived fields of a node state after its free shares were edited.
  static void refresh_derived(NodeState& s, int gpu_count);

  // Every change of a node is journalled, so that an index over the nodes (policy::NodeClasses)
  // applies only what changed. change_count() counts the changes since construction;
  // changes_since(seq) gives the nodes changed after the first `seq` changes, in order (a node
  // may repeat), or nullopt when the journal no longer reaches back that far (it is cut when
  // it outgrows twice the node count): rebuild from the states then.
  uint64_t change_count() const { return journal_base_ + journal_.size(); }
  std::optional<std::span<const NodeIndex>> changes_since(uint64_t seq) const;
  // Distinct for every cluster object (a copy gets a new one), so that an index can tell that
  // it is handed another cluster.
  uint64_t instance() const { return instance_.value; }

 private:
  struct InstanceId {
    uint64_t value = next();
    InstanceId() = default;
    InstanceId(const InstanceId&) : value(next()) {}
    InstanceId& operator=(const InstanceId&) {
      value = next();
      return *this;
    }
    static uint64_t next();
  };
  InstanceId instance_;
  std::vector<NodeIndex> journal_;
  uint64_t journal_base_ = 0;

  std::vector<NodeSpec> specs_;
  std::vector<NodeState> states_;
  FitColumns fit_columns_;
  void sync_fit_columns(NodeIndex n);
  // What a placed pod holds, packed (32 bytes instead of an optional Allocation's 48). Only
  // placed pods hold a record (a replay of millions of jobs runs a few hundred thousand at a
  // time); each pod id keeps the 4-byte number of its record, kNoRecord when it holds nothing.
  struct StoredAllocation {
    int64_t cpu_milli = 0;
    int64_t memory_mib = 0;
    NodeIndex node = -1;
    GpuMask gpus = 0;
    int32_t gpu_milli_each = 0;
    int32_t tag = 0;
    Allocation unpack() const {
      return Allocation{node, gpus, gpu_milli_each, cpu_milli, memory_mib, tag};
    }
  };
  static constexpr uint32_t kNoRecord = UINT32_MAX;
  std::vector<uint32_t> record_of_pod_;  // indexed by PodId
  std::vector<StoredAllocation> records_;
  std::vector<uint32_t> free_records_;
  std::vector<std::vector<PodId>> pods_on_;  // per node, ascending
  int64_t total_gpu_milli_ = 0;
  int64_t total_cpu_milli_ = 0;
  int64_t allocated_cpu_milli_ = 0;
  int64_t total_memory_mib_ = 0;
  int64_t allocated_memory_mib_ = 0;
  int64_t allocated_gpu_milli_ = 0;
  std::array<int64_t, kMaxGpuModels> free_gpu_milli_by_model_{};
};

}  // namespace greensched
