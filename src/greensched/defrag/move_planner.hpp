// Bounded migration: the fewest moves of running pods that let a pod fit which fits nowhere,
// and the moves that free the most usable GPU capacity. The simulator (inflation and replay),
// the extender's /v1/defrag and `explain` all plan with this one class.
//
// How a plan for pod P is searched, and why it is bounded:
//  1. Every online node that could host P if it were empty (GPU model, GPU count, CPU and
//     memory capacity) is a candidate. For each, an eviction set is built in closed form: for
//     k whole GPUs, the k GPUs whose pods' union is smallest (every k-subset of the node's
//     GPUs; at most C(8,4) = 70); for a share, the one GPU needing the fewest evictions,
//     largest shares first; then, if CPU or memory still binds, the pods that free the most of
//     it. Only movable pods (a caller's predicate) may be evicted. A pod that fits nowhere else
//     as the cluster stands costs two moves (it needs a chain, step 4), one that does costs one.
//  2. Candidates are ranked by moves, then by GPU milli moved (less work disturbed), then by
//     the scheduler's tie order; sets larger than the caller's limit are dropped. Only the best
//     `max_trials` are kept as the nodes are passed over (no sort of them all).
//  3. They are tried for real, in order: evict the set, place P on the node with the policy's
//     GPU choice, then re-place each evicted pod (largest first) where the policy's own
//     scheduling cycle puts it. The first trial in which every pod lands is the plan; a failed
//     trial is undone exactly.
//  4. Chains: an evicted pod that lands nowhere is given room by the same search one level
//     down (chain_depth), within the moves left, moving only pods that fit elsewhere, with a
//     quarter of the trials; at most 4 such searches per plan.
// The search is bounded because every step is: eviction sets are closed-form per node, moves
// per plan are capped by the budget, at most max_trials placements are simulated per level
// and at most 4 chain searches per plan, so a plan costs at most 5 x (O(nodes x C(gpus, k)) +
// max_trials x a scheduling cycle) whatever the cluster's state. It is greedy, not optimal.
//
// What makes a pass over the nodes cheap, without changing what it finds: a node's pods come
// from the cluster's per-node index (Cluster::pods_on); what a node's eviction set reads of
// them (what each holds, kept apart and small; which use each GPU, shares largest first) is
// kept per node and rebuilt only when the node's version moves on (Cluster bumps it on every
// allocation and release). Whether a pod fits elsewhere (moves directly) is its memory request
// against its shape's room, the most free memory among the nodes that fit the rest of the
// shape: each shape's room is brought up to date from the nodes the cluster's journal says
// changed since (measured again only when the node that had the most room lost some), and a
// node's mask of pods that move directly is kept until the node changes or some room crosses
// the memory request of a pod of its shape seen (a generation count; a shape id whose pods
// differ in their fields is looked up every time). Per node one bit, kept in step through the
// journal, says whether it holds a pod that moves directly. Nodes are passed over without
// building their sets where a bound shows that the set could not be kept: the passes are in
// node order, and once `max_trials` sets are kept, a node is passed over when the least key
// its set could have ranks after all of them: one move if it holds a pod that moves directly
// whose eviction alone might free enough (CPU, memory, GPU room or GPUs it holds alone), else
// two; the GPU milli its GPUs lack. A set is not finished once it costs more than the last
// kept. Without chains, a node none of whose pods moves directly (its GPU pods, unless its
// GPUs have room already) has no set. A request that found no plan is not searched again
// until a pod leaves or moves (forget_failures), nor is any request for as much or more.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/policy/scheduler.hpp"

namespace greensched::defrag {

// One move: pod `pod` leaves `from` (GPUs `from_gpus`) for `to` (GPUs `to_gpus`).
struct Move {
  PodId pod = 0;
  NodeIndex from = -1;
  GpuMask from_gpus = 0;
  NodeIndex to = -1;
  GpuMask to_gpus = 0;
  int64_t gpu_milli = 0;  // the moved pod's GPU request
};

// A plan that lets a pod fit: the moves, in the order they are carried out, then the pod on
// `node` with `gpus`.
struct FitPlan {
  std::vector<Move> moves;
  NodeIndex node = -1;
  GpuMask gpus = 0;
  int32_t candidates = 0;  // nodes whose set was built and small enough (a bound may pass over
                           // others: see MovePlanner::set_exhaustive)
  int32_t trials = 0;      // of which were tried
};

struct PlannerLimits {
  int max_moves = 4;   // per plan
  int max_trials = 8;  // eviction sets placed for real before giving up
  // Chains: an evicted pod that fits nowhere may itself be given room by moving others, this
  // many levels deep (0: every evicted pod must land where there is room already).
  int chain_depth = 1;
};

// The spec of a placed pod (nullptr when unknown: it is then never moved).
using PodLookup = std::function<const PodSpec*(PodId)>;
// Whether a placed pod may be moved (e.g. annotated movable, no PodDisruptionBudget at zero).
using Movable = std::function<bool(PodId)>;

class MovePlanner {
 public:
  // `pod_of` must give the same spec for a placed pod while it stays on its node (the planner
  // keeps what it read until the node changes); `movable` is asked again at every fit.
  MovePlanner(PodLookup pod_of, Movable movable = {});

