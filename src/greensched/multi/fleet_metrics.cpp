// The fleet simulator's metrics: energy and carbon integrated between events (hour by hour
// where the PUE follows the weather), the time series, and the summary of a run.
#include <algorithm>
#include <vector>

#include "greensched/multi/fleet_sim_internal.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/quantiles.hpp"

namespace greensched::multi::detail {

void FleetSim::record_ls(SiteRuntime& s, int64_t from, int64_t to) {
  if (s.ls_alloc_milli == 0) return;
  for (int64_t a = from; a < to;) {
    const int64_t h = (a - trace_hour0_) / 3600;
    const int64_t b = std::min(to, trace_hour0_ + (h + 1) * 3600);
    const auto i = static_cast<std::size_t>(std::max<int64_t>(h, 0));
    if (s.ls_hourly_milli_s.size() <= i) s.ls_hourly_milli_s.resize(i + 1, 0.0);
    s.ls_hourly_milli_s[i] += static_cast<double>(s.ls_alloc_milli) * static_cast<double>(b - a);
    a = b;
  }
}

void FleetSim::advance(int64_t t) {
  if (t <= last_) return;
  for (SiteRuntime& s : sites_) record_ls(s, last_, t);
  const int64_t from = std::max(last_, options_.measure_from_s);
  const int64_t to = std::min(t, options_.measure_to_s);
  last_ = t;
  if (to <= from) return;
  for (SiteRuntime& s : sites_) {
    const double dt = static_cast<double>(to - from);
    accumulate(s, epoch_s(from), epoch_s(to), s.engine->it_watts());
    s.alloc_milli_seconds += static_cast<double>(s.cluster->allocated_gpu_milli()) * dt;
  }
}

void FleetSim::accumulate(SiteRuntime& s, int64_t from, int64_t to, double it_watts) {
  if (!s.spec->energy || s.spec->energy->pue.empty()) {
    const double watts = it_watts * s.spec->pue;
    s.energy_j += watts * static_cast<double>(to - from);
    s.carbon_g += watts * s.spec->carbon.integral(from, to) / 3.6e6;
    if (s.spec->price) s.cost += watts * s.spec->price->integral(from, to) / 3.6e6;
    add_hourly(s, from, to, watts);
    return;
  }
  for (int64_t a = from; a < to;) {
    const int64_t b = std::min(to, floor_hour(a) + 3600);
    const double watts = it_watts * s.spec->pue_at(a);
    s.energy_j += watts * static_cast<double>(b - a);
    s.carbon_g += watts * s.spec->carbon.integral(a, b) / 3.6e6;
    if (s.spec->price) s.cost += watts * s.spec->price->integral(a, b) / 3.6e6;
    add_hourly(s, a, b, watts);
    a = b;
  }
}

void FleetSim::add_hourly(SiteRuntime& s, int64_t from, int64_t to, double watts) {
  for (int64_t a = from; a < to;) {
    const int64_t b = std::min(to, floor_hour(a) + 3600);
    const auto h = static_cast<std::size_t>(std::max<int64_t>((floor_hour(a) - hour0_) / 3600, 0));
    if (s.hourly_kwh.size() <= h) s.hourly_kwh.resize(h + 1, 0.0);
    s.hourly_kwh[h] += watts * static_cast<double>(b - a) / 3.6e6;
    a = b;
  }
}

void FleetSim::sample() {
  if (now_ > options_.measure_to_s) return;  // past the measured window: nothing to show
  if (!result_.timeline.empty() && result_.timeline.back().time_s == now_) return;
  FleetSample fleet_row;
  fleet_row.time_s = now_;
  fleet_row.site = -1;
  double fleet_gpus = 0, fleet_cpu = 0, fleet_cpu_used = 0;
  double fleet_carbon_rate = 0;
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    const SiteRuntime& s = sites_[i];
    FleetSample row;
    row.time_s = now_;
    row.site = static_cast<int>(i);
    row.power_watts = s.facility_watts(epoch_s(now_));
    row.energy_kwh = s.energy_j / 3.6e6;
    row.carbon_kg = s.carbon_g / 1000.0;
    row.carbon_intensity = s.spec->carbon.at(epoch_s(now_));
    row.running_jobs = s.engine->running();
    row.queued_jobs = static_cast<int64_t>(s.queued());
    row.waiting_jobs = s.waiting;
    row.allocated_gpus = static_cast<double>(s.cluster->allocated_gpu_milli()) / kGpuMilli;
    const double cap = static_cast<double>(s.cluster->total_gpu_milli()) / kGpuMilli;
    row.gpu_alloc_pct = cap > 0 ? 100.0 * row.allocated_gpus / cap : 0.0;
    const auto cpu = static_cast<double>(s.cluster->total_cpu_milli());
    const auto cpu_used = static_cast<double>(s.cluster->allocated_cpu_milli());
    row.cpu_alloc_pct = cpu > 0 ? 100.0 * cpu_used / cpu : 0.0;
    fleet_cpu += cpu;
    fleet_cpu_used += cpu_used;
    row.online_nodes = s.online_nodes();
    result_.timeline.push_back(row);
    fleet_row.power_watts += row.power_watts;
    fleet_row.energy_kwh += row.energy_kwh;
    fleet_row.carbon_kg += row.carbon_kg;
    fleet_carbon_rate += row.power_watts * row.carbon_intensity;
    fleet_row.running_jobs += row.running_jobs;
    fleet_row.queued_jobs += row.queued_jobs;
    fleet_row.waiting_jobs += row.waiting_jobs;
    fleet_row.allocated_gpus += row.allocated_gpus;
    fleet_gpus += cap;
    fleet_row.online_nodes += row.online_nodes;
  }
  fleet_row.carbon_intensity =
      fleet_row.power_watts > 0 ? fleet_carbon_rate / fleet_row.power_watts : 0;
  fleet_row.gpu_alloc_pct = fleet_gpus > 0 ? 100.0 * fleet_row.allocated_gpus / fleet_gpus : 0;
  fleet_row.cpu_alloc_pct = fleet_cpu > 0 ? 100.0 * fleet_cpu_used / fleet_cpu : 0;
  result_.timeline.push_back(fleet_row);
}

