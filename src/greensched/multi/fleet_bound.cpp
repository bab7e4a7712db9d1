#include "greensched/multi/fleet_bound.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include <fmt/format.h>
#include <coin/ClpSimplex.hpp>
#include <coin/ClpSolve.hpp>
#include <coin/CoinPackedMatrix.hpp>

#include "greensched/frag/target_workload.hpp"
#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/fleet_node_types.hpp"
#include "greensched/multi/site_replay.hpp"
#include "greensched/multi/whole_job_bound.hpp"
#include "greensched/multi/whole_job_schedule.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kBoundHour = 3600;
// Data per GPU-hour is rounded down to a power of two, 2^q; below kRhoTiny, to nothing.
constexpr double kRhoTiny = 1.0 / 1024;
constexpr int kNoData = std::numeric_limits<int>::min();
// A long job's whole hours go to one site within each block of this many trace hours.
constexpr int64_t kBlockHours = 24;

// A piece of work: slices alike in everything the LP can tell apart.
struct PieceKey {
  int home;
  int64_t hour;  // the slice's own hour
  bool ls;
  uint32_t allowed;  // bit s: the job may run at site s
  int rho_q;         // data per GPU-hour class (kNoData: none)
  auto operator<=>(const PieceKey&) const = default;
};

// Per site and hour: grams, USD and facility kWh of one GPU-hour run there.
struct HourCosts {
  std::vector<std::vector<double>> grams, usd, kwh;
};

// A column's figures per unit: what it emits, costs and draws, and the GPU-hours it moves,
// shifts or leaves unserved.
struct ColumnFigures {
  double grams = 0, usd = 0, kwh = 0, transfer_kwh = 0;
  double moved_gpu_hours = 0, shifted_gpu_hours = 0, unserved_gpu_hours = 0;
  int site = -1;              // where its work runs (-1: nowhere, or not yet known)
  double site_gpu_hours = 0;  // GPU-hours it runs there inside the measured window
};

// Whole hours [from, to] of jobs alike (one GPU of them per unit) that go to one site.
struct BlockKey {
  int home;
  int64_t from, to;  // trace hours, inside one block
  bool ls;
  uint32_t allowed;
  int rho_q;
  auto operator<=>(const BlockKey&) const = default;
};

// Subgradient steps of the whole-job bound: on a 4-site, 14-day fleet at 12 h slack about
// 9 s, within 0.05 % of where 600 steps get.
constexpr int kWholeJobSteps = 300;
// Steps of the tightened dual, from the plain dual's prices: each prices every node type of
// every site, so a step costs several of the plain one's (0.28 s on a 4-site, 14-day fleet at
// 12 h slack). From there it climbs little (+0.004 % in 20 steps, nothing more in 60): the
// bound is where it starts, the plain dual's prices under the tighter capacities. On October
// 2023 (seed 42, 0 h slack) at the plain fill it equals the plain dual, the CPU rows and node
// types adding nothing these steps find; all of its 1.34 t less saving is the calibrated fill.
constexpr int kTightSteps = 6;
constexpr double kTightAim = 0.001;  // from near its optimum: short steps
// A site's capacity is what its scheduler reaches with this much work offered (% of its GPUs):
// more than it can run, so its queue never empties.
constexpr double kSaturatingLoadPct = 110;

int rho_class(double rho) {
  return rho >= kRhoTiny ? static_cast<int>(std::floor(std::log2(rho))) : kNoData;
}

double rho_value(int q) {
  return q == kNoData ? 0.0 : std::exp2(static_cast<double>(q));
}

int64_t ceil_hours(int64_t s) {
  return (std::max<int64_t>(s, 0) + kBoundHour - 1) / kBoundHour;
}

}  // namespace

double FleetBoundResult::carbon_vs_local_pct() const {
  return local.carbon_kg > 0 ? 100.0 * (carbon.carbon_kg / local.carbon_kg - 1.0) : 0.0;
}

double FleetBoundResult::cost_vs_local_pct() const {
  return cost && local.cost_usd > 0 ? 100.0 * (cost->cost_usd / local.cost_usd - 1.0) : 0.0;
}

double FleetBoundResult::feasible_saving_kg() const {
  return feasible ? local.carbon_kg - feasible->carbon_kg : std::nan("");
}

double FleetBoundResult::first_come_saving_kg() const {
  return feasible ? local.carbon_kg - feasible->first_come_carbon_kg : std::nan("");
}

double FleetBoundResult::tight_saving_kg() const {
  return tight ? local.carbon_kg - tight->carbon_kg : std::nan("");
}

double FleetBoundResult::feasible_gap_pct() const {
  const double dual = saving_kg();
  return feasible && dual > 0 ? 100.0 * (dual - feasible_saving_kg()) / dual + 0.0 : std::nan("");
}

