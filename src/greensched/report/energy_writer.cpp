#include "greensched/report/energy_writer.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "greensched/core/utc_time.hpp"
#include "greensched/multi/time_series.hpp"
#include "greensched/report/column_key.hpp"
#include "greensched/report/multi_writer.hpp"

namespace greensched::report {

void write_energy_timeline_csv(std::ostream& out, const multi::Fleet& fleet,
                               std::span<const multi::MultiResult> results) {
  fmt::print(out,
             "agent,controller,site,hour_utc,demand_kwh,pv_kwh,wind_kwh,charge_kwh,"
             "discharge_kwh,soc,grid_import_kwh,export_kwh,curtailed_kwh,price_usd_per_kwh,"
             "carbon_g_per_kwh,load_pct,slack_h\n");
  for (const multi::MultiResult& r : results) {
    const std::string load =
        r.target_load_pct > 0 ? fmt::format("{:g}", r.target_load_pct) : std::string();
    for (const multi::EnergyResult& e : r.energy) {
      for (std::size_t i = 0; i < e.sites.size() && i < fleet.sites.size(); ++i) {
        const multi::SiteEnergyHours& s = e.sites[i];
        const std::string site = csv_field(fleet.sites[i].name);
        for (std::size_t h = 0; h < s.run.hours.size(); ++h) {
          const energy::HourOutput& o = s.run.hours[h];
          const std::string when =
              format_utc_time(r.energy_hour0_s + 3600 * static_cast<int64_t>(h));
          fmt::print(out,
                     "{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{:.3f},{:.3f},{:.3f},"
                     "{:.5f},{:.1f},{},{:g}\n",
                     csv_field(r.agent), e.controller, site, when, s.demand_kwh[h], s.pv_kwh[h],
                     s.wind_kwh[h], o.charge_kwh, o.discharge_kwh, o.soc, o.import_kwh,
                     o.export_kwh, o.curtailed_kwh, s.price_usd_per_kwh[h], s.carbon_g_per_kwh[h],
                     load, r.be_slack_h);
        }
      }
    }
  }
}

std::string energy_summary_table(std::span<const multi::MultiResult> results) {
  std::size_t width = 6;
  for (const auto& r : results) width = std::max(width, r.agent.size());
  std::string out =
      fmt::format("{:<{}} {:>6} {:>6} {:>10} {:>11} {:>10} {:>13} {:>7} {:>7} {:>8} {:>7}\n",
                  "agent", width, "ctrl", "load %", "cost USD", "carbon kg", "import MWh",
                  "self-cons %", "cycles", "LS viol", "BE p99 s", "never");
  for (const auto& r : results) {
    for (const multi::EnergyResult& e : r.energy) {
      out += fmt::format(
          "{:<{}} {:>6} {:>6.1f} {:>10.0f} {:>11.1f} {:>10.1f} {:>13.1f} {:>7.2f} {:>7} {:>8.0f} "
          "{:>7}\n",
          r.agent, width, e.controller, r.offered_load_pct, e.cost_usd, e.carbon_kg,
          e.grid_import_kwh / 1000.0, e.self_consumption_pct, e.battery_cycles, r.ls_slo_violations,
          r.p99_delay_s_be, r.jobs_never_started);
    }
  }
  static constexpr ColumnKey kKey[] = {
      {"agent", "agent", "the dispatch agent"},
      {"ctrl", "controller", "the site energy controller (--energy-controller)"},
      {"load %", "offered_load_pct", "offered GPU load of the fleet"},
      {"cost USD", "cost_usd", "grid energy cost over the window, after on-site generation"},
      {"carbon kg", "carbon_kg", "grid emissions over the window, after on-site generation"},
      {"import MWh", "grid_import_kwh", "energy drawn from the grid (the CSV holds kWh)"},
      {"self-cons %", "self_consumption_pct", "on-site generation used on site"},
      {"cycles", "battery_cycles", "battery full-cycle equivalents"},
      {"LS viol", "ls_slo_violations", "latency-sensitive jobs later than --ls-bound"},
      {"BE p99 s", "p99_delay_s_be", "99th percentile wait of best-effort jobs"},
      {"never", "jobs_never_started", "jobs that had not started when the run ended"},
  };
  out += column_key("summary.csv", kKey);
  return out;
}

}  // namespace greensched::report
