#include "greensched/trace/load_generator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "greensched/core/rng.hpp"

namespace greensched::trace {
namespace {

constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 24 * kHour;
constexpr int kHoursPerWeek = 168;
// A job list longer than this means the templates carry almost no GPU time.
constexpr std::size_t kMaxJobs = 50'000'000;

// Arrival rate per hour slot (arrivals per hour of exposure), from the templates' creation
// times: hour of week when they span two weeks or more, else hour of day.
struct ArrivalProfile {
  std::vector<double> rate;  // per slot
  std::string name;
  double rate_at(int64_t t) const {
    return rate[static_cast<std::size_t>((t / kHour) % static_cast<int64_t>(rate.size()))];
  }
};

ArrivalProfile arrival_profile(std::span<const PodSpec> templates) {
  int64_t first = templates.front().creation_time;
  int64_t last = first;
  for (const PodSpec& p : templates) {
    first = std::min(first, p.creation_time);
    last = std::max(last, p.creation_time);
  }
  ArrivalProfile profile;
  const bool weekly = last - first >= 14 * kDay;
  profile.name = weekly ? "hour of week" : "hour of day";
  const std::size_t slots = weekly ? kHoursPerWeek : 24;
  std::vector<double> arrivals(slots, 0.0), exposure(slots, 0.0);
  for (const PodSpec& p : templates) arrivals[(p.creation_time / kHour) % slots] += 1;
  for (int64_t h = first / kHour; h <= last / kHour; ++h) exposure[h % slots] += 1;
  profile.rate.assign(slots, 0.0);
  double total = 0;
  for (std::size_t s = 0; s < slots; ++s) {
    if (exposure[s] > 0) profile.rate[s] = arrivals[s] / exposure[s];
    total += profile.rate[s];
  }
  if (total <= 0) profile.rate.assign(slots, 1.0);
  return profile;
}

// GPU milli-seconds inside `window` of a job of `gpu_milli` running [creation, deletion).
double work_in_window(int64_t gpu_milli, int64_t creation, int64_t deletion, LoadWindow window) {
  const int64_t from = std::max(creation, window.start_s);
  const int64_t to = std::min(deletion, window.end_s);
  if (to <= from) return 0.0;
  return static_cast<double>(gpu_milli) * static_cast<double>(to - from);
}

// Index i with cumulative[i-1] <= u < cumulative[i].
std::size_t pick(const std::vector<double>& cumulative, double u) {
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()),
                               cumulative.size() - 1);
}

}  // namespace

double offered_load_pct(std::span<const PodSpec> pods, int64_t cluster_gpu_milli,
                        LoadWindow window) {
  if (cluster_gpu_milli <= 0 || window.length_s() <= 0) return 0.0;
  double work = 0;
  for (const PodSpec& p : pods) {
    work += work_in_window(p.total_gpu_milli(), p.creation_time, p.deletion_time, window);
  }
  return 100.0 * work /
         (static_cast<double>(cluster_gpu_milli) * static_cast<double>(window.length_s()));
}