namespace {

double share_pct(double run_saving_kg, double saving) {
  // (+ 0.0: no saving is 0, not -0.)
  return saving > 0 ? 100.0 * run_saving_kg / saving + 0.0 : std::nan("");
}

}  // namespace

double share_of_bound_pct(double run_saving_kg, const FleetBoundResult& bound) {
  return share_pct(run_saving_kg, bound.saving_kg());
}

double share_of_feasible_pct(double run_saving_kg, const FleetBoundResult& bound) {
  return share_pct(run_saving_kg, bound.feasible_saving_kg());
}

double share_of_tight_bound_pct(double run_saving_kg, const FleetBoundResult& bound) {
  return share_pct(run_saving_kg, bound.tight_saving_kg());
}

Result<FleetBoundResult> fleet_bound(const Fleet& fleet, std::span<const PodSpec> pods,
                                     std::span<const int> home, const FleetBoundOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::size_t sites = fleet.sites.size();
  if (sites == 0 || sites > 32) return Error{"fleet bound: the fleet needs 1 to 32 sites"};
  if (home.size() != pods.size()) {
    return Error{fmt::format("fleet bound: {} home sites for {} jobs", home.size(), pods.size())};
  }
  for (int h : home) {
    if (h < 0 || static_cast<std::size_t>(h) >= sites) {
      return Error{fmt::format("fleet bound: home site {} of {} sites", h, sites)};
    }
  }
  if (options.site_fill.size() != sites) {
    return Error{fmt::format("fleet bound: {} capacity shares for {} sites",
                             options.site_fill.size(), sites)};
  }
  for (double f : options.site_fill) {
    if (!(f > 0 && f <= 1))
      return Error{fmt::format("fleet bound: capacity share {} not in (0, 1]", f)};
  }
  if (!options.tight_site_fill.empty() && options.tight_site_fill.size() != sites) {
    return Error{fmt::format("fleet bound: {} tight capacity shares for {} sites",
                             options.tight_site_fill.size(), sites)};
  }
  for (double f : options.tight_site_fill) {
    if (!(f > 0 && f <= 1))
      return Error{fmt::format("fleet bound: tight capacity share {} not in (0, 1]", f)};
  }
  if (!options.site_gpu_kw.empty() && options.site_gpu_kw.size() != sites) {
    return Error{fmt::format("fleet bound: {} GPU power figures for {} sites",
                             options.site_gpu_kw.size(), sites)};
  }
  if (options.ls_bound_s < 0 || options.be_slack_s < 0) {
    return Error{"fleet bound: the LS bound and the slack must be >= 0"};
  }
  // Site figures: GPUs, IT watts per GPU-hour, whether every site has prices.
  std::vector<double> gpus(sites, 0), gpu_kw(sites, 0);
  std::vector<std::vector<power::NodePower>> site_figures(sites);
  bool priced = true;
  for (std::size_t s = 0; s < sites; ++s) {
    const SiteSpec& site = fleet.sites[s];
    auto figures = options.power_model.resolve(site.nodes, fleet.models);
    if (!figures.ok()) return Error{fmt::format("site {}: {}", site.name, figures.error())};
    site_figures[s] = figures.value();
    gpu_kw[s] = s < options.site_gpu_kw.size() && options.site_gpu_kw[s] > 0
                    ? options.site_gpu_kw[s]
                    : full_gpu_it_watts(site.nodes, figures.value()) / 1000.0;
    gpus[s] = static_cast<double>(site_gpu_milli(site)) / kGpuMilli;
    priced = priced && site.price.has_value();
  }

  // Jobs into slices: a job's whole hours inside its run, cut at block boundaries, join
  // blocks of alike jobs; its other slices join pieces of alike slices.
  const int64_t be_shift_h = ceil_hours(options.be_slack_s);
  std::map<PieceKey, double> short_pieces;
  std::map<BlockKey, double> blocks;  // GPUs
  const int64_t first_hour = std::max<int64_t>(options.measure_from_s, 0) / kBoundHour;
  const int64_t end_hour = options.measure_to_s == std::numeric_limits<int64_t>::max()
                               ? std::numeric_limits<int64_t>::max()
                               : (options.measure_to_s + kBoundHour - 1) / kBoundHour;
  int64_t last_hour = 0;
  std::vector<WholeJob> jobs;
  // Jobs without GPUs, each drawing its CPU floor (kW, the least on any site): `gpus` holds
  // the kW, and they take no GPU capacity.
  std::vector<WholeJob> cpu_jobs;
  std::vector<std::size_t> job_pod, cpu_pod;  // the pod of each
  for (std::size_t j = 0; j < pods.size(); ++j) {
    const PodSpec& pod = pods[j];
    if (pod.creation_time < 0 || pod.deletion_time < 0) {
      return Error{fmt::format("fleet bound: pod {} has no creation/deletion time", pod.name)};
    }
    const double g = static_cast<double>(pod.total_gpu_milli()) / kGpuMilli;
    const int64_t from = pod.creation_time, to = pod.deletion_time;
    if (to <= from || (g <= 0 && pod.cpu_milli <= 0)) continue;
    WholeJob job;
    job.home = home[j];
    job.ls = is_latency_sensitive(pod);
    job.data_gb = job_data_gb(pod, options.data_gb_per_job);
    job.gpus = g;
    job.submit_s = from;
    job.end_s = to;
    const int64_t submit_hour = from / kBoundHour;
    for (std::size_t s = 0; s < sites; ++s) {
      if (!job.ls || static_cast<int>(s) == home[j] ||
          fleet.sites[s].network.transfer_seconds(job.data_gb) <=
              static_cast<double>(options.ls_bound_s)) {
        job.allowed |= 1u << s;
      }
    }
    if (g <= 0) {
      double kw = std::numeric_limits<double>::infinity();
      for (std::size_t s = 0; s < sites; ++s) {
        const double w = cpu_only_floor_watts(fleet.sites[s].nodes, site_figures[s], pod);
        if (w > 0) kw = std::min(kw, w / 1000.0);
      }
      const int64_t last = std::min(end_hour, (to - 1) / kBoundHour + 1) - 1;
      if (!std::isfinite(kw) || last < std::max(submit_hour, first_hour)) continue;
      job.gpus = kw;
      last_hour = std::max(last_hour, last);
      cpu_jobs.push_back(job);
      cpu_pod.push_back(j);
      continue;
    }
    std::vector<std::pair<int64_t, double>> slices;  // (trace hour, GPU-hours) in the window
    for (int64_t h = std::max(submit_hour, first_hour); h * kBoundHour < to && h < end_hour; ++h) {
      const int64_t a = std::max(from, h * kBoundHour), b = std::min(to, (h + 1) * kBoundHour);
      slices.emplace_back(h, g * static_cast<double>(b - a) / kBoundHour);
      last_hour = std::max(last_hour, h);
    }
    if (slices.empty()) continue;
    const int q = rho_class(job.data_gb / (g * static_cast<double>(to - from) / kBoundHour));
    std::size_t lo = 0, hi = slices.size();
    if (slices.size() >= 3) {
      if (slices.front().second < g * (1 - 1e-12)) ++lo;
      if (slices.back().second < g * (1 - 1e-12)) --hi;
    } else {
      hi = lo;
    }
    for (std::size_t i = lo; i < hi;) {
      const int64_t block_end = (slices[i].first / kBlockHours + 1) * kBlockHours;
      std::size_t e = i;
      while (e < hi && slices[e].first < block_end) ++e;
      blocks[BlockKey{job.home, slices[i].first, slices[e - 1].first, job.ls, job.allowed, q}] += g;
      i = e;
    }
    for (std::size_t i = 0; i < slices.size(); ++i) {
      if (i >= lo && i < hi) continue;
      short_pieces[PieceKey{job.home, slices[i].first, job.ls, job.allowed, q}] += slices[i].second;
    }
    jobs.push_back(std::move(job));
    job_pod.push_back(j);
  }
  const auto hours = static_cast<std::size_t>(last_hour + be_shift_h + 1);
  HourCosts cost{std::vector<std::vector<double>>(sites, std::vector<double>(hours)),
                 std::vector<std::vector<double>>(sites, std::vector<double>(hours)),
                 std::vector<std::vector<double>>(sites, std::vector<double>(hours))};
  double top_cost = 0;
  for (std::size_t s = 0; s < sites; ++s) {
    const SiteSpec& site = fleet.sites[s];
    for (std::size_t h = 0; h < hours; ++h) {
      const int64_t t = fleet.start_s + static_cast<int64_t>(h) * kBoundHour;
      // Past the window nothing is measured: work shifted there is free, as in the simulator.
      const bool measured = static_cast<int64_t>(h) < end_hour;
      const double kwh = measured ? gpu_kw[s] * site.pue_at(t) : 0.0;
      cost.kwh[s][h] = kwh;
      cost.grams[s][h] = kwh * site.carbon.at(t);
      cost.usd[s][h] = priced ? kwh * site.price->at(t) : 0.0;
      top_cost = std::max({top_cost, cost.grams[s][h], cost.usd[s][h]});
    }
  }
  // Jobs without GPUs: per site and hour, what one IT kWh emits or costs (0 outside the
  // measured window), and what they emit and cost at home from their submission.
  std::vector<std::vector<double>> cpu_grams(sites, std::vector<double>(hours, 0.0));
  std::vector<std::vector<double>> cpu_usd = cpu_grams;
  double cpu_penalty = 0;  // per kW-hour of a job no site can take: never the least
  for (std::size_t s = 0; s < sites; ++s) {
    const SiteSpec& site = fleet.sites[s];
    for (auto h = static_cast<std::size_t>(first_hour); h < hours; ++h) {
      if (static_cast<int64_t>(h) >= end_hour) break;
      const int64_t t = fleet.start_s + static_cast<int64_t>(h) * kBoundHour;
      cpu_grams[s][h] = site.pue_at(t) * site.carbon.at(t);
      cpu_usd[s][h] = priced ? site.pue_at(t) * site.price->at(t) : 0.0;
      cpu_penalty = std::max({cpu_penalty, cpu_grams[s][h], cpu_usd[s][h]});
    }
  }
  cpu_penalty = 1e3 * (cpu_penalty + 1.0);
  const auto at_home = [&](const std::vector<std::vector<double>>& per_kwh) {
    double total = 0;
    for (const WholeJob& job : cpu_jobs) {
      const auto& row = per_kwh[static_cast<std::size_t>(job.home)];
      for (int64_t t = job.submit_s; t < job.end_s;) {
        const int64_t h = t / kBoundHour;
        const int64_t b = std::min(job.end_s, (h + 1) * kBoundHour);
        if (h >= static_cast<int64_t>(row.size())) break;
        total += job.gpus * row[static_cast<std::size_t>(h)] * static_cast<double>(b - t) /
                 static_cast<double>(kBoundHour);
        t = b;
      }
    }
    return total;
  };

  FleetBoundResult result;
  if (options.schedule) result.schedule.assign(pods.size(), WholeJobStart{});
  result.be_slack_h = static_cast<double>(options.be_slack_s) / kBoundHour;
  result.site_fill = options.site_fill;
  result.site_gpu_kw = gpu_kw;
  for (const SiteSpec& site : fleet.sites) result.site_names.push_back(site.name);
  result.pieces = short_pieces.size() + blocks.size();
  result.local.site_gpu_hours.assign(sites, 0.0);
  const auto add_local = [&](int site, int64_t hour, double amount) {
    const auto s = static_cast<std::size_t>(site);
    const auto h = static_cast<std::size_t>(hour);
    result.gpu_hours += amount;
    result.local.site_gpu_hours[s] += amount;
    result.local.carbon_kg += amount * cost.grams[s][h] / 1000.0;
    result.local.cost_usd += amount * cost.usd[s][h];
    result.local.energy_kwh += amount * cost.kwh[s][h];
  };
  for (const auto& [key, amount] : short_pieces) add_local(key.home, key.hour, amount);
  for (const auto& [key, gpus_of] : blocks) {
    for (int64_t h = key.from; h <= key.to; ++h) add_local(key.home, h, gpus_of);
  }
  // The window's hours: the measured ones, or (unbounded) those work may run in.
  const double window_hours = static_cast<double>(
      std::max<int64_t>(std::min(end_hour, static_cast<int64_t>(hours)) - first_hour, 1));
  const auto alloc_pct = [&](const std::vector<double>& gpu_hours) {
    std::vector<double> pct(sites, 0.0);
    for (std::size_t s = 0; s < sites; ++s) {
      if (gpus[s] > 0) pct[s] = 100.0 * gpu_hours[s] / (gpus[s] * window_hours);
    }
    return pct;
  };
  result.local.site_alloc_pct = alloc_pct(result.local.site_gpu_hours);
  const double cpu_home_g = at_home(cpu_grams);  // jobs without GPUs at home, grams
  result.local.carbon_kg += cpu_home_g / 1000.0;
  result.local.cost_usd += at_home(cpu_usd);

  // Rows: one per piece (served in full), one per site and hour for BE work arriving there
  // (it leaves to the hours it runs in), one per site and hour for capacity.
  const std::size_t piece_rows = result.pieces;
  const auto arrive_row = [&](std::size_t s, std::size_t h) {
    return static_cast<int>(piece_rows + s * hours + h);
  };
  const auto capacity_row = [&](std::size_t s, std::size_t h) {
    return static_cast<int>(piece_rows + sites * hours + s * hours + h);
  };
  const int rows = static_cast<int>(piece_rows + 2 * sites * hours);
  std::vector<int> row_index, col_index;
  std::vector<double> value;
  std::vector<ColumnFigures> columns;
  const auto add_entry = [&](int row, double v) {
    row_index.push_back(row);
    col_index.push_back(static_cast<int>(columns.size()));
    value.push_back(v);
  };
  std::vector<std::vector<bool>> be_arrives(sites, std::vector<bool>(hours, false));
  std::vector<double> row_amount;
  // A transfer of `kwh` to site s in trace hour h, per unit of the column.
  const auto transfer = [&](std::size_t s, int64_t h, double kwh, ColumnFigures& f) {
    const int64_t t = fleet.start_s + h * kBoundHour;
    f.transfer_kwh = kwh;
    f.kwh += kwh;
    f.grams += kwh * fleet.sites[s].carbon.at(t);
    f.usd += priced ? kwh * fleet.sites[s].price->at(t) : 0.0;
  };
  // The work of a column (unit: one GPU-hour of a piece, or one GPU over a block's hours) at s:
  // LS work runs in its hour (capacity rows, paying the grid), BE work arrives at the site.
  const auto place = [&](std::size_t s, bool ls, int64_t hour, double amount, ColumnFigures& f) {
    const auto h = static_cast<std::size_t>(hour);
    if (ls) {
      f.grams += amount * cost.grams[s][h];
      f.usd += amount * cost.usd[s][h];
      f.kwh += amount * cost.kwh[s][h];
      f.site = static_cast<int>(s);
      f.site_gpu_hours += amount;  // LS slices lie in the window
      add_entry(capacity_row(s, h), amount);
    } else {
      be_arrives[s][h] = true;
      add_entry(arrive_row(s, h), amount);
    }
  };
  std::size_t p = 0;
  for (const auto& [key, amount] : short_pieces) {
    for (std::size_t s = 0; s < sites; ++s) {
      if ((key.allowed & (1u << s)) == 0) continue;
      ColumnFigures f;
      if (static_cast<int>(s) != key.home) {
        transfer(s, key.hour, rho_value(key.rho_q) * fleet.sites[s].network.energy_kwh_per_gb, f);
        f.moved_gpu_hours = 1.0;
      }
      add_entry(static_cast<int>(p), 1.0);
      place(s, key.ls, key.hour, 1.0, f);
      columns.push_back(f);
    }
    add_entry(static_cast<int>(p), 1.0);
    columns.push_back(ColumnFigures{.unserved_gpu_hours = 1.0});
    row_amount.push_back(amount);
    ++p;
  }
  for (const auto& [key, gpus_of] : blocks) {
    const double span = static_cast<double>(key.to - key.from + 1);
    for (std::size_t s = 0; s < sites; ++s) {
      if ((key.allowed & (1u << s)) == 0) continue;
      ColumnFigures f;
      if (static_cast<int>(s) != key.home) {
        transfer(s, key.from,
                 rho_value(key.rho_q) * span * fleet.sites[s].network.energy_kwh_per_gb, f);
        f.moved_gpu_hours = span;
      }
      add_entry(static_cast<int>(p), 1.0);
      for (int64_t h = key.from; h <= key.to; ++h) place(s, key.ls, h, 1.0, f);
      columns.push_back(f);
    }
    add_entry(static_cast<int>(p), 1.0);
    columns.push_back(ColumnFigures{.unserved_gpu_hours = span});
    row_amount.push_back(gpus_of);
    ++p;
  }
  for (std::size_t s = 0; s < sites; ++s) {
    for (std::size_t k = 0; k < hours; ++k) {
      if (!be_arrives[s][k]) continue;
      const std::size_t last = std::min(hours - 1, k + static_cast<std::size_t>(be_shift_h));
      for (std::size_t h = k; h <= last; ++h) {
        add_entry(arrive_row(s, k), -1.0);
        add_entry(capacity_row(s, h), 1.0);
        columns.push_back(
            ColumnFigures{.grams = cost.grams[s][h],
                          .usd = cost.usd[s][h],
                          .kwh = cost.kwh[s][h],
                          .shifted_gpu_hours = h > k ? 1.0 : 0.0,
                          .site = static_cast<int>(s),
                          .site_gpu_hours = static_cast<int64_t>(h) < end_hour ? 1.0 : 0.0});
      }
    }
  }
  std::vector<double> row_lo(static_cast<std::size_t>(rows), 0.0), row_hi(row_lo);
  for (std::size_t r = 0; r < piece_rows; ++r) row_lo[r] = row_hi[r] = row_amount[r];
  for (std::size_t s = 0; s < sites; ++s) {
    for (std::size_t h = 0; h < hours; ++h) {
      const auto r = static_cast<std::size_t>(capacity_row(s, h));
      row_lo[r] = -COIN_DBL_MAX;
      row_hi[r] = options.site_fill[s] * gpus[s];
    }
  }
  const double penalty = 1e3 * (top_cost + 1.0);
  // For the whole-job bound: per site, transfer kWh per GB and capacity; per site and hour
  // inside the window, what one kWh of transfer arriving there emits or costs.
  std::vector<double> kwh_per_gb(sites), capacity(sites);
  for (std::size_t s = 0; s < sites; ++s) {
    kwh_per_gb[s] = fleet.sites[s].network.energy_kwh_per_gb;
    capacity[s] = options.site_fill[s] * gpus[s];
  }
  const auto transfer_unit = [&](bool by_cost) {
    std::vector<std::vector<double>> unit(sites, std::vector<double>(hours, 0.0));
    for (std::size_t s = 0; s < sites; ++s) {
      for (auto h = static_cast<std::size_t>(first_hour); h < hours; ++h) {
        if (static_cast<int64_t>(h) >= end_hour) break;
        const int64_t t = fleet.start_s + static_cast<int64_t>(h) * kBoundHour;
        unit[s][h] =
            by_cost ? (priced ? fleet.sites[s].price->at(t) : 0.0) : fleet.sites[s].carbon.at(t);
      }
    }
    return unit;
  };
  CoinPackedMatrix matrix(true, row_index.data(), col_index.data(), value.data(),
                          static_cast<CoinBigIndex>(value.size()));
  matrix.setDimensions(rows, static_cast<int>(columns.size()));
  const std::vector<double> col_lo(columns.size(), 0.0), col_hi(columns.size(), COIN_DBL_MAX);

  // One solve per objective; the figures of its optimum.
  const auto solve = [&](bool by_cost) -> Result<FleetBoundSide> {
    std::vector<double> objective(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      objective[c] = columns[c].unserved_gpu_hours > 0 ? penalty * columns[c].unserved_gpu_hours
                     : by_cost                         ? columns[c].usd
                                                       : columns[c].grams;
    }
    ClpSimplex clp;
    clp.setLogLevel(0);
    clp.loadProblem(matrix, col_lo.data(), col_hi.data(), objective.data(), row_lo.data(),
                    row_hi.data());
    // Presolve and the dual simplex: on a 4-site, 14-day fleet several times faster than
    // either alone, the primal simplex or the barrier.
    ClpSolve how;
    how.setSolveType(ClpSolve::useDual);
    how.setPresolveType(ClpSolve::presolveOn);
    clp.initialSolve(how);
    if (!clp.isProvenOptimal()) {
      return Error{
          fmt::format("fleet bound: CLP did not solve the LP (status {}, {} rows, {} "
                      "columns)",
                      clp.status(), rows, columns.size())};
    }
    const double* x = clp.primalColumnSolution();
    FleetBoundSide side;
    side.day_blocks = true;
    side.site_gpu_hours.assign(sites, 0.0);
    double unserved = 0;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (x[c] <= 0) continue;
      const ColumnFigures& f = columns[c];
      unserved += x[c] * f.unserved_gpu_hours;
      side.carbon_kg += x[c] * f.grams / 1000.0;
      side.cost_usd += x[c] * f.usd;
      side.energy_kwh += x[c] * f.kwh;
      side.transfer_kwh += x[c] * f.transfer_kwh;
      side.gpu_hours_moved += x[c] * f.moved_gpu_hours;
      side.gpu_hours_shifted += x[c] * f.shifted_gpu_hours;
      if (f.site >= 0)
        side.site_gpu_hours[static_cast<std::size_t>(f.site)] += x[c] * f.site_gpu_hours;
    }
    side.site_alloc_pct = alloc_pct(side.site_gpu_hours);
    result.unserved_gpu_hours = std::max(result.unserved_gpu_hours, unserved);
    // The whole-job bound's figures, `per_unit_hour` being a GPU-hour's or an IT kWh's.
    const auto whole_costs = [&](const std::vector<std::vector<double>>& per_unit_hour,
                                 double unserved_per_unit_hour) {
      return WholeJobCosts{.per_gpu_hour = per_unit_hour,
                           .per_transfer_kwh = transfer_unit(by_cost),
                           .kwh_per_gb = kwh_per_gb,
                           .capacity = capacity,
                           .be_slack_s = options.be_slack_s,
                           .ls_slack_s = options.ls_bound_s,
                           .unserved_per_gpu_hour = unserved_per_unit_hour};
    };
    // The schedule is read off the carbon bound's prices, where asked.
    const bool schedule = options.schedule && !by_cost;
    const auto keep_schedule = [&](const WholeJobBoundResult& r,
                                   const std::vector<std::size_t>& pod_of) {
      for (std::size_t i = 0; i < r.schedule.size(); ++i)
        result.schedule[pod_of[i]] = r.schedule[i];
    };
    // Jobs without GPUs take no GPU capacity, and CPU is not modelled: each at its cheapest site
    // and start alone (the whole-job bound with nothing priced) is their least.
    double cpu_least = 0;
    if (!cpu_jobs.empty()) {
      const WholeJobBoundResult r =
          whole_job_bound(cpu_jobs, whole_costs(by_cost ? cpu_usd : cpu_grams, cpu_penalty), {}, 0,
                          schedule ? WholeJobSchedule::kAlone : WholeJobSchedule::kNone);
      cpu_least = r.objective;
      keep_schedule(r, cpu_pod);
    }
    if (by_cost) {
      side.cost_usd += cpu_least;
    } else {
      side.carbon_kg += cpu_least / 1000.0;
      result.cpu_only_saving_kg = (cpu_home_g - cpu_least) / 1000.0;
    }
    side.day_lp_carbon_kg = side.carbon_kg;
    side.day_lp_cost_usd = side.cost_usd;
    if (unserved > 1e-6) return side;  // the penalty is in the prices: no bound on the rest
    // Hold each job to one site: the dual bound from the LP's capacity prices.
    const double* dual = clp.dualRowSolution();
    std::vector<std::vector<double>> lambda(sites, std::vector<double>(hours));
    for (std::size_t s = 0; s < sites; ++s) {
      for (std::size_t h = 0; h < hours; ++h) {
        lambda[s][h] = std::max(0.0, -dual[capacity_row(s, h)]);
      }
    }
    WholeJobCosts whole = whole_costs(by_cost ? cost.usd : cost.grams, penalty);
    for (auto& row : whole.per_gpu_hour) {  // before the window: not measured
      std::fill_n(row.begin(), std::min<std::size_t>(row.size(), first_hour), 0.0);
    }
    // The first-come schedule: asked for, or the feasible side's start.
    const bool first_come = schedule || (options.feasible && !by_cost);
    WholeJobBoundResult whole_bound =
        whole_job_bound(jobs, whole, std::move(lambda), kWholeJobSteps,
                        first_come ? WholeJobSchedule::kWithinCapacity : WholeJobSchedule::kNone);
    if (schedule) keep_schedule(whole_bound, job_pod);
    const double least = whole_bound.objective;
    side.capacity_prices = std::move(whole_bound.lambda);
    if (by_cost) {
      side.cost_usd = std::max(side.cost_usd, least + cpu_least);
    } else {
      side.carbon_kg = std::max(side.carbon_kg, (least + cpu_least) / 1000.0);
    }
    side.day_blocks = false;
    if (by_cost) return side;
    if (options.feasible) {
      const auto from = std::chrono::steady_clock::now();
      const FeasibleWholeJobSchedule f =
          improve_whole_job_schedule(jobs, whole, std::move(whole_bound.schedule));
      FleetBoundFeasible feasible;
      feasible.carbon_kg = (f.cost + cpu_least) / 1000.0;
      feasible.unserved_gpu_hours = f.unserved_gpu_hours;
      feasible.unplaced_jobs = f.unplaced;
      feasible.first_come_carbon_kg = (f.start_cost + cpu_least) / 1000.0;
      feasible.first_come_unserved_gpu_hours = f.start_unserved_gpu_hours;
      feasible.first_come_unplaced_jobs = f.start_unplaced;
      feasible.passes = f.passes;
      feasible.moves = f.moves;
      feasible.site_gpu_hours.assign(sites, 0.0);
      const int64_t window_from = first_hour * kBoundHour;
      const int64_t window_to = end_hour == std::numeric_limits<int64_t>::max()
                                    ? std::numeric_limits<int64_t>::max()
                                    : end_hour * kBoundHour;
      for (std::size_t k = 0; k < jobs.size() && k < f.start.size(); ++k) {
        const WholeJobStart& at = f.start[k];
        if (at.site < 0) continue;
        const int64_t a = std::max(jobs[k].submit_s + at.delay_s, window_from);
        const int64_t b = std::min(jobs[k].end_s + at.delay_s, window_to);
        if (b > a) {
          feasible.site_gpu_hours[static_cast<std::size_t>(at.site)] +=
              jobs[k].gpus * static_cast<double>(b - a) / kBoundHour;
        }
      }
      feasible.site_alloc_pct = alloc_pct(feasible.site_gpu_hours);
      feasible.wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
      result.feasible = feasible;
    }
    if (options.tight) {
      // The tightened model: per site a pool per node type with GPUs (fill x its GPUs), each
      // job only in pools it fits; CPU rows per site (all its cores), every job's cores on
      // them; jobs without GPUs in the same dual at their floor. It starts from the plain
      // dual's prices, each site's on every pool of it, and no CPU price.
      const auto from = std::chrono::steady_clock::now();
      auto types = fleet_node_types(fleet);
      if (!types.ok()) return Error{fmt::format("fleet bound: {}", types.error())};
      const std::vector<double>& fill =
          options.tight_site_fill.empty() ? options.site_fill : options.tight_site_fill;
      FleetBoundTight tight;
      tight.site_fill = fill;
      WholeJobCosts costs = whole;
      std::vector<std::vector<double>> start;
      for (std::size_t s = 0; s < sites; ++s) {
        for (std::size_t t = 0; t < types.value().types.size(); ++t) {
          const double g = types.value().gpus[s][t];
          if (g <= 0) continue;
          costs.pool_site.push_back(static_cast<int>(s));
          costs.pool_type.push_back(static_cast<int>(t));
          costs.pool_capacity.push_back(fill[s] * g);
          start.push_back(side.capacity_prices[s]);
        }
      }
      costs.per_cpu_kwh = cpu_grams;
      costs.cpu_capacity = types.value().site_cores;
      std::vector<WholeJob> all;
      all.reserve(jobs.size() + cpu_jobs.size());
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        WholeJob job = jobs[i];
        const PodSpec& pod = pods[job_pod[i]];
        job.cpus = static_cast<double>(std::max<int64_t>(pod.cpu_milli, 0)) / 1000.0;
        job.types = fitting_types(types.value(), pod);
        if (job.types == 0) {
          job.types = ~0u;
          ++tight.unfit_jobs;
        }
        all.push_back(job);
      }
      for (std::size_t i = 0; i < cpu_jobs.size(); ++i) {
        WholeJob job = cpu_jobs[i];
        job.floor_kw = job.gpus;  // the plain dual's jobs without GPUs hold their kW there
        job.gpus = 0;
        job.cpus = static_cast<double>(std::max<int64_t>(pods[cpu_pod[i]].cpu_milli, 0)) / 1000.0;
        all.push_back(job);
      }
      const WholeJobBoundResult r =
          whole_job_bound_from(all, costs, WholeJobPrices{std::move(start), {}}, kTightSteps,
                               WholeJobSchedule::kNone, kTightAim);
      tight.carbon_kg = r.objective / 1000.0;
      tight.iterations = r.iterations;
      // Each fill at most the plain one: the tight model's schedules are the plain model's too.
      bool within = true;
      for (std::size_t s = 0; s < sites; ++s) within = within && fill[s] <= options.site_fill[s];
      if (within && side.carbon_kg > tight.carbon_kg) {
        tight.carbon_kg = side.carbon_kg;
        tight.raised = true;
      }
      tight.wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
      result.tight = tight;
    }
    return side;
  };
  auto by_carbon = solve(false);
  if (!by_carbon.ok()) return Error{by_carbon.error()};
  result.carbon = by_carbon.value();
  if (priced) {
    auto by_cost = solve(true);
    if (!by_cost.ok()) return Error{by_cost.error()};
    result.cost = by_cost.value();
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  result.dual_wall_seconds = result.wall_seconds -
                             (result.feasible ? result.feasible->wall_seconds : 0.0) -
                             (result.tight ? result.tight->wall_seconds : 0.0);
  return result;
}

