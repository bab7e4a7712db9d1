// What dispatch agents see of the fleet (FleetView): load, fit, marginal power and
// fragmentation of a job at a site, and the expected energy signal there.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "greensched/multi/fleet_sim_internal.hpp"
#include "greensched/multi/placement_preview.hpp"

namespace greensched::multi::detail {

double FleetSim::load(int site) const {
  const SiteRuntime& s = sites_[site];
  const double cap = static_cast<double>(s.cluster->total_gpu_milli());
  if (cap <= 0) return 1.0;
  return static_cast<double>(s.cluster->allocated_gpu_milli() + s.pending.gpu_milli) / cap;
}

double FleetSim::load_at(int site, int64_t t) const {
  const SiteRuntime& s = sites_[site];
  const double cap = static_cast<double>(s.cluster->total_gpu_milli());
  if (cap <= 0) return 1.0;
  return static_cast<double>(s.ledger.at(std::max(t, now_)) + s.pending.gpu_milli) / cap;
}

double FleetSim::host_fill_with(int site, const PodSpec& pod, int64_t t) const {
  const SiteRuntime& s = sites_[site];
  const Cluster& c = *s.cluster;
  const bool later = t > now_;
  const auto share = [](int64_t used, int64_t capacity) {
    return capacity > 0 ? static_cast<double>(used) / static_cast<double>(capacity) : 0.0;
  };
  const int64_t cpu = later ? s.cpu_ledger.at(t) : c.allocated_cpu_milli();
  const int64_t memory = later ? s.memory_ledger.at(t) : c.allocated_memory_mib();
  return std::max(share(cpu + s.pending.cpu_milli + pod.cpu_milli, c.total_cpu_milli()),
                  share(memory + s.pending.memory_mib + pod.memory_mib, c.total_memory_mib()));
}

bool FleetSim::promised_room(const SiteRuntime& s, const PodSpec& pod, int64_t offline) const {
  const Cluster& c = *s.cluster;
  return c.allocated_gpu_milli() + s.pending.gpu_milli + pod.total_gpu_milli() <=
             c.total_gpu_milli() - offline &&
         c.allocated_cpu_milli() + s.pending.cpu_milli + pod.cpu_milli <= c.total_cpu_milli() &&
         c.allocated_memory_mib() + s.pending.memory_mib + pod.memory_mib <= c.total_memory_mib();
}

double FleetSim::ls_reserve(int site, int64_t t) const {
  const SiteRuntime& s = sites_[site];
  const double cap = static_cast<double>(s.cluster->total_gpu_milli());
  if (cap <= 0) return 0.0;
  t = std::max(t, now_);
  const int64_t now_hour = (now_ - trace_hour0_) / 3600;
  const int64_t hour = (t - trace_hour0_) / 3600;
  if (reserve_hour_ != now_hour) {
    reserve_hour_ = now_hour;
    reserve_expected_.assign(sites_.size(), {});
  }
  std::vector<double>& cached = reserve_expected_[static_cast<std::size_t>(site)];
  const auto i = static_cast<std::size_t>(hour - now_hour);
  if (cached.size() <= i) cached.resize(i + 1, std::numeric_limits<double>::quiet_NaN());
  if (std::isnan(cached[i])) cached[i] = expected_ls_milli(site, hour, now_hour);
  return std::max(0.0, cached[i] - static_cast<double>(s.ls_ledger.at(t))) / cap;
}

double FleetSim::expected_ls_milli(int site, int64_t hour, int64_t now_hour) const {
  // The LS load expected in the hour: the mean of that hour on the past 7 days that are
  // complete, or, with no such day yet, the mean over the complete hours so far (none in the
  // first hour).
  const SiteRuntime& s = sites_[site];
  double sum = 0;
  int days = 0;
  for (int k = 1; k <= 7; ++k) {
    const int64_t h = hour - 24 * k;
    if (h < 0) break;
    if (h >= now_hour) continue;  // not complete yet
    const auto i = static_cast<std::size_t>(h);
    sum += i < s.ls_hourly_milli_s.size() ? s.ls_hourly_milli_s[i] / 3600.0 : 0.0;
    ++days;
  }
  double expected = days > 0 ? sum / days : 0.0;
  if (days == 0 && now_hour > 0) {  // no such day yet: the mean over the complete hours
    double total = 0;
    const auto complete = std::min(static_cast<std::size_t>(now_hour), s.ls_hourly_milli_s.size());
    for (std::size_t i = 0; i < complete; ++i) total += s.ls_hourly_milli_s[i];
    expected = total / 3600.0 / static_cast<double>(now_hour);
  }
  return expected;
}

bool FleetSim::fits_now(int site, const PodSpec& pod) const {
  const SiteRuntime& s = sites_[site];
  if (!promised_room(s, pod, s.engine->offline_gpu_milli())) {
    return false;  // what was dispatched here first takes the free GPUs, CPU and memory
  }
  return multi::fits_now(*sites_[site].cluster, pod);
}

bool FleetSim::fits_ever(int site, const PodSpec& pod) const {
  return multi::fits_ever(*sites_[site].cluster, pod);
}

FleetSim::Preview FleetSim::preview(int site, const PodSpec& pod) const {
  const SiteRuntime& s = sites_[site];
  for (const auto& [p, version, value] : preview_cache_) {
    if (p == &pod && version == (s.view_version() << 8 | static_cast<uint64_t>(site))) {
      return value;
    }
  }
  Preview out;
  if (!promised_room(s, pod, 0)) {
    out.watts = std::numeric_limits<double>::infinity();  // full, counting what is on its way
    return out;
  }
  // The placement depends only on the site's state and the pod's shape and memory: kept per
  // site and shape until the site changes.
  if (shape_placements_.size() < sites_.size()) shape_placements_.resize(sites_.size());
  const uint64_t version = s.view_version();
  std::vector<std::vector<ShapePlacement>>& by_shape =
      shape_placements_[static_cast<std::size_t>(site)];
  if (by_shape.size() <= pod.shape) by_shape.resize(pod.shape + 1);
  std::vector<ShapePlacement>& kept = by_shape[pod.shape];
  auto it = std::find_if(kept.begin(), kept.end(),
                         [&](const ShapePlacement& p) { return p.memory_mib == pod.memory_mib; });
  if (it == kept.end()) it = kept.insert(kept.end(), ShapePlacement{});
  ShapePlacement& place = *it;
  if (!place.valid || place.version != version || place.shape != pod.shape_fields() ||
      place.memory_mib != pod.memory_mib) {
    auto& self = const_cast<SiteRuntime&>(s);
    const policy::Decision d = self.scheduler->schedule(*s.cluster, pod, self.preview_rng);
    place = ShapePlacement{};
    place.valid = true;
    place.version = version;
    place.shape = pod.shape_fields();
    place.memory_mib = pod.memory_mib;
    place.node = d.node;
    place.gpus = d.gpus;
    if (d.node < 0) {
      place.node = s.engine->wake_candidate(pod);
      place.waking = true;
      place.gpus = first_gpus(pod);  // a powered-down node is empty
    }
  }
  if (place.node < 0) {
    out.watts = std::numeric_limits<double>::infinity();
    return out;
  }
  // Its room is reserved while its data moves, or its node wakes during the transfer.
  out.holdable = true;
  const double pue = s.spec->pue_at(epoch_s(now_));
  if (!(place.pue == pue)) {
    // The node's fragmentation now is that of its interned state (kept while it is unchanged;
    // the state clamps a negative free CPU to 0).
    std::optional<int64_t> before;
    if (s.cluster->state(place.node).cpu_free_milli >= 0) {
      before = s.frag->state(s.frag->node_state(*s.cluster, place.node)).frag_scaled;
    }
    const PlacementCost cost = placement_cost(*s.cluster, *s.figures, *s.frag, pod, place.node,
                                              place.gpus, place.waking, pue, before);
    place.pue = pue;
    place.watts = cost.watts;
    place.frag_milli = cost.frag_milli;
  }
  out.watts = place.watts;
  out.frag_milli = place.frag_milli;
  if (preview_cache_.size() > 16) preview_cache_.clear();
  preview_cache_.emplace_back(&pod, s.view_version() << 8 | static_cast<uint64_t>(site), out);
  return out;
}

double FleetSim::run_watts(int site, const PodSpec& pod) const {
  const SiteRuntime& s = sites_[site];
  std::vector<double>& cache = run_watts_[static_cast<std::size_t>(site)];
  if (pod.shape >= cache.size()) cache.resize(pod.shape + 1, std::nan(""));
  double& it_watts = cache[pod.shape];  // the pod shape fixes CPU, GPUs and model
  if (std::isnan(it_watts)) it_watts = least_floor_watts(*s.cluster, *s.figures, pod);
  return it_watts * s.spec->pue_at(epoch_s(now_));
}

std::span<const JobInfo> FleetSim::submitted_now() const {
  if (batch_at_ != now_) {
    batch_at_ = now_;
    batch_.clear();
    auto it = std::partition_point(by_submit_.begin(), by_submit_.end(),
                                   [&](std::size_t j) { return jobs_[j].info.submit_s < now_; });
    for (; it != by_submit_.end() && jobs_[*it].info.submit_s == now_; ++it) {
      batch_.push_back(jobs_[*it].info);
      batch_.back().duration_s = known_duration(*it);
    }
  }
  return batch_;
}

SignalView FleetSim::expected_signal(int site, int64_t from_s, int64_t to_s, double job_kw) const {
  const SiteSpec& spec = fleet_.sites[site];
  if (!spec.energy) return FleetView::expected_signal(site, from_s, to_s, job_kw);
  const double demand_kw = sites_[site].facility_watts(epoch_s(now_)) / 1000.0;
  return net_cache_.mean(spec, site, *forecaster_, generation_[site], epoch_s(now_),
                         epoch_s(from_s), epoch_s(to_s), demand_kw, job_kw);
}

}  // namespace greensched::multi::detail
