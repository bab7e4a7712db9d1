// The heuristics of offline_packing.hpp, each followed by the same repair pass. They share one
// state (the cluster, the pods on each node, which pods are placed); every change goes through
// Cluster::allocate and Cluster::release, so a packing never overcommits.
//   bfd          best-fit decreasing: the GPU pods sorted by total GPU milli, then per-GPU
//                share, then CPU (then allowed models before any model, memory, list order),
//                largest first; each goes to the feasible node that leaves the least free GPU
//                milli, then CPU, afterwards (first node index among equals), on the GPUs the
//                default rule picks (Policy::select_gpus: the tightest GPU for a share, the
//                first fully free GPUs for whole GPUs).
//   fgd-sorted   FGD (policy "fgd" through policy::Scheduler, as the simulator runs it; target
//                workload from the pods given, node order as the tie order) over the same
//                sorted pods.
//   lp-rounding  the LP's solution (BoundResult::solution, node type x pod shape counts)
//                rounded down. In the same sorted order each pod goes to the node type with
//                the most left of its shape's count; each type's pods are dealt over its nodes
//                in turn, back and forth, each to the next node where it fits, so that every
//                node holds about its share of the LP's mix (the LP keeps each type's totals
//                of CPU, memory and GPU within its capacity, so the average node has room).
//                What is left is placed by best-fit decreasing on any node. The LP chooses
//                which node types serve which shapes (GPU models, CPU per GPU), which neither
//                greedy rule sees.
// The repair pass takes the unplaced GPU pods in the sorted order and tries, for each, in turn:
//   move     a node where the pod fits once one placed pod leaves: that pod moves to the
//            best-fitting other node where it fits as things stand, or to another GPU of the
//            same node;
//   swap     a node where the pod's GPUs are free but CPU or memory is short trades a placed
//            pod for one with the same GPU request and less CPU and memory from one of the
//            nodes with the most free CPU (each on the other's GPUs), then takes the pod;
//   displace a placed pod that asks for less GPU milli and fits nowhere else leaves (to be
//            retried in the next round).
// Each step raises the allocation; three rounds at most. Nothing draws random numbers: the
// same inputs give the same packing.
// CPU-only pods are left out, as the bound leaves them out: they add no GPU allocation, and
// placed after the GPU pods where room is left they could take none away.
// On the openb pod lists at 100 % arrival the GPU requests exceed what can be packed, and
// lp-rounding packs the most: sorted largest first, bfd and fgd-sorted give large GPU shares
// GPUs of their own before the smaller shares that would fill them, and place CPU-hungry pods
// without regard to which node types have CPU to spare; both fall below online FGD there.
#include "greensched/learn/offline_packing.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/policy/filter.hpp"
#include "greensched/policy/gpu_select.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::learn {
namespace {

constexpr std::array<std::string_view, 3> kPackingMethods = {"bfd", "fgd-sorted", "lp-rounding"};
constexpr int kRepairRounds = 3;
constexpr std::size_t kSwapNodes = 32;   // nodes with the most free CPU a swap looks at
constexpr uint64_t kPackingRngSeed = 1;  // FGD draws nothing; the scheduler asks for a generator

// What a pod asks for, as the LP's pod shapes (memory included): pods with equal keys are
// interchangeable.
using PackKey = std::tuple<int64_t, int64_t, int, int32_t, GpuModelSet>;
PackKey pack_key(const PodSpec& p) {
  return {p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli, p.gpu_spec};
}

// The GPU pods, largest first: total GPU milli, per-GPU share, CPU, then pods restricted to
// some GPU models before pods that take any, memory, and list order.
std::vector<uint32_t> decreasing_gpu_pods(std::span<const PodSpec> pods) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < pods.size(); ++i) {
    if (pods[i].needs_gpu()) order.push_back(i);
  }
  const auto key = [&](uint32_t i) {
    const PodSpec& p = pods[i];
    return std::make_tuple(p.total_gpu_milli(), p.gpu_milli, p.cpu_milli, p.gpu_spec != 0,
                           p.memory_mib);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return key(a) > key(b); });
  return order;
}

// The GPUs the default rule gives `pod` on `node` (Policy::select_gpus).
GpuMask default_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod) {
  if (!pod.needs_gpu()) return 0;
  if (pod.shares_gpu()) {
    return policy::tightest_fitting_gpu(cluster.spec(node), cluster.state(node), pod.gpu_milli);
  }
  return policy::first_whole_free_gpus(cluster.spec(node), cluster.state(node), pod.num_gpu);
}