Result<GeneratedLoad> generate_load(std::span<const PodSpec> templates, int64_t cluster_gpu_milli,
                                    const LoadSpec& spec) {
  if (!(spec.load_pct > 0) || !(spec.load_pct <= 1000)) {
    return Error{fmt::format("load must be in (0, 1000] %, got {}", spec.load_pct)};
  }
  if (!(spec.days > 0) || !(spec.days <= 366)) {
    return Error{fmt::format("days must be in (0, 366], got {}", spec.days)};
  }
  if (!(spec.warmup_days >= 0) || !(spec.warmup_days <= 366)) {
    return Error{fmt::format("warm-up days must be in [0, 366], got {}", spec.warmup_days)};
  }
  if (cluster_gpu_milli <= 0) return Error{"the cluster has no GPUs to load"};
  if (templates.empty()) return Error{"the pod list is empty"};
  double gpu_work = 0;  // sum of GPU milli-seconds over the templates
  for (std::size_t i = 0; i < templates.size(); ++i) {
    const PodSpec& p = templates[i];
    if (p.creation_time < 0 || p.deletion_time < p.creation_time) {
      return Error{
          fmt::format("pod {} (#{}) has no valid creation/deletion time: a load needs the trace's "
                      "durations (a full-schema openb pod list)",
                      p.name, i)};
    }
    gpu_work += static_cast<double>(p.total_gpu_milli()) *
                static_cast<double>(p.deletion_time - p.creation_time);
  }
  if (gpu_work <= 0) return Error{"the pod list holds no GPU work (no GPU pod lasts a second)"};

  GeneratedLoad out;
  out.target_load_pct = spec.load_pct;
  const auto warmup_s = static_cast<int64_t>(std::llround(spec.warmup_days * kDay));
  const auto days_s = static_cast<int64_t>(std::llround(spec.days * kDay));
  out.window = LoadWindow{warmup_s, warmup_s + days_s};
  const int64_t horizon_s = out.window.end_s;

  const ArrivalProfile profile = arrival_profile(templates);
  out.profile = profile.name;
  // New arrivals: piecewise constant in the hour, weighted by the slot's rate.
  std::vector<double> hour_weight;
  for (int64_t h = 0; h * kHour < horizon_s; ++h) {
    const double length = static_cast<double>(std::min(kHour, horizon_s - h * kHour));
    hour_weight.push_back(profile.rate_at(h * kHour) * length);
  }
  std::vector<double> hour_cumulative(hour_weight.size());
  std::partial_sum(hour_weight.begin(), hour_weight.end(), hour_cumulative.begin());
  const double arrivals_expected = hour_cumulative.back();  // in rate x seconds
  // Jobs alive at time 0: as many as the mean rate times the mean duration.
  double mean_rate = 0;
  for (double r : profile.rate) mean_rate += r;
  mean_rate /= static_cast<double>(profile.rate.size());
  std::vector<double> duration_cumulative(templates.size());
  double duration_total = 0;
  for (std::size_t i = 0; i < templates.size(); ++i) {
    duration_total += static_cast<double>(templates[i].deletion_time - templates[i].creation_time);
    duration_cumulative[i] = duration_total;
  }
  const double alive_expected = mean_rate * duration_total / static_cast<double>(templates.size());
  const double p_alive = alive_expected / (alive_expected + arrivals_expected);

  const double target =
      spec.load_pct / 100.0 * static_cast<double>(cluster_gpu_milli) * static_cast<double>(days_s);
  // The draws first, as 24-byte records sorted by creation time (draw order among equal
  // times); the jobs are built from them once, in a list of the exact length: at hundreds of
  // millions of GPU-hours a list grown by doubling, and its sort buffer, held gigabytes.
  struct Draw {
    uint32_t template_index = 0;
    uint32_t draw = 0;
    int64_t creation_time = 0;
    int64_t deletion_time = 0;
  };
  std::vector<Draw> draws;
  Rng rng(spec.seed);
  double offered = 0;
  while (offered < target) {
    if (draws.size() >= kMaxJobs) {
      return Error{
          fmt::format("more than {} jobs would be needed for {} % load", kMaxJobs, spec.load_pct)};
    }
    Draw d;
    d.draw = static_cast<uint32_t>(draws.size());
    if (rng.uniform_real() < p_alive && duration_total > 0) {
      // Running since before time 0: length-biased template, uniform age.
      d.template_index =
          static_cast<uint32_t>(pick(duration_cumulative, rng.uniform_real() * duration_total));
      const PodSpec& t = templates[d.template_index];
      const auto duration = static_cast<uint64_t>(t.deletion_time - t.creation_time);
      d.creation_time = 0;
      d.deletion_time = 1 + static_cast<int64_t>(rng.uniform(duration));
      ++out.running_at_start;
    } else {
      d.template_index = static_cast<uint32_t>(rng.uniform(templates.size()));
      const PodSpec& t = templates[d.template_index];
      const std::size_t hour = pick(hour_cumulative, rng.uniform_real() * arrivals_expected);
      const int64_t length = std::min(kHour, horizon_s - static_cast<int64_t>(hour) * kHour);
      d.creation_time =
          static_cast<int64_t>(hour) * kHour + static_cast<int64_t>(rng.uniform(length));
      d.deletion_time = d.creation_time + (t.deletion_time - t.creation_time);
    }
    offered += work_in_window(templates[d.template_index].total_gpu_milli(), d.creation_time,
                              d.deletion_time, out.window);
    draws.push_back(d);
  }
  std::stable_sort(draws.begin(), draws.end(),
                   [](const Draw& a, const Draw& b) { return a.creation_time < b.creation_time; });
  out.pods.reserve(draws.size());
  for (const Draw& d : draws) {
    PodSpec& job = out.pods.emplace_back(templates[d.template_index]);
    job.creation_time = d.creation_time;
    job.deletion_time = d.deletion_time;
    job.name = fmt::format("{}~{}", job.name, d.draw);
    job.scheduled_time = -1;
  }
  std::vector<Draw>().swap(draws);
  out.offered_load_pct = offered_load_pct(out.pods, cluster_gpu_milli, out.window);
  return out;
}

}  // namespace greensched::trace