Result<std::vector<SiteCapacity>> measure_site_capacity(const Fleet& fleet,
                                                        std::span<const PodSpec> templates,
                                                        uint32_t shape_count,
                                                        const power::PowerModel& power_model,
                                                        uint64_t seed, double days) {
  const frag::TargetWorkload target = frag::build_target_workload(templates);
  std::map<std::string, SiteCapacity> measured;  // by site signature
  std::vector<SiteCapacity> fill;
  for (const SiteSpec& site : fleet.sites) {
    const int64_t milli = site_gpu_milli(site);
    const std::string signature = site_signature(site);
    if (milli == 0) {
      fill.push_back(SiteCapacity{});
      continue;
    }
    if (auto it = measured.find(signature); it != measured.end()) {
      fill.push_back(it->second);
      continue;
    }
    auto figures = power_model.resolve(site.nodes, fleet.models);
    if (!figures.ok()) return Error{fmt::format("site {}: {}", site.name, figures.error())};
    // One replay with more work offered than the site can run: the allocation it reaches and
    // what it draws per allocated GPU.
    auto replay = replay_site(fleet, site, templates, shape_count, target, figures.value(), seed,
                              kSaturatingLoadPct, days);
    if (!replay.ok()) return Error{replay.error()};
    const trace::LoadWindow& window = replay.value().window;
    const sim::ReplayResult& r = replay.value().result;
    // The floor of its jobs without GPUs over the measured days (they start when they come:
    // nothing holds them up at a site with CPU to spare), IT kWh. The bound charges them that,
    // so it is taken out of what the GPU-hours draw.
    double cpu_only_kwh = 0;
    for (const PodSpec& pod : replay.value().pods) {
      if (pod.total_gpu_milli() > 0 || pod.cpu_milli <= 0) continue;
      const int64_t a = std::max(pod.creation_time, window.start_s);
      const int64_t b = std::min(pod.deletion_time, window.end_s);
      if (b <= a) continue;
      cpu_only_kwh += cpu_only_floor_watts(site.nodes, figures.value(), pod) / 1000.0 *
                      static_cast<double>(b - a) / 3600.0;
    }
    const double it_kwh = r.energy_kwh / site.pue;
    const double gpu_hours = r.kwh_per_gpu_hour > 0 ? r.energy_kwh / r.kwh_per_gpu_hour : 0.0;
    const SiteCapacity saturated{
        std::clamp(r.gpu_alloc_pct / 100.0, 1e-6, 1.0),
        gpu_hours > 0 ? std::max(0.0, it_kwh - cpu_only_kwh) / gpu_hours : 0.0};
    measured.emplace(signature, saturated);
    fill.push_back(saturated);
  }
  return fill;
}

}  // namespace greensched::multi
