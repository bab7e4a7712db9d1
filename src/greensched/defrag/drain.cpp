#include "greensched/defrag/drain.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

namespace greensched::defrag {

std::optional<std::vector<Move>> drain_node(Cluster& cluster, NodeIndex node,
                                            const PodLookup& pod_of, const Movable& movable,
                                            policy::Scheduler& scheduler, Rng& rng, int max_moves,
                                            bool same_gpu_model) {
  if (node < 0 || static_cast<std::size_t>(node) >= cluster.size()) return std::nullopt;
  if (!cluster.state(node).online || cluster.state(node).pods == 0) return std::nullopt;
  if (cluster.state(node).pods > max_moves) return std::nullopt;
  struct Resident {
    PodId id;
    const PodSpec* spec;
    Allocation at;
  };
  std::vector<Resident> here;
  bool ok = true;
  cluster.for_each_allocation([&](PodId id, const Allocation& a) {
    if (a.node != node) return;
    const PodSpec* spec = pod_of ? pod_of(id) : nullptr;
    if (spec == nullptr || (movable && !movable(id))) ok = false;
    here.push_back(Resident{id, spec, a});
  });
  if (!ok) return std::nullopt;
  std::sort(here.begin(), here.end(), [](const Resident& a, const Resident& b) {
    return std::tuple{a.spec->total_gpu_milli(), a.spec->cpu_milli, a.spec->memory_mib, b.id} >
           std::tuple{b.spec->total_gpu_milli(), b.spec->cpu_milli, b.spec->memory_mib, a.id};
  });
  for (const Resident& r : here) (void)cluster.release(r.id);
  (void)cluster.set_online(node, false);
  std::vector<Move> moves;
  const GpuModelId model = cluster.spec(node).model;
  for (const Resident& r : here) {
    PodSpec restricted;
    const PodSpec* ask = r.spec;
    if (same_gpu_model && r.spec->needs_gpu() && model != kNoGpuModel) {
      restricted = *r.spec;
      restricted.gpu_spec = GpuModelSet{1} << model;
      restricted.shape = std::numeric_limits<uint32_t>::max();  // no memo keyed by its shape
      ask = &restricted;
    }
    const policy::Decision d = scheduler.schedule(cluster, *ask, rng);
    if (d.node < 0 || !cluster.allocate(r.id, *r.spec, d.node, d.gpus).ok()) {
      ok = false;
      break;
    }
    moves.push_back(Move{r.id, node, r.at.gpus, d.node, d.gpus,
                         int64_t{gpu_mask_count(r.at.gpus)} * r.at.gpu_milli_each});
  }
  (void)cluster.set_online(node, true);
  if (ok) return moves;
  for (const Move& m : moves) (void)cluster.release(m.pod);
  for (const Resident& r : here) (void)cluster.allocate(r.id, *r.spec, node, r.at.gpus);
  return std::nullopt;
}

}  // namespace greensched::defrag
