// Preemption of best-effort jobs for latency-sensitive ones (--preempt-be), as
// kube-scheduler's priority preemption does: when an LS job finds no node, the site picks the
// node where evicting BE jobs makes room at the least loss, and evicts them. Evicted jobs go
// back to the front of the BE queue and restart from the beginning when they fit again; the
// energy of their lost run stays counted.
#include <algorithm>
#include <optional>

#include "greensched/multi/fleet_sim_internal.hpp"

namespace greensched::multi::detail {
namespace {

// What clearing room on one node costs: the BE jobs to evict, most recently started first
// (the least work lost), and the GPU and CPU they hold.
struct Eviction {
  std::vector<std::size_t> jobs;
  int64_t gpu_milli = 0;
  int64_t cpu_milli = 0;
  bool cheaper_than(const Eviction& o) const {
    if (gpu_milli != o.gpu_milli) return gpu_milli < o.gpu_milli;
    if (cpu_milli != o.cpu_milli) return cpu_milli < o.cpu_milli;
    return jobs.size() < o.jobs.size();
  }
};

// The BE jobs on `node` whose eviction lets `pod` fit, taken most recently started first
// until it fits; nullopt when even evicting every BE job there is not enough.
std::optional<Eviction> eviction_on(const SiteRuntime& s, NodeIndex node, const PodSpec& pod,
                                    const std::vector<Job>& jobs) {
  std::vector<std::size_t> be;
  for (std::size_t j : s.node_jobs[node]) {
    if (!jobs[j].info.latency_sensitive) be.push_back(j);
  }
  if (be.empty()) return std::nullopt;
  std::sort(be.begin(), be.end(), [&](std::size_t a, std::size_t b) {
    if (jobs[a].start_s != jobs[b].start_s) return jobs[a].start_s > jobs[b].start_s;
    return a > b;
  });
  const NodeSpec& spec = s.cluster->spec(node);
  NodeState state = s.cluster->state(node);
  Eviction e;
  for (std::size_t j : be) {
    const Allocation a = *s.cluster->allocation_of(static_cast<PodId>(j));
    state.cpu_free_milli += a.cpu_milli;
    state.memory_free_mib += a.memory_mib;
    for (int g = 0; g < spec.gpu_count; ++g) {
      if ((a.gpus >> g) & 1U) state.gpu_free_milli[g] += a.gpu_milli_each;
    }
    Cluster::refresh_derived(state, spec.gpu_count);
    e.jobs.push_back(j);
    e.gpu_milli += jobs[j].info.pod->total_gpu_milli();
    e.cpu_milli += a.cpu_milli;
    if (policy::filter_node(spec, state, pod) == policy::FilterReason::kFits) return e;
  }
  return std::nullopt;
}

}  // namespace

bool FleetSim::preempt_for(std::size_t site, std::size_t j) {
  SiteRuntime& s = sites_[site];
  const PodSpec& pod = *jobs_[j].info.pod;
  std::optional<Eviction> best;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(s.cluster->size()); ++n) {
    if (!s.cluster->state(n).online) continue;
    std::optional<Eviction> e = eviction_on(s, n, pod, jobs_);
    if (e && (!best || e->cheaper_than(*best))) best = std::move(e);
  }
  if (!best) return false;
  for (std::size_t victim : best->jobs) {
    stop_job(site, victim);
    Job& job = jobs_[victim];
    job.start_s = -1;
    job.failed_at = std::numeric_limits<std::size_t>::max();
    const int64_t gpu = job.info.pod->total_gpu_milli();
    s.queued_gpu_milli += gpu;
    s.pending_gpu_milli += gpu;
    s.be_queue.push_front(victim);
    ++result_.be_preemptions;
  }
  return true;
}

}  // namespace greensched::multi::detail
