#include "greensched/defrag/move_planner.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "greensched/policy/filter.hpp"

namespace greensched::defrag {
namespace {

// Pods on one node beyond this are not considered for eviction sets (the masks are 64-bit).
constexpr std::size_t kMaxPodsPerNode = 64;

// std::popcount without a popcount instruction to rely on (the build targets plain x86-64).
int count_bits(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// The GPU milli a placed pod holds.
int64_t held_gpu_milli(const Allocation& a) {
  return int64_t{gpu_mask_count(a.gpus)} * a.gpu_milli_each;
}

}  // namespace

const MovePlanner::RoomMemo MovePlanner::kNoMemo{};

MovePlanner::MovePlanner(PodLookup pod_of, Movable movable)
    : pod_of_(std::move(pod_of)), movable_(std::move(movable)) {}

MovePlanner::NodeCache& MovePlanner::cached(const Cluster& cluster, NodeIndex node) {
  NodeCache& c = cache_[static_cast<std::size_t>(node)];
  const uint32_t version = cluster.state(node).version;
  if (!c.valid || c.version != version) {
    c.valid = true;
    c.version = version;
    c.movable_stamp = 0;
    c.direct_gen = 0;
    c.one_valid = false;
    c.held.clear();
    c.pods.clear();
    c.rooms.clear();
    c.order_spill.clear();
    c.on_gpu.fill(0);
    c.known = 0;
    c.on_any_gpu = 0;
    const std::span<const PodId> here = cluster.pods_on(node);
    c.too_many = here.size() > kMaxPodsPerNode;
    if (c.too_many) return c;
    for (std::size_t i = 0; i < here.size(); ++i) {
      const PodId id = here[i];
      const Allocation a = *cluster.allocation_of(id);
      const PodSpec* spec = pod_of_(id);
      LocalPod l;
      l.id = id;
      l.spec = spec;
      if (spec != nullptr) {
        c.known |= uint64_t{1} << i;
        l.shape = spec->shape;
        l.fields = spec->shape_fields();
        l.memory_request = spec->memory_mib;
      }
      c.held.push_back(HeldPod{a.cpu_milli, a.memory_mib, held_gpu_milli(a), a.gpu_milli_each});
      c.pods.push_back(l);
      RoomNeed r{l.shape, l.memory_request};
      if (spec != nullptr) {
        // A shape id whose pods differ in their fields is looked up with them every time.
        if (l.shape >= shape_seen_.size()) {
          shape_seen_.resize(std::size_t{l.shape} + 1);
          shape_memories_.resize(std::size_t{l.shape} + 1);
          room_followed_.resize(std::size_t{l.shape} + 1, kUnfollowed);
        }
        auto& [seen, fields] = shape_seen_[l.shape];
        if (seen == 0) {
          seen = 1;
          fields = l.fields;
        } else if (seen == 1 && fields != l.fields) {
          seen = 2;
          ++room_gen_;  // its room is no longer followed: no kept `direct` may rely on it
          room_followed_[l.shape] = kUnfollowed;
        }
        // Every pod of a kept `direct` has its memory request here (a crossing is seen).
        auto& memories = shape_memories_[l.shape];
        const auto at = std::lower_bound(memories.begin(), memories.end(), l.memory_request);
        if (at == memories.end() || *at != l.memory_request) memories.insert(at, l.memory_request);
      }
      if (a.gpus != 0) c.on_any_gpu |= uint64_t{1} << i;
      c.rooms.push_back(r);
      for (int g = 0; g < kMaxGpusPerNode; ++g) {
        if ((a.gpus >> g) & 1U) c.on_gpu[static_cast<std::size_t>(g)] |= uint64_t{1} << i;
      }
    }
    // Each GPU's pods, largest share first (then the later pod first).
    const int gpu_count = cluster.spec(node).gpu_count;
    std::size_t total = 0;
    for (int g = 0; g < gpu_count; ++g) total += count_bits(c.on_gpu[static_cast<std::size_t>(g)]);
    if (total > c.order_inline.size()) c.order_spill.resize(total);
    uint8_t* order = total > c.order_inline.size() ? c.order_spill.data() : c.order_inline.data();
    uint16_t next = 0;
    for (int g = 0; g < gpu_count; ++g) {
      const auto gi = static_cast<std::size_t>(g);
      std::array<std::pair<int32_t, int>, kMaxPodsPerNode> users;
      std::size_t count = 0;
      for (uint64_t b = c.on_gpu[gi]; b != 0; b &= b - 1) {
        const int i = std::countr_zero(b);
        users[count++] = {c.held[static_cast<std::size_t>(i)].milli_each, i};
      }
      std::sort(users.begin(), users.begin() + static_cast<std::ptrdiff_t>(count),
                std::greater<>());
      c.begin[gi] = next;
      for (std::size_t u = 0; u < count; ++u) order[next++] = static_cast<uint8_t>(users[u].second);
    }
    c.begin[static_cast<std::size_t>(gpu_count)] = next;
  }
  // Which may move is asked once per fit (it may change while a node does not).
  if (c.movable_stamp != fit_stamp_) {
    c.movable_stamp = fit_stamp_;
    c.movable = c.known;
    if (movable_) {
      for (uint64_t b = c.known; b != 0; b &= b - 1) {
        const int i = std::countr_zero(b);
        if (!movable_(c.pods[static_cast<std::size_t>(i)].id)) c.movable &= ~(uint64_t{1} << i);
      }
    }
  }
  return c;
}

int64_t MovePlanner::room_of(const Cluster& cluster, uint32_t shape_id, const PodShape& shape) {
  // Another GPU of its own node counts: moving within a node may free the GPU. Per request
  // shape (the pod's dense shape id, its fields checked): the most free memory among the nodes
  // that fit the rest of the request. The pod fits somewhere iff its memory is within it. One
  // filter pass per shape; after that the nodes changed since (the cluster's journal) update
  // it, unless the node that had the most lost room.
  if (shape_id >= room_memo_.size()) room_memo_.resize(std::size_t{shape_id} + 1);
  RoomMemo& m = room_memo_[shape_id];
  const uint64_t now = cluster.change_count();
  if (m.valid && m.shape == shape && m.seq == now) return m.most_free_memory_mib;
  probe_.cpu_milli = shape.cpu_milli;
  probe_.memory_mib = 0;
  probe_.num_gpu = shape.num_gpu;
  probe_.gpu_milli = shape.gpu_milli;
  probe_.gpu_spec = shape.gpu_spec;
  bool exact = m.valid && m.shape == shape;
  if (exact) {
    const auto changed = cluster.changes_since(m.seq);
    exact = changed.has_value();
    if (exact) {
      for (const NodeIndex n : *changed) {
        const NodeState& s = cluster.state(n);
        const bool fits =
            policy::filter_node(cluster.spec(n), s, probe_) == policy::FilterReason::kFits;
        if (n == m.most_at) {
          if (!fits || s.memory_free_mib < m.most_free_memory_mib) {
            exact = false;  // the most may now be elsewhere: measure again
            break;
          }
          m.most_free_memory_mib = s.memory_free_mib;
        } else if (fits && s.memory_free_mib > m.most_free_memory_mib) {
          m.most_free_memory_mib = s.memory_free_mib;
          m.most_at = n;
        }
      }
    }
  }
  if (!exact) {
    fitting_.resize(cluster.size());
    const std::size_t count = policy::fitting_nodes(cluster, probe_, fitting_);
    int64_t most = -1;
    NodeIndex at = -1;
    for (std::size_t i = 0; i < count; ++i) {
      const int64_t free = cluster.state(fitting_[i]).memory_free_mib;
      if (free > most) {
        most = free;
        at = fitting_[i];
      }
    }
    m = RoomMemo{true, now, shape, most, at};
  }
  m.seq = now;
  return m.most_free_memory_mib;
}

bool MovePlanner::could_host(const Cluster& cluster, NodeIndex node, const PodSpec& pod) {
  const NodeSpec& spec = cluster.spec(node);
  return cluster.state(node).online && spec.gpu_count >= pod.num_gpu &&
         spec.cpu_milli >= pod.cpu_milli && spec.memory_mib >= pod.memory_mib &&
         model_allowed(pod.gpu_spec, spec.model);
}

int64_t MovePlanner::least_moved_milli(const Cluster& cluster, NodeIndex node, const PodSpec& pod) {
  // A share: its GPU's pods must free what the GPU with the most free lacks. k whole GPUs: the
  // pods on the k GPUs with the most free hold at least what those GPUs lack. Evicting more
  // (for CPU or memory) only adds.
  const NodeState& s = cluster.state(node);
  if (pod.gpu_milli < kGpuMilli) return std::max<int64_t>(0, pod.gpu_milli - s.max_gpu_free_milli);
  const int count = std::clamp(cluster.spec(node).gpu_count, 0, kMaxGpusPerNode);
  const int k = std::min(pod.num_gpu, count);
  std::array<int32_t, kMaxGpusPerNode> free = s.gpu_free_milli;
  std::partial_sort(free.begin(), free.begin() + k, free.begin() + count, std::greater<>());
  int64_t most_free = 0;
  for (int g = 0; g < k; ++g) most_free += free[static_cast<std::size_t>(g)];
  return std::max<int64_t>(0, int64_t{k} * kGpuMilli - most_free);
}

void MovePlanner::refresh_rooms(const Cluster& cluster) {
  const uint64_t now = cluster.change_count();
  if (now == rooms_seq_) return;
  rooms_seq_ = now;
  for (uint32_t shape = 0; shape < shape_seen_.size(); ++shape) {
    const auto& [seen, fields] = shape_seen_[shape];
    int64_t& followed = room_followed_[shape];
    if (seen != 1 || followed == kUnfollowed) continue;
    const int64_t room = room_of(cluster, shape, fields);
    if (room == followed) continue;
    // A pod's bit is (memory <= room): it flips iff its memory is in (lower, upper].
    const auto& memories = shape_memories_[shape];
    const auto crossed =
        std::upper_bound(memories.begin(), memories.end(), std::min(room, followed));
    if (crossed != memories.end() && *crossed <= std::max(room, followed)) ++room_gen_;
    followed = room;
  }
}

uint64_t MovePlanner::direct_of(const Cluster& cluster, NodeCache& c) {
  if (c.direct_gen == room_gen_ && c.direct_kept) return c.direct;
  uint64_t direct = 0;
  const uint64_t now = cluster.change_count();
  bool kept = rooms_seq_ == now;  // the followed rooms are as of now
  for (uint64_t b = c.known; b != 0; b &= b - 1) {
    const int i = std::countr_zero(b);
    const RoomNeed& r = c.rooms[static_cast<std::size_t>(i)];
    int64_t room = room_followed_[r.shape];
    if (!kept || room == kUnfollowed) {
      const bool one_kind = shape_seen_[r.shape].first == 1;
      // The memo as of now, for a shape id of one set of fields: no need to compare them.
      const RoomMemo& m = room_memo_.size() > r.shape ? room_memo_[r.shape] : kNoMemo;
      room = m.valid && m.seq == now && one_kind
                 ? m.most_free_memory_mib
                 : room_of(cluster, r.shape, c.pods[static_cast<std::size_t>(i)].fields);
      if (one_kind && kept) {
        room_followed_[r.shape] = room;
      } else {
        kept = false;
      }
    }
    if (r.memory <= room) direct |= uint64_t{1} << i;
  }
  c.direct = direct;
  c.direct_gen = room_gen_;
  c.direct_kept = kept;
  return direct;
}

void MovePlanner::sync_direct_nodes(const Cluster& cluster) {
  const uint64_t now = cluster.change_count();
  const uint64_t gen = room_gen_;  // a rebuild below may move it on: look again next time
  const bool same = direct_nodes_seq_ != std::numeric_limits<uint64_t>::max() &&
                    direct_nodes_gen_ == gen && (!movable_ || direct_nodes_fit_ == fit_stamp_);
  const auto update = [&](NodeIndex node) {
    NodeCache& c = cached(cluster, node);
    const bool may = !c.too_many && ((direct_of(cluster, c) & c.movable) != 0 || !c.direct_kept);
    const auto n = static_cast<std::size_t>(node);
    const uint64_t bit = uint64_t{1} << (n & 63U);
    direct_nodes_[n >> 6] = may ? direct_nodes_[n >> 6] | bit : direct_nodes_[n >> 6] & ~bit;
  };
  const auto changed = same ? cluster.changes_since(direct_nodes_seq_) : std::nullopt;
  if (changed) {
    for (const NodeIndex node : *changed) update(node);
  } else {
    direct_nodes_.assign((cluster.size() + 63) / 64, 0);
    for (std::size_t n = 0; n < cluster.size(); ++n) update(static_cast<NodeIndex>(n));
  }
  direct_nodes_seq_ = now;
  direct_nodes_gen_ = gen;
  direct_nodes_fit_ = fit_stamp_;
}

bool MovePlanner::one_move_may_do(const Cluster& cluster, NodeIndex node, NodeCache& c,
                                  const PodSpec& pod) {
  const uint64_t direct = direct_of(cluster, c) & c.movable;
  if (!c.one_valid || c.one_of != direct) {
    // Per pod that moves directly: what evicting it alone frees, at most.
    c.one_valid = true;
    c.one_of = direct;
    c.one_cpu = -1;
    c.one_memory = -1;
    c.one_share_room = -1;
    c.one_whole = 0;
    const NodeState& s = cluster.state(node);
    const int gpu_count = cluster.spec(node).gpu_count;
    std::array<int, kMaxPodsPerNode> alone{};  // GPUs each pod holds alone
    for (int g = 0; g < gpu_count; ++g) {
      const uint64_t users = c.on_gpu[static_cast<std::size_t>(g)];
      int32_t room = s.gpu_free_milli[static_cast<std::size_t>(g)];
      for (uint64_t b = users & direct; b != 0; b &= b - 1) {
        const auto i = static_cast<std::size_t>(std::countr_zero(b));
        room = std::max(room, s.gpu_free_milli[static_cast<std::size_t>(g)] + c.held[i].milli_each);
      }
      c.one_share_room = std::max(c.one_share_room, room);
      if (users != 0 && (users & (users - 1)) == 0)
        ++alone[static_cast<std::size_t>(std::countr_zero(users))];
    }
    for (uint64_t b = direct; b != 0; b &= b - 1) {
      const auto i = static_cast<std::size_t>(std::countr_zero(b));
      c.one_cpu = std::max(c.one_cpu, c.held[i].cpu_milli);
      c.one_memory = std::max(c.one_memory, c.held[i].memory_mib);
      c.one_whole = std::max(c.one_whole, alone[i]);
    }
  }
  if (direct == 0) return false;
  const NodeState& s = cluster.state(node);
  const bool gpus = pod.gpu_milli < kGpuMilli ? c.one_share_room >= pod.gpu_milli
                                              : s.whole_free_gpus + c.one_whole >= pod.num_gpu;
  return gpus && s.cpu_free_milli + c.one_cpu >= pod.cpu_milli &&
         s.memory_free_mib + c.one_memory >= pod.memory_mib;
}

std::optional<MovePlanner::Choice> MovePlanner::eviction_for(const Cluster& cluster, NodeIndex node,
                                                             const NodeCache& c, uint64_t direct,
                                                             const PodSpec& pod, int max_moves,
                                                             bool chains) {
  const NodeSpec& spec = cluster.spec(node);
  const NodeState& s = cluster.state(node);
  if (c.too_many) return std::nullopt;
  const auto& here = c.held;
  // Which local pods may move (`direct`: those that fit somewhere as the cluster stands, beside
  // themselves; with chains, the others too, at twice the cost).
  if (c.movable == 0) return std::nullopt;  // no set but the empty one
  direct &= c.movable;
  const uint64_t movable = chains ? c.movable : direct;
  if (movable == 0) return std::nullopt;
  const auto& on_gpu = c.on_gpu;
  const auto cost_of = [&](uint64_t set) { return count_bits(set) + count_bits(set & ~direct); };
  const auto moved_milli = [&](uint64_t set) {
    int64_t m = 0;
    for (uint64_t b = set; b != 0; b &= b - 1) m += here[std::countr_zero(b)].held_milli;
    return m;
  };

  // The smallest set of movable pods whose eviction lets the pod in, if any. Better: fewer
  // expected moves, then less GPU milli moved.
  uint64_t best = 0;
  int best_cost = 0;
  int64_t best_milli = 0;
  bool found = false;
  const auto consider = [&](uint64_t set) {
    const int cost = cost_of(set);
    if (cost > max_moves || (found && cost > best_cost)) return;
    const int64_t milli = moved_milli(set);
    if (!found || cost < best_cost || milli < best_milli) {
      best = set;
      best_cost = cost;
      best_milli = milli;
      found = true;
    }
  };
  if (pod.gpu_milli >= kGpuMilli) {
    // k whole GPUs: every k-subset of the node's GPUs (ascending, by Gosper's hack: among
    // equal sets the one of the lowest GPU indexes), the union of their pods evicted.
    const int k = pod.num_gpu;
    const uint32_t end = uint32_t{1} << spec.gpu_count;
    for (uint32_t m = (uint32_t{1} << k) - 1; m < end;) {
      uint64_t set = 0;
      for (uint32_t b = m; b != 0; b &= b - 1) set |= on_gpu[std::countr_zero(b)];
      if ((set & ~movable) == 0) consider(set);
      const uint32_t low = m & (0U - m);
      const uint32_t ripple = m + low;
      m = ripple | (((m ^ ripple) >> 2) / low);
    }
  } else {
    // A share: on one GPU, evict its largest shares first until the share fits.
    for (std::size_t g = 0; g < static_cast<std::size_t>(spec.gpu_count); ++g) {
      int64_t free = s.gpu_free_milli[g];
      uint64_t set = 0;
      const uint8_t* order = c.order();
      for (uint16_t u = c.begin[g]; u < c.begin[g + 1]; ++u) {
        if (free >= pod.gpu_milli) break;
        const int i = order[u];
        if (((movable >> i) & 1U) == 0) continue;
        set |= uint64_t{1} << i;
        free += here[static_cast<std::size_t>(i)].milli_each;
      }
      if (free < pod.gpu_milli) continue;
      consider(set);
    }
  }
  // The CPU and memory step only adds pods: a set already too large stays so.
  if (!found || best_cost > max_moves) return std::nullopt;
  // CPU and memory: add the movable pods that free the most of what still binds.
  const auto freed = [&](uint64_t set, int64_t HeldPod::*field) {
    int64_t f = 0;
    for (uint64_t b = set; b != 0; b &= b - 1) f += here[std::countr_zero(b)].*field;
    return f;
  };
  for (auto [field, have, need] :
       {std::tuple{&HeldPod::cpu_milli, s.cpu_free_milli, pod.cpu_milli},
        std::tuple{&HeldPod::memory_mib, s.memory_free_mib, pod.memory_mib}}) {
    int64_t room = have + freed(best, field);
    if (room >= need) continue;
    // Pods that move directly first, then the most of what binds (then the later pod), picked
    // one by one: few are needed.
    uint64_t rest = movable & ~best;
    while (room < need && rest != 0) {
      int pick = -1;
      bool pick_direct = false;
      int64_t pick_amount = 0;
      for (uint64_t b = rest; b != 0; b &= b - 1) {
        const int i = std::countr_zero(b);
        const bool is_direct = ((direct >> i) & 1U) != 0;
        const int64_t amount = here[static_cast<std::size_t>(i)].*field;
        if (pick < 0 || std::tie(is_direct, amount, i) > std::tie(pick_direct, pick_amount, pick)) {
          pick = i;
          pick_direct = is_direct;
          pick_amount = amount;
        }
      }
      best |= uint64_t{1} << pick;
      rest &= ~(uint64_t{1} << pick);
      room += pick_amount;
      if (cost_of(best) > max_moves) return std::nullopt;
    }
    if (room < need) return std::nullopt;
  }
  if (best == 0 || cost_of(best) > max_moves) return std::nullopt;
  return Choice{best, cost_of(best), moved_milli(best)};
}

bool MovePlanner::try_eviction(Cluster& cluster, const PodSpec& pod, PodId id, const Eviction& e,
                               policy::Scheduler& scheduler, Rng& rng, const PlannerLimits& limits,
                               int depth, FitPlan& plan) {
  // Evict, largest GPU request first (they are re-placed in this order).
  std::vector<std::pair<PodId, Allocation>> evicted;
  for (PodId p : e.pods) evicted.emplace_back(p, *cluster.allocation_of(p));
  std::stable_sort(evicted.begin(), evicted.end(), [](const auto& a, const auto& b) {
    const int64_t ma = held_gpu_milli(a.second);
    const int64_t mb = held_gpu_milli(b.second);
    return ma != mb ? ma > mb : a.second.cpu_milli > b.second.cpu_milli;
  });
  for (const auto& [p, a] : evicted) (void)cluster.release(p);

  std::vector<Move> moves;
  bool ok = false;
  bool placed = false;
  GpuMask gpus = 0;
  if (policy::filter_node(cluster.spec(e.node), cluster.state(e.node), pod) ==
      policy::FilterReason::kFits) {
    gpus = scheduler.policy().select_gpus(cluster, e.node, pod, rng);
    ok = placed = cluster.allocate(id, pod, e.node, gpus).ok();
  }
  if (ok) {
    for (const auto& [p, a] : evicted) {
      const PodSpec& spec = *pod_of_(p);
      const policy::Decision d = scheduler.schedule(cluster, spec, rng);
      if (d.node >= 0 && cluster.allocate(p, spec, d.node, d.gpus).ok()) {
        moves.push_back(Move{p, a.node, a.gpus, d.node, d.gpus, held_gpu_milli(a)});
        continue;
      }
      // A chain: room for the evicted pod by moving others, within the moves left.
      const int left = limits.max_moves - static_cast<int>(moves.size()) -
                       static_cast<int>(evicted.size() - moves.size());
      std::optional<FitPlan> inner;
      if (depth < limits.chain_depth && left > 0 && spec.needs_gpu() && chain_searches_left_ > 0) {
        --chain_searches_left_;
        PlannerLimits sub = limits;
        sub.max_moves = left;
        inner = search(cluster, p, spec, scheduler, rng, sub, depth + 1);
      }
      if (!inner) {
        ok = false;
        break;
      }
      for (Move& m : inner->moves) moves.push_back(m);
      moves.push_back(Move{p, a.node, a.gpus, inner->node, inner->gpus, held_gpu_milli(a)});
    }
  }
  if (ok && static_cast<int>(moves.size()) <= limits.max_moves) {
    plan.moves = std::move(moves);
    plan.node = e.node;
    plan.gpus = gpus;
    return true;
  }
  // Undo: every pod moved or evicted back where it was, the pod out.
  for (const Move& m : moves) (void)cluster.release(m.pod);
  if (placed) (void)cluster.release(id);
  for (const Move& m : moves) {
    const bool evictee = std::any_of(evicted.begin(), evicted.end(),
                                     [&](const auto& x) { return x.first == m.pod; });
    if (!evictee) (void)cluster.allocate(m.pod, *pod_of_(m.pod), m.from, m.from_gpus);
  }
  for (const auto& [p, a] : evicted) (void)cluster.allocate(p, *pod_of_(p), a.node, a.gpus);
  return false;
}

std::optional<FitPlan> MovePlanner::fit(Cluster& cluster, PodId id, const PodSpec& pod,
                                        policy::Scheduler& scheduler, Rng& rng,
                                        const PlannerLimits& limits) {
  if (!pod.needs_gpu() || limits.max_moves <= 0 || limits.max_trials <= 0) return std::nullopt;
  // A request that found no plan finds none while pods only arrive (see the header).
  if (cluster.instance() != failed_instance_) forget_failures();
  failed_instance_ = cluster.instance();
  const FitKey fail_key{pod.shape_fields(), pod.memory_mib};
  for (const auto& [f, moves] : failed_) {
    const bool models_within =
        f.shape.gpu_spec == 0 || (pod.gpu_spec != 0 && (pod.gpu_spec & ~f.shape.gpu_spec) == 0);
    if (moves >= limits.max_moves && pod.cpu_milli >= f.shape.cpu_milli &&
        pod.memory_mib >= f.memory_mib && pod.num_gpu >= f.shape.num_gpu &&
        pod.gpu_milli >= f.shape.gpu_milli && models_within) {
      return std::nullopt;
    }
  }
  ++fit_stamp_;
  if (summary_instance_ != cluster.instance() || cache_.size() != cluster.size()) {
    cache_.assign(cluster.size(), NodeCache{});
    room_memo_.clear();
    std::fill(room_followed_.begin(), room_followed_.end(), kUnfollowed);
    rooms_seq_ = std::numeric_limits<uint64_t>::max();
    direct_nodes_seq_ = std::numeric_limits<uint64_t>::max();
    summary_instance_ = cluster.instance();
  }
  chain_searches_left_ = kChainSearches;
  auto plan = search(cluster, id, pod, scheduler, rng, limits, 0);
  if (plan) {
    forget_failures();  // pods moved: room may have opened anywhere
  } else {
    failed_.emplace_back(fail_key, limits.max_moves);
  }
  return plan;
}

// One level of the search: the eviction sets of every node, ranked, tried in order. Deeper
// levels (chains) run inside a trial, on the state it has made. Only the best `trials` sets
// are kept (no sort of them all), and a node is passed over without building its set when the
// least key its set could have ranks after all of them (see the header). A search without
// chains passes only over the nodes holding a pod that moves directly. The kept sets are the
// same as those of a pass over every node: keys tie only in equal tie ranks, and then the
// lower node index ranks first, as in a pass in node order.
std::optional<FitPlan> MovePlanner::search(Cluster& cluster, PodId id, const PodSpec& pod,
                                           policy::Scheduler& scheduler, Rng& rng,
                                           const PlannerLimits& limits, int depth) {
  const bool chains = depth < limits.chain_depth;
  const auto& rank = scheduler.tie_rank();
  const auto trials =
      static_cast<std::size_t>(depth == 0 ? limits.max_trials : std::max(1, limits.max_trials / 4));
  // The best `trials` sets by (moves, GPU milli moved, tie order, node), ascending.
  struct Ranked {
    uint64_t key;
    NodeIndex node;
    uint64_t set;
    int cost;
  };
  std::vector<Ranked> ranked;
  FitPlan plan;
  const auto ranks_after_all = [&](uint64_t key, NodeIndex node) {
    if (ranked.size() < trials) return false;
    const Ranked& last = ranked.back();
    return key != last.key ? key > last.key : node > last.node;
  };
  const auto least_key = [&](NodeIndex node) {
    return rank_key(1, least_moved_milli(cluster, node, pod), rank[static_cast<std::size_t>(node)]);
  };
  const auto consider = [&](NodeIndex node, const NodeCache& c, uint64_t direct) {
    // A set costing more than the last kept one would not be kept: no need to finish it.
    const int cap =
        ranked.size() < trials ? limits.max_moves : std::min(limits.max_moves, ranked.back().cost);
    const auto chosen = eviction_for(cluster, node, c, direct, pod, cap, chains);
    if (!chosen) return;
    ++plan.candidates;
    const uint64_t key =
        rank_key(chosen->cost, chosen->gpu_milli, rank[static_cast<std::size_t>(node)]);
    if (ranks_after_all(key, node)) return;
    const auto at =
        std::upper_bound(ranked.begin(), ranked.end(), std::pair{key, node},
                         [](const std::pair<uint64_t, NodeIndex>& k, const Ranked& x) {
                           return k.first != x.key ? k.first < x.key : k.second < x.node;
                         });
    ranked.insert(at, Ranked{key, node, chosen->set, chosen->cost});
    if (ranked.size() > trials) ranked.pop_back();
  };
  refresh_rooms(cluster);
  if (exhaustive_) {
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      const auto node = static_cast<NodeIndex>(n);
      if (!could_host(cluster, node, pod)) continue;
      NodeCache& c = cached(cluster, node);
      if (!c.too_many) consider(node, c, direct_of(cluster, c));
    }
  } else if (chains) {
    // In node order, a node passed over once the least key its set could have ranks after all
    // kept: one move only if it holds a pod that moves directly and whose eviction alone could
    // let the pod in (one_move_may_do), else two; the GPU milli its GPUs lack.
    sync_direct_nodes(cluster);
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      const auto node = static_cast<NodeIndex>(n);
      if (!could_host(cluster, node, pod)) continue;
      if (ranked.size() >= trials) {
        const int64_t lacking = least_moved_milli(cluster, node, pod);
        const uint32_t r = rank[n];
        const bool may_one = ((direct_nodes_[n >> 6] >> (n & 63U)) & 1U) != 0;
        if (ranks_after_all(rank_key(may_one ? 1 : 2, lacking, r), node)) continue;
        if (may_one && ranks_after_all(rank_key(2, lacking, r), node)) {
          NodeCache& c = cached(cluster, node);
          if (c.too_many || !one_move_may_do(cluster, node, c, pod)) continue;
          consider(node, c, c.direct);
          continue;
        }
      }
      NodeCache& c = cached(cluster, node);
      if (!c.too_many) consider(node, c, direct_of(cluster, c));
    }
  } else {
    // Only pods that move directly may: unless its GPUs have the room already, one on a GPU.
    const bool share = pod.gpu_milli < kGpuMilli;
    sync_direct_nodes(cluster);
    for (std::size_t w = 0; w < direct_nodes_.size(); ++w) {
      for (uint64_t bits = direct_nodes_[w]; bits != 0; bits &= bits - 1) {
        const auto node =
            static_cast<NodeIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        if (!could_host(cluster, node, pod)) continue;
        NodeCache& c = cached(cluster, node);
        if (c.too_many || c.movable == 0) continue;
        const NodeState& s = cluster.state(node);
        const bool gpus_fit =
            share ? s.max_gpu_free_milli >= pod.gpu_milli : s.whole_free_gpus >= pod.num_gpu;
        const uint64_t direct = direct_of(cluster, c);
        if ((direct & c.movable & (gpus_fit ? ~uint64_t{0} : c.on_any_gpu)) == 0) continue;
        if (ranks_after_all(least_key(node), node)) continue;
        consider(node, c, direct);
      }
    }
  }
  std::vector<Eviction> best;
  for (const Ranked& r : ranked) {
    Eviction e;
    e.node = r.node;
    e.cost = r.cost;
    const NodeCache& c = cache_[static_cast<std::size_t>(r.node)];
    for (uint64_t b = r.set; b != 0; b &= b - 1) {
      const auto i = static_cast<std::size_t>(std::countr_zero(b));
      e.pods.push_back(c.pods[i].id);
      e.gpu_milli += c.held[i].held_milli;
    }
    best.push_back(std::move(e));
  }
  for (const Eviction& e : best) {
    ++plan.trials;
    if (try_eviction(cluster, pod, id, e, scheduler, rng, limits, depth, plan)) return plan;
  }
  return std::nullopt;
}

Status MovePlanner::undo(Cluster& cluster, PodId id, const FitPlan& plan) {
  if (Status s = cluster.release(id); !s.ok()) return s;
  for (auto it = plan.moves.rbegin(); it != plan.moves.rend(); ++it) {
    if (Status s = cluster.release(it->pod); !s.ok()) return s;
  }
  for (const Move& m : plan.moves) {
    const PodSpec* spec = pod_of_(m.pod);
    if (spec == nullptr) return Error{"a moved pod is no longer known"};
    if (Status s = cluster.allocate(m.pod, *spec, m.from, m.from_gpus); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace greensched::defrag