// Best fit: less free GPU milli, then CPU, then the lower node index.
bool fits_tighter(const Cluster& cluster, NodeIndex a, NodeIndex b) {
  const NodeState& x = cluster.state(a);
  const NodeState& y = cluster.state(b);
  return std::tie(x.gpu_free_total_milli, x.cpu_free_milli, a) <
         std::tie(y.gpu_free_total_milli, y.cpu_free_milli, b);
}

class Packer {
 public:
  Packer(std::span<const NodeSpec> nodes, std::span<const PodSpec> pods)
      : cluster_(std::vector<NodeSpec>(nodes.begin(), nodes.end())),
        pods_(pods),
        on_node_(nodes.size()),
        placed_(pods.size(), 0),
        scratch_(nodes.size()) {
    cluster_.reserve_pods(pods.size());
  }

  const Cluster& cluster() const { return cluster_; }
  bool placed(uint32_t pod) const { return placed_[pod] != 0; }

  Status place(uint32_t pod, NodeIndex node, GpuMask gpus) {
    Status s = cluster_.allocate(pod, pods_[pod], node, gpus);
    if (!s.ok()) {
      return Error{fmt::format("offline packing: pod {} on node {}: {}", pod, node, s.message()),
                   ErrorCode::kInternal};
    }
    on_node_[node].push_back(pod);
    placed_[pod] = 1;
    return Status::Ok();
  }
  Status place(uint32_t pod, NodeIndex node) {
    return place(pod, node, default_gpus(cluster_, node, pods_[pod]));
  }
  Status remove(uint32_t pod, NodeIndex node) {
    Status s = cluster_.release(pod);
    if (!s.ok()) return Error{s.message(), ErrorCode::kInternal};
    auto& list = on_node_[node];
    list.erase(std::find(list.begin(), list.end(), pod));
    placed_[pod] = 0;
    return Status::Ok();
  }

  // The node among `candidates` (every node when empty) where `pod` fits and fits tightest;
  // -1 if none.
  NodeIndex best_fit(const PodSpec& pod, std::span<const NodeIndex> candidates = {}) {
    NodeIndex best = -1;
    if (candidates.empty()) {
      const std::size_t n = policy::fitting_nodes(cluster_, pod, scratch_);
      for (std::size_t i = 0; i < n; ++i) {
        if (best < 0 || fits_tighter(cluster_, scratch_[i], best)) best = scratch_[i];
      }
      return best;
    }
    for (const NodeIndex node : candidates) {
      if (policy::filter_node(cluster_.spec(node), cluster_.state(node), pod) !=
          policy::FilterReason::kFits) {
        continue;
      }
      if (best < 0 || fits_tighter(cluster_, node, best)) best = node;
    }
    return best;
  }