  // The plan that lets `pod` fit with the fewest moves within `limits`, carried out on
  // `cluster` (the caller then updates whatever tracks the touched nodes: Move::from, Move::to
  // and the plan's node), or nullopt with the cluster unchanged. The scheduler's policy
  // chooses where evicted pods go and which GPUs every pod takes; its tie order ranks equal
  // candidates. Pods needing no GPU are not planned for.
  // The pod is placed under `id`.
  std::optional<FitPlan> fit(Cluster& cluster, PodId id, const PodSpec& pod,
                             policy::Scheduler& scheduler, Rng& rng, const PlannerLimits& limits);

  // Call when a pod leaves the cluster: requests that found no plan are searched again.
  // (While pods only arrive, room only shrinks, so a request that found no plan finds none
  // later, nor does any request for as much or more: fit does not search them until a pod
  // leaves or is moved.)
  void forget_failures() { failed_.clear(); }

  // Undoes a plan carried out by fit (pod `id` must have been placed with it): the pod is
  // released and every moved pod returns where it was.
  Status undo(Cluster& cluster, PodId id, const FitPlan& plan);

  // Builds the eviction set of every node that could host the pod, none ruled out by a bound
  // first: the same plans, slower (to check the bounds against).
  void set_exhaustive(bool on) { exhaustive_ = on; }

 private:
  struct Eviction {
    NodeIndex node = -1;
    std::vector<PodId> pods;
    int64_t gpu_milli = 0;
    int cost = 0;  // moves it is expected to take: 1 per pod, 2 per pod needing a chain
  };
  // A node's pods, in id order (Cluster::pods_on), with what planning reads of them.
  struct LocalPod {
    PodId id = 0;
    const PodSpec* spec = nullptr;
    uint32_t shape = 0;  // the spec's dense shape id, fields and memory request
    PodShape fields;
    int64_t memory_request = 0;
  };
  // What a pod holds, which is all an eviction set reads of it (kept apart and small: a pass
  // reads it for many nodes).
  struct HeldPod {
    int64_t cpu_milli = 0;
    int64_t memory_mib = 0;
    int64_t held_milli = 0;
    int32_t milli_each = 0;
  };
  // What deciding whether a pod fits elsewhere reads (kept apart: it is read per pod and search).
  struct RoomNeed {
    uint32_t shape = 0;
    int64_t memory = 0;
  };
  // Per node, rebuilt when the node's version moves on: its pods, which use each GPU, and each
  // GPU's pods largest share first. What a pass over the nodes reads first comes first.
  struct NodeCache {
    bool valid = false;
    bool too_many = false;  // more pods than eviction sets consider
    // Whether `direct` may be kept while room_gen_ stays (no pod of a shape id whose pods
    // differ in their fields: their rooms are not followed by refresh_rooms).
    bool direct_kept = false;
    uint32_t version = 0;
    // Pods that may move (known and movable), as asked in the fit `movable_stamp`.
    uint64_t movable = 0;
    uint64_t movable_stamp = 0;
    // Known pods that fit elsewhere as the cluster stands, as of room generation `direct_gen`
    // (0: not yet).
    uint64_t direct = 0;
    uint64_t direct_gen = 0;
    // What evicting one pod of `one_of` (its pods that move directly and may move) alone frees
    // at most (one_move_may_do): CPU, memory, the most a GPU then has free, and the most GPUs
    // the pod holds alone.
    bool one_valid = false;
    uint64_t one_of = 0;
    int64_t one_cpu = -1;
    int64_t one_memory = -1;
    int32_t one_share_room = -1;
    int32_t one_whole = 0;
    uint64_t on_any_gpu = 0;      // pods holding a GPU
    uint64_t known = 0;           // pods with a spec
    std::vector<HeldPod> held;    // per pod
    std::vector<LocalPod> pods;   // per pod
    std::vector<RoomNeed> rooms;  // per pod
    std::array<uint64_t, kMaxGpusPerNode> on_gpu{};
    // GPU g's pods (local indexes), largest share first: order()[begin[g]] .. [begin[g+1]),
    // in the node's own bytes when they are few.
    std::array<uint16_t, kMaxGpusPerNode + 1> begin{};
    std::array<uint8_t, 48> order_inline{};
    std::vector<uint8_t> order_spill;
    const uint8_t* order() const {
      return order_spill.empty() ? order_inline.data() : order_spill.data();
    }
  };
  NodeCache& cached(const Cluster& cluster, NodeIndex node);
  // Eviction sets rank by (moves, GPU milli moved, tie order), packed so that a smaller key
  // ranks first.
  static uint64_t rank_key(int cost, int64_t milli, uint32_t rank) {
    constexpr int64_t kMilliMax = (int64_t{1} << 24) - 1;
    return (uint64_t(std::min(cost, 255)) << 56) |
           (uint64_t(std::clamp<int64_t>(milli, 0, kMilliMax)) << 32) | rank;
  }
  // A node's eviction set: its pods by local index (in the node's cache).
  struct Choice {
    uint64_t set = 0;
    int cost = 0;
    int64_t gpu_milli = 0;
  };
  std::optional<Choice> eviction_for(const Cluster& cluster, NodeIndex node, const NodeCache& c,
                                     uint64_t direct, const PodSpec& pod, int max_moves,
                                     bool chains);
  // Whether one move (a pod of the node that moves directly) might let the pod in: false
  // when no such pod's eviction alone frees enough, i.e. the node's set costs two or more.
  bool one_move_may_do(const Cluster& cluster, NodeIndex node, NodeCache& c, const PodSpec& pod);
  // The node's known pods that fit elsewhere as the cluster stands (refresh_rooms first).
  uint64_t direct_of(const Cluster& cluster, NodeCache& c);
  // Brings every followed shape's room up to the cluster's change count, and moves room_gen_ on
  // when a room crossed the memory request of a pod of its shape seen (a kept `direct` bit may
  // then be wrong).
  void refresh_rooms(const Cluster& cluster);
  // Brings direct_nodes_ up to the cluster's change count (refresh_rooms first).
  void sync_direct_nodes(const Cluster& cluster);
  // Whether a node could host the pod if it were empty.
  static bool could_host(const Cluster& cluster, NodeIndex node, const PodSpec& pod);
  // The least GPU milli an eviction set of the node moves (its GPUs' free milli as they are).
  static int64_t least_moved_milli(const Cluster& cluster, NodeIndex node, const PodSpec& pod);
  std::optional<FitPlan> search(Cluster& cluster, PodId id, const PodSpec& pod,
                                policy::Scheduler& scheduler, Rng& rng, const PlannerLimits& limits,
                                int depth);
  // The most free memory among the nodes that fit a request of this shape but for its memory.
  int64_t room_of(const Cluster& cluster, uint32_t shape_id, const PodShape& shape);
  bool try_eviction(Cluster& cluster, const PodSpec& pod, PodId id, const Eviction& e,
                    policy::Scheduler& scheduler, Rng& rng, const PlannerLimits& limits, int depth,
                    FitPlan& plan);

