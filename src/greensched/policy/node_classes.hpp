// Node equivalence classes: the nodes a policy cannot tell apart, scored once per pod.
//
// Two nodes share a class when the filter's fields of their specs and states (free CPU, the
// free GPU shares as a multiset, GPU model and count, online), the parts of the rest that the
// policy's score reads (Policy::class_key_parts) and the policy's node tag are equal: the policy
// gives them the same score for every pod (Policy::scores_by_class). A class
// keeps its members in the run's tie order, so the node a pass over every node would pick (the
// best score, then the first in tie order) is, among the best-scoring classes, the first member
// that passes the filter; only free memory, when it is not in the key, can differ inside a
// class, and the class keeps the largest so that the filter can rule a class out whole.
//
// The classes follow the cluster through its change journal: each sync costs the changed
// nodes, and a scheduling cycle costs the number of classes instead of the number of nodes.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/policy/policy.hpp"

namespace greensched::policy {

class NodeClasses {
 public:
  // `tie_rank` must outlive this object.
  NodeClasses(const Policy& policy, std::span<const uint32_t> tie_rank);

  // Brings the classes up to date with `cluster` (a full build the first time, for another
  // cluster, or when the cluster's journal no longer reaches back to the last sync).
  void sync(const Cluster& cluster);

  // The live classes, densely numbered 0..size()-1 (numbers change as classes come and go).
  std::size_t size() const { return reps_.size(); }
  // One member of class i: its score is every member's.
  NodeIndex representative(std::size_t i) const { return reps_[i]; }
  // The representative's tie rank: no member of class i ranks before it.
  uint32_t representative_rank(std::size_t i) const { return rep_rank_[i]; }

  // Filter columns per class, as Cluster::FitColumns per node (saturated at INT32_MAX;
  // offline: cpu -1; no GPUs: -1 room), the memory one the largest free among the members.
  struct Columns {
    std::vector<int32_t> cpu_free_milli;
    std::vector<int32_t> max_memory_free_mib;
    std::vector<int32_t> max_gpu_free_milli;
    std::vector<int32_t> whole_free_gpus;
    std::vector<GpuModelId> model;
  };
  const Columns& columns() const { return columns_; }

  // The first member of class i in tie order with at least `memory_mib` free, or -1.
  NodeIndex first_fitting(std::size_t i, int64_t memory_mib) const;

  // The members of class i, in tie order.
  std::span<const NodeIndex> members(std::size_t i) const;

  // Class i's generation: distinct for every class ever made (never 0, even across
  // rebuilds), so that a value kept for position i with its generation tells whether it is
  // still that class's (positions move as classes come and go).
  uint64_t generation(std::size_t i) const { return generation_of_dense_[i]; }

  // Stable ids: a class keeps its slot (0..slot_count()-1) for as long as it lives, and a slot
  // freed by a class that went away is reused by a later one. slot_generation is 0 for a free
  // slot, else the generation of the class in it.
  std::size_t slot_count() const { return classes_.size(); }
  // A class's filter columns bar memory, as Columns holds them (fixed for the class's life).
  struct FilterColumns {
    int32_t cpu_free_milli = 0;
    int32_t max_gpu_free_milli = 0;
    int32_t whole_free_gpus = 0;
    GpuModelId model = kNoGpuModel;
  };
  // What readers of the slots look up, packed (a Class is large): the class's generation (0
  // when the slot is free), its dense position, and its filter columns.
  struct SlotInfo {
    uint64_t generation = 0;
    uint32_t dense = 0;
    FilterColumns filter;
  };
  const SlotInfo& slot_info(uint32_t slot) const { return slot_info_[slot]; }
  uint64_t slot_generation(uint32_t slot) const { return slot_info_[slot].generation; }
  // Dense position of the live class in `slot`, and the slot of dense position i.
  std::size_t dense_of_slot(uint32_t slot) const { return slot_info_[slot].dense; }
  uint32_t slot_of(std::size_t i) const { return slot_of_dense_[i]; }

