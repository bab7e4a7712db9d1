#include "greensched/report/multi_writer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "greensched/report/column_key.hpp"

namespace greensched::report {

std::string csv_field(const std::string& text) {
  // One pass over the text (find_first_of tests each character against the set in turn), and
  // the quoted form appended in runs: the fleet's decision records are long and many.
  const auto special = [](char c) { return c == ',' || c == '"' || c == '\n'; };
  if (std::none_of(text.begin(), text.end(), special)) return text;
  std::string out;
  out.reserve(text.size() + 8);
  out += '"';
  for (std::size_t pos = 0;;) {
    const std::size_t quote = text.find('"', pos);
    out.append(text, pos, quote == std::string::npos ? std::string::npos : quote + 1 - pos);
    if (quote == std::string::npos) break;
    out += '"';
    pos = quote + 1;
  }
  out += '"';
  return out;
}

void write_multi_summary_csv(std::ostream& out, std::span<const multi::MultiResult> results) {
  fmt::print(out,
             "agent,energy_kwh,carbon_kg,mean_delay_s_ls,mean_delay_s_be,p99_delay_s_be,"
             "ls_slo_violations,jobs_moved,gb_moved,gpu_alloc_pct,jobs_never_started,jobs,"
             "jobs_deferred,transfer_kwh,target_load_pct,offered_load_pct,slack_h,"
             "p99_delay_s_ls,window_s,controller,cost_usd,grid_import_kwh,onsite_kwh_used,"
             "self_consumption_pct,battery_cycles,export_kwh,curtailed_kwh,generation_kwh,"
             "be_preemptions\n");
  for (const multi::MultiResult& r : results) {
    const std::string target =
        r.target_load_pct > 0 ? fmt::format("{:.1f}", r.target_load_pct) : std::string();
    // One row per controller run on this result (the replay's carbon where there is none).
    const std::size_t rows = std::max<std::size_t>(r.energy.size(), 1);
    for (std::size_t c = 0; c < rows; ++c) {
      const multi::EnergyResult* e = c < r.energy.size() ? &r.energy[c] : nullptr;
      fmt::print(
          out,
          "{},{:.3f},{:.3f},{:.1f},{:.1f},{:.1f},{},{},{:.1f},{:.4f},{},{},{},{:.3f},{},{:.3f},"
          "{:g},{:.1f},{:.0f},",
          csv_field(r.agent), r.energy_kwh, e ? e->carbon_kg : r.carbon_kg, r.mean_delay_s_ls,
          r.mean_delay_s_be, r.p99_delay_s_be, r.ls_slo_violations, r.jobs_moved, r.gb_moved,
          r.gpu_alloc_pct, r.jobs_never_started, r.jobs, r.jobs_deferred, r.transfer_kwh, target,
          r.offered_load_pct, r.be_slack_h, r.p99_delay_s_ls, r.window_s);
      if (e == nullptr) {
        fmt::print(out, ",,,,,,,,,{}\n", r.be_preemptions);
        continue;
      }
      fmt::print(out, "{},{:.2f},{:.3f},{:.3f},{:.2f},{:.3f},{:.3f},{:.3f},{:.3f},{}\n",
                 e->controller, e->cost_usd, e->grid_import_kwh, e->onsite_kwh_used,
                 e->self_consumption_pct, e->battery_cycles, e->export_kwh, e->curtailed_kwh,
                 e->generation_kwh, r.be_preemptions);
    }
  }
}

void write_multi_timeline_csv(std::ostream& out, const multi::Fleet& fleet,
                              std::span<const multi::MultiResult> results) {
  fmt::print(out,
             "agent,time_s,site,power_watts,energy_kwh,carbon_kg,carbon_intensity,running_jobs,"
             "queued_jobs,waiting_jobs,allocated_gpus,gpu_alloc_pct,cpu_alloc_pct,online_nodes,"
             "load_pct,slack_h\n");
  for (const multi::MultiResult& r : results) {
    const std::string load =
        r.target_load_pct > 0 ? fmt::format("{:g}", r.target_load_pct) : std::string();
    for (const multi::FleetSample& s : r.timeline) {
      const std::string site = s.site < 0 ? "fleet" : fleet.sites[s.site].name;
      fmt::print(
          out, "{},{},{},{:.1f},{:.4f},{:.4f},{:.1f},{},{},{},{:.3f},{:.3f},{:.3f},{},{},{:g}\n",
          csv_field(r.agent), s.time_s, csv_field(site), s.power_watts, s.energy_kwh, s.carbon_kg,
          s.carbon_intensity, s.running_jobs, s.queued_jobs, s.waiting_jobs, s.allocated_gpus,
          s.gpu_alloc_pct, s.cpu_alloc_pct, s.online_nodes, load, r.be_slack_h);
    }
  }
}

void write_decisions_csv(std::ostream& out, const multi::Fleet& fleet,
                         std::span<const multi::MultiResult> results) {
  fmt::print(out,
             "agent,pod,qos,home_site,site,submit_s,not_before_s,start_s,reason,load_pct,"
             "slack_h\n");
  for (const multi::MultiResult& r : results) {
    const std::string load =
        r.target_load_pct > 0 ? fmt::format("{:g}", r.target_load_pct) : std::string();
    for (const multi::JobDecision& d : r.decisions) {
      fmt::print(out, "{},{},{},{},{},{},{},{},{},{},{:g}\n", csv_field(r.agent), csv_field(d.pod),
                 d.latency_sensitive ? "LS" : "BE", csv_field(fleet.sites[d.home_site].name),
                 csv_field(fleet.sites[d.site].name), d.submit_s, d.not_before_s, d.start_s,
                 csv_field(d.reason), load, r.be_slack_h);
    }
  }
}

std::string multi_summary_table(std::span<const multi::MultiResult> results) {
  std::size_t width = 6;
  for (const auto& r : results) width = std::max(width, r.agent.size());
  std::string out = fmt::format(
      "{:<{}} {:>6} {:>6} {:>11} {:>10} {:>8} {:>9} {:>9} {:>9} {:>7} {:>10} {:>8} {:>7} {:>6}\n",
      "agent", width, "load %", "slack", "energy kWh", "carbon kg", "vs local", "LS wait s",
      "BE wait s", "BE p99 s", "LS viol", "jobs moved", "GB moved", "alloc %", "never");
  // The baseline of a row: `local` at the same load and slack, else the first row.
  const auto baseline = [&](const multi::MultiResult& r) {
    for (const auto& b : results) {
      if (b.agent == "local" && b.target_load_pct == r.target_load_pct &&
          b.be_slack_h == r.be_slack_h) {
        return b.carbon_kg;
      }
    }
    return results.empty() ? 0.0 : results.front().carbon_kg;
  };
  for (const auto& r : results) {
    const double base = baseline(r);
    const std::string vs =
        base > 0 ? fmt::format("{:+.1f}%", 100.0 * (r.carbon_kg / base - 1.0)) : "-";
    out += fmt::format(
        "{:<{}} {:>6.1f} {:>5g}h {:>11.1f} {:>10.1f} {:>8} {:>9.1f} {:>9.1f} {:>9.1f} {:>7} {:>10} "
        "{:>8.0f} {:>7.2f} {:>6}\n",
        r.agent, width, r.offered_load_pct, r.be_slack_h, r.energy_kwh, r.carbon_kg, vs,
        r.mean_delay_s_ls, r.mean_delay_s_be, r.p99_delay_s_be, r.ls_slo_violations, r.jobs_moved,
        r.gb_moved, r.gpu_alloc_pct, r.jobs_never_started);
  }
  static constexpr ColumnKey kKey[] = {
      {"agent", "agent", "the dispatch agent (--agent)"},
      {"load %", "offered_load_pct", "offered GPU load of the fleet over the measured window"},
      {"slack", "slack_h", "how long a best-effort job may be deferred (--slack)"},
      {"energy kWh", "energy_kwh", "facility energy over the measured window"},
      {"carbon kg", "carbon_kg", "emissions of that energy, each site at its hourly intensity"},
      {"vs local", "-",
       "carbon_kg against local's at the same load and slack (else the first row)"},
      {"LS wait s", "mean_delay_s_ls", "mean wait of latency-sensitive jobs, submission to start"},
      {"BE wait s", "mean_delay_s_be", "mean wait of best-effort jobs, deferral included"},
      {"BE p99 s", "p99_delay_s_be", "99th percentile wait of best-effort jobs"},
      {"LS viol", "ls_slo_violations", "latency-sensitive jobs that started later than --ls-bound"},
      {"jobs moved", "jobs_moved", "jobs run away from their home site"},
      {"GB moved", "gb_moved", "data moved with them"},
      {"alloc %", "gpu_alloc_pct", "time-weighted fleet GPU allocation"},
      {"never", "jobs_never_started", "jobs that had not started when the run ended"},
  };
  out += column_key("summary.csv", kKey);
  // With --preempt-be: how many best-effort jobs each run evicted for latency-sensitive ones.
  std::string evicted;
  for (const auto& r : results) {
    if (r.be_preemptions == 0) continue;
    evicted += fmt::format("{}{} at {:.1f} % load, {:g} h slack: {}", evicted.empty() ? "" : "; ",
                           r.agent, r.offered_load_pct, r.be_slack_h, r.be_preemptions);
  }
  if (!evicted.empty()) out += "BE jobs evicted for LS jobs: " + evicted + "\n";
  return out;
}

namespace {

// The carbon of the `local` run at the run's load and slack (NaN without one).
double local_carbon_kg(const multi::MultiResult& run, std::span<const multi::MultiResult> results) {
  for (const auto& b : results) {
    if (b.agent == "local" && b.target_load_pct == run.target_load_pct &&
        b.be_slack_h == run.be_slack_h && b.carbon_kg > 0) {
      return b.carbon_kg;
    }
  }
  return std::nan("");
}

}  // namespace

double carbon_vs_local_pct(const multi::MultiResult& run,
                           std::span<const multi::MultiResult> results) {
  return 100.0 * (run.carbon_kg / local_carbon_kg(run, results) - 1.0);
}

const multi::FleetBoundResult* bound_of(const multi::MultiResult& run,
                                        std::span<const multi::FleetBoundResult> bounds) {
  return bound_of(run.target_load_pct, run.be_slack_h, bounds);
}

const multi::FleetBoundResult* bound_of(double target_load_pct, double be_slack_h,
                                        std::span<const multi::FleetBoundResult> bounds) {
  for (const auto& b : bounds) {
    if (b.target_load_pct == target_load_pct && b.be_slack_h == be_slack_h) return &b;
  }
  return nullptr;
}

BoundFigures bound_figures(const multi::MultiResult& run,
                           std::span<const multi::MultiResult> results,
                           const multi::FleetBoundResult& bound) {
  const double local = local_carbon_kg(run, results);
  const double saving = local - run.carbon_kg;
  return BoundFigures{-100.0 * bound.saving_kg() / local, multi::share_of_bound_pct(saving, bound),
                      multi::share_of_feasible_pct(saving, bound),
                      multi::share_of_tight_bound_pct(saving, bound)};
}

namespace {

std::string pct_or_dash(double x, const char* format) {
  return std::isnan(x) ? std::string("-") : fmt::format(fmt::runtime(format), x);
}

}  // namespace

std::string fleet_bound_table(std::span<const multi::MultiResult> results,
                              std::span<const multi::FleetBoundResult> bounds) {
  std::string out =
      "fleet bound (the least carbon of the same jobs: each site's GPUs up to what its "
      "scheduler reaches\nwhen saturated, each job at one site, started within its LS bound or "
      "BE slack and run\nwithout a pause, moves paying transfer energy, jobs without GPUs at "
      "their CPU floor; against\nthe same accounting with every job at home; moved, shifted "
      "and transfer are those of the LP\nthat lets jobs change site daily):\n";
  for (const auto& b : bounds) {
    std::string fill;
    for (double f : b.site_fill) fill += fmt::format("{}{:.1f}", fill.empty() ? "" : "/", 100 * f);
    std::string draw;
    for (double kw : b.site_gpu_kw) draw += fmt::format("{}{:.3f}", draw.empty() ? "" : "/", kw);
    out += fmt::format(
        "  {}, slack {:g} h: saves {:.2f} t ({:.2f} t against {:.2f} t with every job at home; "
        "jobs without GPUs {:.2f} t of it){}{}; "
        "moved {:.0f} GPU-h, shifted {:.0f} GPU-h, transfer {:.0f} kWh; unserved {:.0f} GPU-h; "
        "site capacity {} %, IT kW per GPU-hour {}\n",
        b.target_load_pct > 0 ? fmt::format("load {:.0f} %", b.target_load_pct)
                              : std::string("the pod list's own load"),
        b.be_slack_h, b.saving_kg() / 1000.0, b.carbon.carbon_kg / 1000.0,
        b.local.carbon_kg / 1000.0, b.cpu_only_saving_kg / 1000.0,
        b.carbon.day_blocks ? ", jobs free to change site daily"
                            : fmt::format(", each job at one site; {:.2f} t if free to change "
                                          "site daily",
                                          b.day_lp_saving_kg() / 1000.0),
        b.cost ? fmt::format(", cost {:+.1f} % at least-cost", b.cost_vs_local_pct()) : "",
        b.carbon.gpu_hours_moved, b.carbon.gpu_hours_shifted, b.carbon.transfer_kwh,
        b.unserved_gpu_hours, fill, draw);
    std::string by_site;
    for (std::size_t i = 0; i < b.site_names.size() && i < b.carbon.site_alloc_pct.size() &&
                            i < b.local.site_alloc_pct.size();
         ++i) {
      by_site += fmt::format("{}{} {:.1f} -> {:.1f}", by_site.empty() ? "" : ", ", b.site_names[i],
                             b.local.site_alloc_pct[i], b.carbon.site_alloc_pct[i]);
    }
    if (!by_site.empty())
      out += fmt::format("    GPU allocation %, at home -> bound: {}\n", by_site);
    if (b.feasible) {
      const multi::FleetBoundFeasible& f = *b.feasible;
      out += fmt::format(
          "    feasible schedule (each job at one site, within the same capacities): saves "
          "{:.2f} t, {:.1f} % less than the bound (first come, first placed: {:.2f} t{}){}\n",
          b.feasible_saving_kg() / 1000.0, b.feasible_gap_pct(), b.first_come_saving_kg() / 1000.0,
          f.first_come_unplaced_jobs > 0
              ? fmt::format(", {} jobs without room, {:.0f} GPU-h", f.first_come_unplaced_jobs,
                            f.first_come_unserved_gpu_hours)
              : "",
          f.unplaced_jobs > 0 ? fmt::format("; {} jobs found no room: {:.0f} GPU-h unserved",
                                            f.unplaced_jobs, f.unserved_gpu_hours)
                              : "");
    }
    if (b.tight) {
      std::string tight_fill;
      for (double f : b.tight->site_fill) {
        tight_fill += fmt::format("{}{:.1f}", tight_fill.empty() ? "" : "/", 100 * f);
      }
      out += fmt::format(
          "    tight bound (CPU cores and GPUs per node type, fill where jobs start within the "
          "LS bound {} %): saves {:.2f} t\n",
          tight_fill, b.tight_saving_kg() / 1000.0);
    }
  }
  std::size_t width = 6;
  for (const auto& r : results) width = std::max(width, r.agent.size());
  out += fmt::format("{:<{}} {:>6} {:>6} {:>9} {:>9} {:>8} {:>9} {:>8} {:>12}\n", "agent", width,
                     "load %", "slack", "vs local", "bound", "share", "feasible", "tight",
                     "transfer kWh");
  for (const auto& r : results) {
    const multi::FleetBoundResult* b = bound_of(r, bounds);
    const double vs = carbon_vs_local_pct(r, results);
    const double none = std::nan("");
    const BoundFigures f = b ? bound_figures(r, results, *b) : BoundFigures{none, none, none, none};
    out += fmt::format("{:<{}} {:>6.1f} {:>5g}h {:>9} {:>9} {:>8} {:>9} {:>8} {:>12.0f}\n", r.agent,
                       width, r.offered_load_pct, r.be_slack_h, pct_or_dash(vs, "{:+.1f}%"),
                       pct_or_dash(f.bound_vs_local_pct, "{:+.1f}%"),
                       pct_or_dash(f.share_pct, "{:.0f}%"),
                       pct_or_dash(f.feasible_share_pct, "{:.0f}%"),
                       pct_or_dash(f.tight_share_pct, "{:.0f}%"), r.transfer_kwh);
  }
  static constexpr ColumnKey kKey[] = {
      {"agent", "agent", "the dispatch agent"},
      {"load %", "target_load_pct", "the run's --load (the table shows the offered load)"},
      {"slack", "slack_h", "the run's --slack"},
      {"vs local", "carbon_vs_local_pct", "the run's carbon against local's"},
      {"bound", "bound_carbon_vs_local_pct",
       "the bound's saving against local's carbon: the one bound percentage"},
      {"share", "share_of_bound_pct",
       "the run's saving against local as a share of the bound's, in kg (transfer in both)"},
      {"feasible", "share_of_feasible_pct",
       "the same share of the feasible schedule's saving (each job at one site within the same "
       "capacities, found by local search): above 100 % the run beat that schedule"},
      {"tight", "share_of_tight_bound_pct",
       "the same share of the tight bound's saving (CPU cores, GPUs per node type, a fill at which "
       "jobs start within the LS bound)"},
      {"transfer kWh", "transfer_kwh", "energy of the data the run moved"},
  };
  out += column_key("bound.csv", kKey);
  return out;
}

void write_fleet_bound_csv(std::ostream& out, std::span<const multi::MultiResult> results,
                           std::span<const multi::FleetBoundResult> bounds) {
  fmt::print(out,
             "agent,target_load_pct,slack_h,carbon_vs_local_pct,bound_carbon_vs_local_pct,"
             "share_of_bound_pct,bound_saving_kg,bound_lp_carbon_vs_local_pct,"
             "bound_cost_vs_local_pct,bound_local_carbon_kg,bound_carbon_kg,bound_transfer_kwh,"
             "bound_gpu_hours_moved,bound_gpu_hours_shifted,bound_unserved_gpu_hours,"
             "transfer_kwh,bound_day_lp_saving_kg,bound_cpu_only_saving_kg,"
             "share_of_feasible_pct,feasible_saving_kg,feasible_carbon_kg,"
             "feasible_unserved_gpu_hours,feasible_unplaced_jobs,bound_feasible_gap_pct,"
             "first_come_saving_kg,first_come_unserved_gpu_hours,share_of_tight_bound_pct,"
             "tight_saving_kg,tight_carbon_kg\n");
  const auto num = [](double x) {
    return std::isnan(x) ? std::string() : fmt::format("{:.4f}", x);
  };
  for (const auto& r : results) {
    const multi::FleetBoundResult* b = bound_of(r, bounds);
    if (b == nullptr) continue;
    const double vs = carbon_vs_local_pct(r, results);
    const BoundFigures f = bound_figures(r, results, *b);
    fmt::print(out,
               "{},{:.1f},{:g},{},{},{},{:.3f},{:.4f},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},"
               "{:.3f},{:.3f},{:.3f}",
               csv_field(r.agent), r.target_load_pct, r.be_slack_h, num(vs),
               num(f.bound_vs_local_pct), num(f.share_pct), b->saving_kg(),
               b->carbon_vs_local_pct(), b->cost ? num(b->cost_vs_local_pct()) : std::string(),
               b->local.carbon_kg, b->carbon.carbon_kg, b->carbon.transfer_kwh,
               b->carbon.gpu_hours_moved, b->carbon.gpu_hours_shifted, b->unserved_gpu_hours,
               r.transfer_kwh, b->day_lp_saving_kg(), b->cpu_only_saving_kg);
    const auto kg = [](double x) {
      return std::isnan(x) ? std::string() : fmt::format("{:.3f}", x);
    };
    const multi::FleetBoundFeasible* fs = b->feasible ? &*b->feasible : nullptr;
    fmt::print(out, ",{},{},{},{},{},{},{},{},{},{},{}\n", num(f.feasible_share_pct),
               kg(b->feasible_saving_kg()), fs ? kg(fs->carbon_kg) : std::string(),
               fs ? kg(fs->unserved_gpu_hours) : std::string(),
               fs ? fmt::format("{}", fs->unplaced_jobs) : std::string(),
               num(b->feasible_gap_pct()), kg(b->first_come_saving_kg()),
               fs ? kg(fs->first_come_unserved_gpu_hours) : std::string(), num(f.tight_share_pct),
               kg(b->tight_saving_kg()), b->tight ? kg(b->tight->carbon_kg) : std::string());
  }
}

void write_fleet_bound_sites_csv(std::ostream& out,
                                 std::span<const multi::FleetBoundResult> bounds) {
  fmt::print(out,
             "target_load_pct,slack_h,site,local_gpu_hours,local_alloc_pct,bound_gpu_hours,"
             "bound_alloc_pct,fill_pct,tight_fill_pct,feasible_gpu_hours,feasible_alloc_pct\n");
  for (const auto& b : bounds) {
    for (std::size_t i = 0; i < b.site_names.size(); ++i) {
      const auto at = [i](const std::vector<double>& v) { return i < v.size() ? v[i] : 0.0; };
      const auto feasible = [&](const std::vector<double> multi::FleetBoundFeasible::*field) {
        return b.feasible ? fmt::format("{:.3f}", at((*b.feasible).*field)) : std::string();
      };
      fmt::print(out, "{:.1f},{:g},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{}\n",
                 b.target_load_pct, b.be_slack_h, csv_field(b.site_names[i]),
                 at(b.local.site_gpu_hours), at(b.local.site_alloc_pct),
                 at(b.carbon.site_gpu_hours), at(b.carbon.site_alloc_pct), 100.0 * at(b.site_fill),
                 b.tight ? fmt::format("{:.3f}", 100.0 * at(b.tight->site_fill)) : std::string(),
                 feasible(&multi::FleetBoundFeasible::site_gpu_hours),
                 feasible(&multi::FleetBoundFeasible::site_alloc_pct));
    }
  }
}

}  // namespace greensched::report