  // Chain searches one plan may run (each a pass over every node), whatever the depth.
  static constexpr int kChainSearches = 4;
  int chain_searches_left_ = 0;
  bool exhaustive_ = false;
  PodLookup pod_of_;
  Movable movable_;
  std::vector<NodeCache> cache_;
  uint64_t fit_stamp_ = 0;
  uint64_t summary_instance_ = 0;
  struct FitKey {
    PodShape shape;
    int64_t memory_mib = 0;
  };
  // Per request shape: the most free memory among the nodes that fit the rest of it (at
  // `most_at`), as of the cluster's change `seq` (room_of).
  struct RoomMemo {
    bool valid = false;
    uint64_t seq = 0;
    PodShape shape;
    int64_t most_free_memory_mib = -1;
    NodeIndex most_at = -1;
  };
  std::vector<RoomMemo> room_memo_;
  static const RoomMemo kNoMemo;
  // Per shape id: 0 unseen, 1 seen with these fields, 2 seen with different ones.
  std::vector<std::pair<uint8_t, PodShape>> shape_seen_;
  // Per shape id: the memory requests of its pods seen, ascending, and its room as of the last
  // refresh_rooms (kUnfollowed: not yet).
  std::vector<std::vector<int64_t>> shape_memories_;
  std::vector<int64_t> room_followed_;
  static constexpr int64_t kUnfollowed = std::numeric_limits<int64_t>::min();
  uint64_t room_gen_ = 1;
  // One bit per node: it holds a movable pod that may move directly, or its `direct` is not
  // kept (a superset: a search without chains passes over the others). As of change count
  // `direct_nodes_seq_`, room generation and fit (when movability is asked); only the nodes
  // the journal says changed since are looked at again, unless those moved on.
  std::vector<uint64_t> direct_nodes_;
  uint64_t direct_nodes_seq_ = std::numeric_limits<uint64_t>::max();
  uint64_t direct_nodes_gen_ = 0;
  uint64_t direct_nodes_fit_ = 0;
  uint64_t rooms_seq_ = std::numeric_limits<uint64_t>::max();  // change count of the last refresh
  PodSpec probe_;                   // scratch: a request without its memory
  std::vector<NodeIndex> fitting_;  // scratch for the filter pass
  // Requests that found no plan since the last move or departure.
  // With the most moves each was searched with. A request asking for at least as much of
  // everything as one of them (and no more GPU models) finds no plan either.
  std::vector<std::pair<FitKey, int>> failed_;
  uint64_t failed_instance_ = 0;
};

}  // namespace greensched::defrag