  // The log of classes made: the slot of every class made, in order, numbered from 0 over the
  // object's life (a class gone since leaves its entry; its slot's generation tells). A reader
  // keeps the number up to which it has read; entries before log_begin() are gone (the log is
  // cut when it grows past 16 entries per class, and at least 65,536), and a reader from
  // before then, or from another epoch(), must look at every class again. epoch() grows at
  // every full rebuild, after which slots are numbered afresh.
  uint64_t log_begin() const { return log_base_; }
  uint64_t log_end() const { return log_base_ + log_.size(); }
  // The entries from `from` (log_begin() <= from <= log_end()) on.
  // An entry: the class's slot and generation (the class is still live while its slot has
  // that generation) and its filter columns bar memory, so that a reader filters the entries
  // without looking the slots up.
  struct Made {
    uint64_t generation = 0;
    uint32_t slot = 0;
    FilterColumns filter;
  };
  std::span<const Made> made_since(uint64_t from) const {
    return std::span<const Made>(log_).subspan(static_cast<std::size_t>(from - log_base_));
  }
  uint64_t epoch() const { return epoch_; }

 private:
  // spec (3 words), free CPU and memory (2), pods, online and tag (1), free GPU shares (2 per
  // word), pods per GPU tag (4 per word); a part the policy does not read is left 0.
  static constexpr std::size_t kKeyWords = 6 + (kMaxGpusPerNode + 1) / 2 + (kGpuTagCount + 3) / 4;
  using Key = std::array<uint64_t, kKeyWords>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  struct Class {
    Key key{};
    std::vector<NodeIndex> members;  // sorted by tie rank
    int64_t max_memory = -1;
    uint32_t at_max = 0;      // members whose free memory is max_memory
    uint32_t dense = 0;       // position in the dense columns
    uint64_t generation = 0;  // 0 while the slot is free
  };

  Key key_of(const Cluster& cluster, NodeIndex n) const;
  void rebuild(const Cluster& cluster);
  void add(const Cluster& cluster, NodeIndex n, const Key& key);
  void remove(NodeIndex n);
  void rescan_memory(Class& c) const;

  const Policy& policy_;
  std::span<const uint32_t> tie_rank_;
  uint32_t parts_;  // Policy::class_key_parts()
  uint64_t instance_ = 0;
  uint64_t seq_ = 0;

  std::vector<Class> classes_;  // by slot; free slots are reused
  std::vector<uint32_t> free_slots_;
  // The slot of each key: open addressing with linear probing, at most half full (a node
  // changes class at almost every change, and a node-based map misses the cache twice).
  struct KeySlot {
    uint32_t hash = 0;
    uint32_t slot_plus_1 = 0;  // 0: empty
  };
  std::vector<KeySlot> table_;  // size a power of two
  std::size_t table_used_ = 0;
  // The entry of `key`, or the empty one where it would go.
  std::size_t find_key(const Key& key, uint32_t hash) const;
  void grow_table();
  void erase_key(const Key& key);
  std::vector<uint32_t> slot_of_node_;
  std::vector<int64_t> memory_of_node_;  // free memory when last synced
  std::vector<uint32_t> seen_;           // sync stamp per node, to apply each change once
  uint32_t stamp_ = 0;
  uint64_t generations_ = 0;  // classes made so far
  std::vector<SlotInfo> slot_info_;
  std::vector<Made> log_;  // classes made (see made_since)
  uint64_t log_base_ = 0;  // number of log_'s first entry
  uint64_t epoch_ = 0;

  // Dense, by class position.
  std::vector<NodeIndex> reps_;
  std::vector<uint32_t> rep_rank_;
  std::vector<uint32_t> slot_of_dense_;
  std::vector<uint64_t> generation_of_dense_;
  Columns columns_;
};

}  // namespace greensched::policy