void FleetSim::summarize_delays() {
  std::vector<double> delays_ls, delays_be;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const Job& job = jobs_[j];
    // The first start (a job evicted with --preempt-be restarts later), as a replay counts it.
    const int64_t start_s =
        job.site >= 0 ? sites_[job.site].engine->first_start(static_cast<PodId>(j)) : -1;
    result_.decisions[j].start_s = start_s;
    if (!in_window(job.info.submit_s)) continue;
    if (start_s < 0) {
      ++result_.jobs_never_started;
      if (job.info.latency_sensitive) ++result_.ls_slo_violations;
      continue;
    }
    const double delay = static_cast<double>(start_s - job.info.submit_s);
    if (job.info.latency_sensitive) {
      delays_ls.push_back(delay);
      if (delay > static_cast<double>(options_.ls_bound_s)) ++result_.ls_slo_violations;
    } else {
      delays_be.push_back(delay);
    }
  }
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  result_.mean_delay_s_ls = mean(delays_ls);
  result_.mean_delay_s_be = mean(delays_be);
  std::sort(delays_be.begin(), delays_be.end());
  std::sort(delays_ls.begin(), delays_ls.end());
  result_.p99_delay_s_be = trace::quantile_sorted(delays_be, 0.99);
  result_.p99_delay_s_ls = trace::quantile_sorted(delays_ls, 0.99);
}

void FleetSim::summarize_sites(const std::vector<PodSpec>& pods) {
  double alloc_integral = 0, capacity = 0;
  for (const SiteRuntime& s : sites_) {
    result_.energy_kwh += s.energy_j / 3.6e6;
    result_.carbon_kg += s.carbon_g / 1000.0;
    result_.site_energy_kwh.push_back(s.energy_j / 3.6e6);
    result_.site_carbon_kg.push_back(s.carbon_g / 1000.0);
    result_.site_jobs.push_back(s.jobs);
    result_.site_hourly_kwh.push_back(s.hourly_kwh);
    alloc_integral += s.alloc_milli_seconds;
    capacity += static_cast<double>(s.cluster->total_gpu_milli());
  }
  std::size_t hours = 0;
  for (const auto& h : result_.site_hourly_kwh) hours = std::max(hours, h.size());
  for (auto& h : result_.site_hourly_kwh) h.resize(hours, 0.0);
  result_.energy_hour0_s = hours > 0 ? hour0_ : 0;
  const int64_t from = std::max(first_, options_.measure_from_s);
  const int64_t to = std::min(last_, options_.measure_to_s);
  const double span = static_cast<double>(std::max<int64_t>(to - from, 0));
  result_.window_s = span;
  result_.gpu_alloc_pct =
      span > 0 && capacity > 0 ? 100.0 * alloc_integral / (capacity * span) : 0.0;
  result_.offered_load_pct =
      trace::offered_load_pct(pods, static_cast<int64_t>(capacity), trace::LoadWindow{from, to});
  result_.target_load_pct = options_.target_load_pct;
  result_.be_slack_h = static_cast<double>(options_.be_slack_s) / 3600.0;
  for (const nlohmann::json& r : records_) {
    result_.records += r.dump();
    result_.records += '\n';
  }
}

}  // namespace greensched::multi::detail