  // Places `order`'s unplaced pods, each on its best-fitting node where it fits.
  Status best_fit_decreasing(std::span<const uint32_t> order) {
    for (const uint32_t i : order) {
      if (placed(i)) continue;
      const NodeIndex node = best_fit(pods_[i]);
      if (node < 0) continue;
      if (Status s = place(i, node); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // The repair pass (top of this file) over the unplaced pods of `order`; returns the
  // placements it made.
  Result<int> repair(std::span<const uint32_t> order) {
    std::vector<uint32_t> rank(pods_.size(), 0);
    for (uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
    std::vector<uint32_t> unplaced;
    for (const uint32_t i : order) {
      if (!placed(i)) unplaced.push_back(i);
    }
    int repairs = 0;
    for (int round = 0; round < kRepairRounds && !unplaced.empty(); ++round) {
      bool changed = false;
      std::vector<uint32_t> left;
      for (const uint32_t p : unplaced) {
        if (const NodeIndex node = best_fit(pods_[p]); node >= 0) {  // room a displacement left
          if (Status s = place(p, node); !s.ok()) return s.error();
          ++repairs;
          changed = true;
          continue;
        }
        auto step = repair_one(p, left);
        if (!step.ok()) return Error{step.error(), ErrorCode::kInternal};
        if (step.value()) {
          ++repairs;
          changed = true;
        } else {
          left.push_back(p);
        }
      }
      std::sort(left.begin(), left.end(),
                [&](uint32_t a, uint32_t b) { return rank[a] < rank[b]; });
      unplaced = std::move(left);
      if (!changed) break;
    }
    return repairs;
  }

 private:
  // Whether `pod` fits on `node` once the placed pod `leaving` is gone from it; if so, `s` is
  // the node's state without it.
  bool fits_without(NodeIndex node, uint32_t leaving, const PodSpec& pod, NodeState& s) const {
    const NodeSpec& spec = cluster_.spec(node);
    const NodeState& now = cluster_.state(node);
    const PodSpec& q = pods_[leaving];
    if (now.cpu_free_milli + q.cpu_milli < pod.cpu_milli ||
        now.memory_free_mib + q.memory_mib < pod.memory_mib ||
        now.gpu_free_total_milli + q.total_gpu_milli() < pod.total_gpu_milli()) {
      return false;
    }
    const std::optional<Allocation> a = cluster_.allocation_of(leaving);
    if (!a) return false;
    s = now;
    s.cpu_free_milli += a->cpu_milli;
    s.memory_free_mib += a->memory_mib;
    for (int g = 0; g < spec.gpu_count; ++g) {
      if ((a->gpus >> g) & 1U) s.gpu_free_milli[g] += a->gpu_milli_each;
    }
    Cluster::refresh_derived(s, spec.gpu_count);
    return policy::filter_node(spec, s, pod) == policy::FilterReason::kFits;
  }

  // Whether `second` fits on `node` in state `s` once `first` is placed there by the default
  // GPU rule.
  bool fits_after(NodeIndex node, NodeState s, const PodSpec& first, const PodSpec& second) const {
    const NodeSpec& spec = cluster_.spec(node);
    const GpuMask gpus = first.shares_gpu() ? policy::tightest_fitting_gpu(spec, s, first.gpu_milli)
                                            : policy::first_whole_free_gpus(spec, s, first.num_gpu);
    s.cpu_free_milli -= first.cpu_milli;
    s.memory_free_mib -= first.memory_mib;
    for (int g = 0; g < spec.gpu_count; ++g) {
      if ((gpus >> g) & 1U) s.gpu_free_milli[g] -= first.gpu_milli;
    }
    Cluster::refresh_derived(s, spec.gpu_count);
    return policy::filter_node(spec, s, second) == policy::FilterReason::kFits;
  }

  // The best-fitting node other than `not_on` where a pod like `pod` fits as things stand;
  // -1 if none. Kept per pod key while the cluster is unchanged.
  NodeIndex destination(const PodSpec& pod, NodeIndex not_on) {
    Destinations& d = destinations_[pack_key(pod)];
    if (d.change != cluster_.change_count() || !d.valid) {
      d.valid = true;
      d.change = cluster_.change_count();
      d.best = {-1, -1};
      const std::size_t n = policy::fitting_nodes(cluster_, pod, scratch_);
      for (std::size_t i = 0; i < n; ++i) {
        const NodeIndex node = scratch_[i];
        if (d.best[0] < 0 || fits_tighter(cluster_, node, d.best[0])) {
          d.best[1] = d.best[0];
          d.best[0] = node;
        } else if (d.best[1] < 0 || fits_tighter(cluster_, node, d.best[1])) {
          d.best[1] = node;
        }
      }
    }
    return d.best[0] != not_on ? d.best[0] : d.best[1];
  }

  // One repair step for the unplaced pod `p`: move a placed pod elsewhere to make room, or
  // displace a smaller one (appended to `displaced`). False when neither is possible.
  Result<bool> repair_one(uint32_t p, std::vector<uint32_t>& displaced) {
    const PodSpec& pod = pods_[p];
    const PackKey key = pack_key(pod);
    if (auto it = hopeless_.find(key);
        it != hopeless_.end() && it->second == cluster_.change_count()) {
      return false;  // a pod like it found nothing in this very cluster
    }
    uint32_t smallest = 0;  // the smallest pod to displace, on node `smallest_on`
    NodeIndex smallest_on = -1;
    for (std::size_t n = 0; n < cluster_.size(); ++n) {
      const auto node = static_cast<NodeIndex>(n);
      const NodeSpec& spec = cluster_.spec(node);
      if (!cluster_.state(node).online || spec.gpu_count < pod.num_gpu ||
          !model_allowed(pod.gpu_spec, spec.model)) {
        continue;
      }
      for (const uint32_t q : on_node_[node]) {
        NodeState without;
        if (!fits_without(node, q, pod, without)) continue;
        if (const NodeIndex to = destination(pods_[q], node); to >= 0) {
          if (Status s = remove(q, node); !s.ok()) return s.error();
          if (Status s = place(q, to); !s.ok()) return s.error();
          if (Status s = place(p, node); !s.ok()) return s.error();
          return true;
        }
        if (fits_after(node, without, pod, pods_[q])) {  // q moves to another GPU of the node
          if (Status s = remove(q, node); !s.ok()) return s.error();
          if (Status s = place(p, node); !s.ok()) return s.error();
          if (Status s = place(q, node); !s.ok()) return s.error();
          return true;
        }
        const int64_t gpu = pods_[q].total_gpu_milli();
        if (gpu < pod.total_gpu_milli() &&
            (smallest_on < 0 || gpu < pods_[smallest].total_gpu_milli())) {
          smallest = q;
          smallest_on = node;
        }
      }
    }
    auto swapped = swap_for(p);
    if (!swapped.ok() || swapped.value()) return swapped;
    if (smallest_on >= 0) {
      if (Status s = remove(smallest, smallest_on); !s.ok()) return s.error();
      if (Status s = place(p, smallest_on); !s.ok()) return s.error();
      displaced.push_back(smallest);
      return true;
    }
    hopeless_[key] = cluster_.change_count();
    return false;
  }

  // The nodes with the most free CPU (then memory; lower index first among equals), kept
  // while the cluster is unchanged: where a swap looks for a pod to trade.
  const std::vector<NodeIndex>& cpu_rich_nodes() {
    if (cpu_rich_valid_ && cpu_rich_change_ == cluster_.change_count()) return cpu_rich_;
    cpu_rich_.clear();
    for (std::size_t n = 0; n < cluster_.size(); ++n) {
      const auto node = static_cast<NodeIndex>(n);
      if (cluster_.spec(node).gpu_count > 0 && cluster_.state(node).online) {
        cpu_rich_.push_back(node);
      }
    }
    const auto richer = [&](NodeIndex a, NodeIndex b) {
      const NodeState& x = cluster_.state(a);
      const NodeState& y = cluster_.state(b);
      return std::tie(y.cpu_free_milli, y.memory_free_mib, a) <
             std::tie(x.cpu_free_milli, x.memory_free_mib, b);
    };
    const std::size_t keep = std::min(kSwapNodes, cpu_rich_.size());
    std::partial_sort(cpu_rich_.begin(), cpu_rich_.begin() + static_cast<std::ptrdiff_t>(keep),
                      cpu_rich_.end(), richer);
    cpu_rich_.resize(keep);
    cpu_rich_valid_ = true;
    cpu_rich_change_ = cluster_.change_count();
    return cpu_rich_;
  }

  // A swap for the unplaced pod `p`: a node where its GPUs are free but CPU or memory is short
  // trades a placed pod q for a pod r with the same GPU request and less CPU and memory from a
  // node with CPU to spare (each on the other's GPUs, so no GPU changes), then takes `p`.
  Result<bool> swap_for(uint32_t p) {
    const PodSpec& pod = pods_[p];
    const std::vector<NodeIndex>& rich = cpu_rich_nodes();
    for (std::size_t n = 0; n < cluster_.size(); ++n) {
      const auto a = static_cast<NodeIndex>(n);
      const NodeSpec& spec = cluster_.spec(a);
      const NodeState& st = cluster_.state(a);
      if (!st.online || spec.gpu_count < pod.num_gpu || !model_allowed(pod.gpu_spec, spec.model)) {
        continue;
      }
      const bool gpus_free = pod.shares_gpu() ? st.max_gpu_free_milli >= pod.gpu_milli
                                              : st.whole_free_gpus >= pod.num_gpu;
      const int64_t cpu_short = pod.cpu_milli - st.cpu_free_milli;
      const int64_t memory_short = pod.memory_mib - st.memory_free_mib;
      if (!gpus_free || (cpu_short <= 0 && memory_short <= 0)) continue;
      for (const uint32_t q : on_node_[a]) {
        const PodSpec& qs = pods_[q];
        if (qs.cpu_milli < cpu_short || qs.memory_mib < memory_short) continue;
        for (const NodeIndex b : rich) {
          const NodeState& bs = cluster_.state(b);
          if (b == a || !model_allowed(qs.gpu_spec, cluster_.spec(b).model)) continue;
          for (const uint32_t r : on_node_[b]) {
            const PodSpec& rs = pods_[r];
            if (rs.num_gpu != qs.num_gpu || rs.gpu_milli != qs.gpu_milli ||
                !model_allowed(rs.gpu_spec, spec.model) ||
                qs.cpu_milli - rs.cpu_milli < cpu_short ||
                qs.memory_mib - rs.memory_mib < memory_short ||
                bs.cpu_free_milli + rs.cpu_milli < qs.cpu_milli ||
                bs.memory_free_mib + rs.memory_mib < qs.memory_mib) {
              continue;
            }
            const std::optional<Allocation> qa = cluster_.allocation_of(q);
            const std::optional<Allocation> ra = cluster_.allocation_of(r);
            if (!qa || !ra) continue;
            if (Status s = remove(q, a); !s.ok()) return s.error();
            if (Status s = remove(r, b); !s.ok()) return s.error();
            if (Status s = place(r, a, qa->gpus); !s.ok()) return s.error();
            if (Status s = place(q, b, ra->gpus); !s.ok()) return s.error();
            if (Status s = place(p, a); !s.ok()) return s.error();
            return true;
          }
        }
      }
    }
    return false;
  }

  struct Destinations {
    bool valid = false;
    uint64_t change = 0;
    std::array<NodeIndex, 2> best{-1, -1};
  };

  Cluster cluster_;
  std::span<const PodSpec> pods_;
  std::vector<std::vector<uint32_t>> on_node_;
  std::vector<char> placed_;
  std::vector<NodeIndex> scratch_;
  std::map<PackKey, Destinations> destinations_;
  std::map<PackKey, uint64_t> hopeless_;  // key -> the change count at which nothing was found
  std::vector<NodeIndex> cpu_rich_;
  bool cpu_rich_valid_ = false;
  uint64_t cpu_rich_change_ = 0;
};

// FGD over `order`, as the simulator schedules (policy registry, Scheduler), on the packer.
Status pack_fgd_sorted(Packer& packer, std::span<const NodeSpec> nodes,
                       std::span<const PodSpec> pods, std::span<const uint32_t> order) {
  std::vector<PodSpec> shaped(pods.begin(), pods.end());  // FGD keys its caches by shape id
  policy::PolicyContext context;
  context.shape_count = trace::assign_shape_ids(shaped);
  context.frag = std::make_shared<frag::FragmentationModel>(frag::build_target_workload(shaped));
  auto fgd = policy::make_policy("fgd", context);
  if (!fgd.ok()) return Error{fgd.error(), ErrorCode::kInternal};
  std::vector<uint32_t> tie_rank(nodes.size());
  std::iota(tie_rank.begin(), tie_rank.end(), 0U);
  policy::Scheduler scheduler(*fgd.value(), std::move(tie_rank));
  Rng rng(kPackingRngSeed);
  for (const uint32_t i : order) {
    const policy::Decision d = scheduler.schedule(packer.cluster(), shaped[i], rng);
    if (d.node < 0) continue;
    if (Status s = packer.place(i, d.node, d.gpus); !s.ok()) return s;
  }
  return Status::Ok();
}

// The LP's counts per (node type, pod key), rounded down: each type's pods spread over its
// nodes in turn; then best-fit decreasing for what is left.
Status pack_lp_rounding(Packer& packer, std::span<const NodeSpec> nodes,
                        std::span<const PodSpec> pods, std::span<const uint32_t> order,
                        const BoundResult& lp) {
  using TypeKey = std::tuple<int, int, int64_t, int64_t>;  // model, GPUs, CPU, memory
  std::map<TypeKey, std::size_t> type_of;
  std::vector<std::vector<NodeIndex>> type_nodes;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const NodeSpec& s = nodes[n];
    if (s.gpu_count <= 0) continue;
    const auto [it, added] = type_of.emplace(
        TypeKey{s.model, s.gpu_count, s.cpu_milli, s.memory_mib}, type_nodes.size());
    if (added) type_nodes.emplace_back();
    type_nodes[it->second].push_back(static_cast<NodeIndex>(n));
  }
  struct Quota {
    std::size_t type = 0;
    int64_t left = 0;
  };
  std::map<PackKey, std::vector<Quota>> quotas;  // per pod key, in the solution's type order
  for (const BoundFlow& f : lp.solution) {
    const auto it = type_of.find(TypeKey{f.model, f.gpus, f.node_cpu_milli, f.node_memory_mib});
    const auto count = static_cast<int64_t>(std::floor(f.pods + 1e-6));
    if (it == type_of.end() || count <= 0) continue;
    quotas[PackKey{f.pod_cpu_milli, f.pod_memory_mib, f.num_gpu, f.gpu_milli, f.gpu_spec}]
        .push_back(Quota{it->second, count});
  }
  // Each pod, largest first, to the type with the most left of its key's count (the first
  // among equals), so that a key's pods alternate between the types in proportion.
  std::vector<std::vector<uint32_t>> assigned(type_nodes.size());
  for (const uint32_t i : order) {
    const auto it = quotas.find(pack_key(pods[i]));
    if (it == quotas.end()) continue;
    Quota* most = nullptr;
    for (Quota& q : it->second) {
      if (q.left > 0 && (most == nullptr || q.left > most->left)) most = &q;
    }
    if (most == nullptr) continue;
    --most->left;
    assigned[most->type].push_back(i);
  }
  // Each type's pods, largest first, over its nodes in turn, each to the next node where it
  // fits, so that every node holds about its share of each shape: the LP meets the type's
  // totals of CPU, memory and GPU, so a node with the average mix fits. The turn goes back and
  // forth (nodes 0..n-1, then n-1..0): a node given one of the larger CPU requests of a shape
  // on the way out gets one of the smaller on the way back.
  for (std::size_t t = 0; t < type_nodes.size(); ++t) {
    std::vector<NodeIndex> list = type_nodes[t];
    list.insert(list.end(), type_nodes[t].rbegin(), type_nodes[t].rend());
    std::size_t next = 0;
    for (const uint32_t i : assigned[t]) {
      for (std::size_t k = 0; k < list.size(); ++k) {
        const NodeIndex node = list[(next + k) % list.size()];
        if (policy::filter_node(packer.cluster().spec(node), packer.cluster().state(node),
                                pods[i]) != policy::FilterReason::kFits) {
          continue;
        }
        if (Status s = packer.place(i, node); !s.ok()) return s;
        next = (next + k + 1) % list.size();
        break;
      }
    }
  }
  return packer.best_fit_decreasing(order);
}

}  // namespace

std::span<const std::string_view> packing_method_names() {
  return kPackingMethods;
}

Result<OfflinePacking> pack_offline(std::span<const NodeSpec> nodes, std::span<const PodSpec> pods,
                                    const PackingOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  OfflinePacking out;
  for (const NodeSpec& n : nodes) out.cluster_gpu_milli += int64_t{n.gpu_count} * kGpuMilli;
  for (const PodSpec& p : pods) out.requested_gpu_milli += p.total_gpu_milli();
  const std::vector<uint32_t> order = decreasing_gpu_pods(pods);

  // lp-rounding's solution: the caller's, or solved here.
  const BoundResult* lp = options.lp;
  BoundResult solved;
  if (lp == nullptr || (lp->solution.empty() && lp->columns > 0)) {
    BoundOptions bound_options;
    bound_options.keep_solution = true;
    auto b = allocation_upper_bound(nodes, pods, bound_options);
    if (!b.ok()) return Error{b.error()};
    solved = std::move(b.value());
    lp = &solved;
  }

  for (const std::string_view name : kPackingMethods) {
    const auto method_start = std::chrono::steady_clock::now();
    Packer packer(nodes, pods);
    Status s;
    if (name == "bfd") {
      s = packer.best_fit_decreasing(order);
    } else if (name == "fgd-sorted") {
      s = pack_fgd_sorted(packer, nodes, pods, order);
    } else {
      s = pack_lp_rounding(packer, nodes, pods, order, *lp);
    }
    if (!s.ok()) return s.error();
    PackingMethod m;
    m.name = std::string(name);
    m.heuristic_gpu_milli = packer.cluster().allocated_gpu_milli();
    if (options.repair) {
      auto repairs = packer.repair(order);
      if (!repairs.ok()) return Error{repairs.error(), ErrorCode::kInternal};
      m.repairs = repairs.value();
    }
    m.allocated_gpu_milli = packer.cluster().allocated_gpu_milli();
    for (const uint32_t i : order) {
      if (!packer.placed(i)) continue;
      ++m.pods_placed;
      if (!options.keep_placements) continue;
      const std::optional<Allocation> a = packer.cluster().allocation_of(i);
      if (a) m.placements.push_back(PackedPod{i, a->node, a->gpus});
    }
    std::sort(m.placements.begin(), m.placements.end(),
              [](const PackedPod& a, const PackedPod& b) { return a.pod < b.pod; });
    m.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - method_start).count();
    if (m.allocated_gpu_milli > (out.methods.empty() ? -1 : out.allocated_gpu_milli())) {
      out.best = out.methods.size();
    }
    out.methods.push_back(std::move(m));
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace greensched::learn
