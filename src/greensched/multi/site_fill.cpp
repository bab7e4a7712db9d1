#include "greensched/multi/site_fill.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "greensched/frag/target_workload.hpp"
#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/site_replay.hpp"
#include "greensched/sim/replay.hpp"

namespace greensched::multi {
namespace {

// Offered loads tried, % of the site's GPUs, highest first.
constexpr double kFillLoads[] = {110, 100, 90, 80, 70, 60, 50, 40, 30};

}  // namespace

double busiest_hour_share(std::span<const double> time_s, std::span<const double> allocated,
                          double from_s, int hours, double gpus) {
  if (gpus <= 0 || hours <= 0 || time_s.empty()) return 0.0;
  double busiest = 0;
  for (int h = 0; h < hours; ++h) {
    const double a = from_s + 3600.0 * h, b = a + 3600.0;
    double area = 0;
    for (std::size_t i = 0; i < time_s.size(); ++i) {
      const double lo = std::max(a, time_s[i]);
      const double hi = std::min(b, i + 1 < time_s.size() ? time_s[i + 1] : b);
      if (hi > lo) area += allocated[i] * (hi - lo);
    }
    busiest = std::max(busiest, area / 3600.0 / gpus);
  }
  return std::min(busiest, 1.0);
}

Result<std::vector<SiteFill>> calibrate_site_fill(
    const Fleet& fleet, std::span<const PodSpec> templates, uint32_t shape_count,
    const power::PowerModel& power_model, uint64_t seed, int64_t delay_bound_s, double days) {
  const frag::TargetWorkload target = frag::build_target_workload(templates);
  std::map<std::string, SiteFill> measured;  // by site signature
  std::vector<SiteFill> fills;
  for (const SiteSpec& site : fleet.sites) {
    const int64_t milli = site_gpu_milli(site);
    const std::string signature = site_signature(site);
    if (milli == 0) {
      fills.push_back(SiteFill{});
      continue;
    }
    if (auto it = measured.find(signature); it != measured.end()) {
      fills.push_back(it->second);
      continue;
    }
    auto figures = power_model.resolve(site.nodes, fleet.models);
    if (!figures.ok()) return Error{fmt::format("site {}: {}", site.name, figures.error())};
    SiteFill found;
    for (double load : kFillLoads) {
      auto replay = replay_site(fleet, site, templates, shape_count, target, figures.value(), seed,
                                load, days, /*timeline_step_s=*/60);
      if (!replay.ok()) return Error{replay.error()};
      const trace::LoadWindow& window = replay.value().window;
      const sim::ReplayResult& r = replay.value().result;
      std::vector<double> t, alloc;
      for (const sim::TimelinePoint& p : r.timeline) {
        t.push_back(p.time_s);
        alloc.push_back(p.allocated_gpus);
      }
      const int hours = static_cast<int>(window.length_s() / 3600);
      found = SiteFill{std::clamp(busiest_hour_share(t, alloc, r.window_start_s, hours,
                                                     static_cast<double>(milli) / kGpuMilli),
                                  1e-6, 1.0),
                       load, r.p99_queue_delay_s, r.gpu_alloc_pct};
      if (r.p99_queue_delay_s <= static_cast<double>(delay_bound_s)) break;
    }
    measured.emplace(signature, found);
    fills.push_back(found);
  }
  return fills;
}

}  // namespace greensched::multi
