#include "greensched/defrag/move_planner.hpp"

#include <algorithm>
#include <bit>
#include <utility>

#include "greensched/policy/filter.hpp"

namespace greensched::defrag {
namespace {

// Pods on one node beyond this are not considered for eviction sets (the masks are 64-bit).
constexpr std::size_t kMaxPodsPerNode = 64;

// The GPU milli a placed pod holds.
int64_t held_gpu_milli(const Allocation& a) {
  return int64_t{gpu_mask_count(a.gpus)} * a.gpu_milli_each;
}

}  // namespace

MovePlanner::MovePlanner(PodLookup pod_of, Movable movable)
    : pod_of_(std::move(pod_of)), movable_(std::move(movable)) {}

void MovePlanner::index_pods(const Cluster& cluster) {
  pods_on_.resize(cluster.size());
  for (auto& v : pods_on_) v.clear();
  cluster.for_each_allocation([&](PodId id, const Allocation& a) {
    pods_on_[static_cast<std::size_t>(a.node)].emplace_back(id, a);
  });
  ++memo_generation_;  // every request's room is measured again
}

bool MovePlanner::fits_somewhere(const Cluster& cluster, const PodSpec& pod) const {
  // Another GPU of its own node counts: moving within a node may free the GPU. Per request
  // shape (the pod's dense shape id, its fields checked): the most free memory
  // among the nodes that fit the rest of the request. The pod fits somewhere iff its memory is
  // within it. One filter pass per shape and search.
  const PodShape shape = pod.shape_fields();
  if (pod.shape >= room_memo_.size()) room_memo_.resize(std::size_t{pod.shape} + 1);
  RoomMemo& m = room_memo_[pod.shape];
  if (m.generation != memo_generation_ || m.shape != shape) {
    PodSpec any_memory = pod;
    any_memory.memory_mib = 0;
    fitting_.resize(cluster.size());
    const std::size_t count = policy::fitting_nodes(cluster, any_memory, fitting_);
    int64_t most = -1;
    for (std::size_t i = 0; i < count; ++i) {
      most = std::max(most, cluster.state(fitting_[i]).memory_free_mib);
    }
    m = RoomMemo{memo_generation_, shape, most};
  }
  return pod.memory_mib <= m.most_free_memory_mib;
}

std::optional<MovePlanner::Eviction> MovePlanner::eviction_for(const Cluster& cluster,
                                                               NodeIndex node, const PodSpec& pod,
                                                               int max_moves, bool chains) const {
  const NodeSpec& spec = cluster.spec(node);
  const NodeState& s = cluster.state(node);
  if (!s.online || spec.gpu_count < pod.num_gpu || spec.cpu_milli < pod.cpu_milli ||
      spec.memory_mib < pod.memory_mib || !model_allowed(pod.gpu_spec, spec.model)) {
    return std::nullopt;
  }
  const auto& here = pods_on_[static_cast<std::size_t>(node)];
  if (here.size() > kMaxPodsPerNode) return std::nullopt;
  // Which local pods may move (`direct`: those that fit somewhere as the cluster stands, beside
  // themselves; with chains, the others too, at twice the cost), and which use each GPU.
  uint64_t movable = 0;
  uint64_t direct = 0;
  std::array<uint64_t, kMaxGpusPerNode> on_gpu{};
  for (std::size_t i = 0; i < here.size(); ++i) {
    const auto& [id, a] = here[i];
    const PodSpec* spec_of = pod_of_(id);
    if (spec_of != nullptr && (!movable_ || movable_(id))) {
      const bool fits = fits_somewhere(cluster, *spec_of);
      if (fits) direct |= uint64_t{1} << i;
      if (fits || chains) movable |= uint64_t{1} << i;
    }
    for (int g = 0; g < spec.gpu_count; ++g) {
      if ((a.gpus >> g) & 1U) on_gpu[g] |= uint64_t{1} << i;
    }
  }
  const auto cost_of = [&](uint64_t set) {
    return std::popcount(set) + std::popcount(set & ~direct);
  };
  const auto moved_milli = [&](uint64_t set) {
    int64_t m = 0;
    for (uint64_t b = set; b != 0; b &= b - 1)
      m += held_gpu_milli(here[std::countr_zero(b)].second);
    return m;
  };
  // Better: fewer expected moves, then less GPU milli moved.
  const auto better = [&](uint64_t a, uint64_t b) {
    const int ca = cost_of(a);
    const int cb = cost_of(b);
    return ca != cb ? ca < cb : moved_milli(a) < moved_milli(b);
  };

  // The smallest set of movable pods whose eviction lets the pod in, if any.
  const auto choose = [&](uint64_t movable) -> std::optional<uint64_t> {
    uint64_t best = 0;
    bool found = false;
    if (pod.gpu_milli >= kGpuMilli) {
      // k whole GPUs: every k-subset of the node's GPUs (ascending, by Gosper's hack: among
      // equal sets the one of the lowest GPU indexes), the union of their pods evicted.
      const int k = pod.num_gpu;
      const uint32_t end = uint32_t{1} << spec.gpu_count;
      for (uint32_t m = (uint32_t{1} << k) - 1; m < end;) {
        uint64_t set = 0;
        for (uint32_t b = m; b != 0; b &= b - 1) set |= on_gpu[std::countr_zero(b)];
        if ((set & ~movable) == 0 && (!found || better(set, best))) {
          best = set;
          found = true;
        }
        const uint32_t low = m & (0U - m);
        const uint32_t ripple = m + low;
        m = ripple | (((m ^ ripple) >> 2) / low);
      }
    } else {
      // A share: on one GPU, evict its largest shares first until the share fits.
      for (int g = 0; g < spec.gpu_count; ++g) {
        int64_t free = s.gpu_free_milli[g];
        std::vector<std::pair<int64_t, int>> users;  // (milli on this GPU, local index)
        for (uint64_t b = on_gpu[g]; b != 0; b &= b - 1) {
          const int i = std::countr_zero(b);
          users.emplace_back(here[static_cast<std::size_t>(i)].second.gpu_milli_each, i);
        }
        std::sort(users.begin(), users.end(), std::greater<>());
        uint64_t set = 0;
        for (const auto& [milli, i] : users) {
          if (free >= pod.gpu_milli) break;
          if (((movable >> i) & 1U) == 0) continue;
          set |= uint64_t{1} << i;
          free += milli;
        }
        if (free < pod.gpu_milli) continue;
        if (!found || better(set, best)) {
          best = set;
          found = true;
        }
      }
    }
    if (!found) return std::nullopt;
    // CPU and memory: add the movable pods that free the most of what still binds.
    const auto freed = [&](uint64_t set, int64_t Allocation::*field) {
      int64_t f = 0;
      for (uint64_t b = set; b != 0; b &= b - 1) f += here[std::countr_zero(b)].second.*field;
      return f;
    };
    for (auto [field, have, need] :
         {std::tuple{&Allocation::cpu_milli, s.cpu_free_milli, pod.cpu_milli},
          std::tuple{&Allocation::memory_mib, s.memory_free_mib, pod.memory_mib}}) {
      int64_t room = have + freed(best, field);
      if (room >= need) continue;
      // Pods that move directly first, then the most of what binds.
      std::vector<std::tuple<bool, int64_t, int>> rest;  // (direct, amount, local index)
      for (std::size_t i = 0; i < here.size(); ++i) {
        if (((movable >> i) & 1U) != 0 && ((best >> i) & 1U) == 0) {
          rest.emplace_back(((direct >> i) & 1U) != 0, here[i].second.*field, static_cast<int>(i));
        }
      }
      std::sort(rest.begin(), rest.end(), std::greater<>());
      for (const auto& [is_direct, amount, i] : rest) {
        if (room >= need) break;
        best |= uint64_t{1} << i;
        room += amount;
      }
      if (room < need) return std::nullopt;
    }
    return best;
  };
  const std::optional<uint64_t> chosen = choose(movable);
  if (!chosen) return std::nullopt;
  const uint64_t best = *chosen;
  if (best == 0 || cost_of(best) > max_moves) return std::nullopt;
  Eviction e;
  e.node = node;
  e.cost = cost_of(best);
  for (uint64_t b = best; b != 0; b &= b - 1) {
    e.pods.push_back(here[static_cast<std::size_t>(std::countr_zero(b))].first);
  }
  e.gpu_milli = moved_milli(best);
  return e;
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
// levels (chains) run inside a trial, on the state it has made.
std::optional<FitPlan> MovePlanner::search(Cluster& cluster, PodId id, const PodSpec& pod,
                                           policy::Scheduler& scheduler, Rng& rng,
                                           const PlannerLimits& limits, int depth) {
  index_pods(cluster);
  const bool chains = depth < limits.chain_depth;
  std::vector<Eviction> sets;
  for (std::size_t n = 0; n < cluster.size(); ++n) {
    if (auto e = eviction_for(cluster, static_cast<NodeIndex>(n), pod, limits.max_moves, chains)) {
      sets.push_back(std::move(*e));
    }
  }
  const auto& rank = scheduler.tie_rank();
  std::sort(sets.begin(), sets.end(), [&](const Eviction& a, const Eviction& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.gpu_milli != b.gpu_milli) return a.gpu_milli < b.gpu_milli;
    return rank[a.node] < rank[b.node];
  });
  FitPlan plan;
  plan.candidates = static_cast<int32_t>(sets.size());
  const int trials = depth == 0 ? limits.max_trials : std::max(1, limits.max_trials / 4);
  for (const Eviction& e : sets) {
    if (plan.trials >= trials) break;
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
