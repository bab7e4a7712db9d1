#include "greensched/report/multi_writer.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace greensched::report {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void write_multi_summary_csv(std::ostream& out, std::span<const multi::MultiResult> results) {
  fmt::print(out,
             "agent,energy_kwh,carbon_kg,mean_delay_s_ls,mean_delay_s_be,p99_delay_s_be,"
             "ls_slo_violations,jobs_moved,gb_moved,gpu_alloc_pct,jobs_never_started,jobs,"
             "jobs_deferred,transfer_kwh,wall_seconds\n");
  for (const multi::MultiResult& r : results) {
    fmt::print(out,
               "{},{:.3f},{:.3f},{:.1f},{:.1f},{:.1f},{},{},{:.1f},{:.4f},{},{},{},{:.3f},{:.3f}\n",
               csv_field(r.agent), r.energy_kwh, r.carbon_kg, r.mean_delay_s_ls, r.mean_delay_s_be,
               r.p99_delay_s_be, r.ls_slo_violations, r.jobs_moved, r.gb_moved, r.gpu_alloc_pct,
               r.jobs_never_started, r.jobs, r.jobs_deferred, r.transfer_kwh, r.wall_seconds);
  }
}

void write_multi_timeline_csv(std::ostream& out, const multi::Fleet& fleet,
                              std::span<const multi::MultiResult> results) {
  fmt::print(out,
             "agent,time_s,site,power_watts,energy_kwh,carbon_kg,carbon_intensity,running_jobs,"
             "queued_jobs,waiting_jobs,allocated_gpus,gpu_alloc_pct,online_nodes\n");
  for (const multi::MultiResult& r : results) {
    for (const multi::FleetSample& s : r.timeline) {
      const std::string site = s.site < 0 ? "fleet" : fleet.sites[s.site].name;
      fmt::print(out, "{},{},{},{:.1f},{:.4f},{:.4f},{:.1f},{},{},{},{:.3f},{:.3f},{}\n",
                 csv_field(r.agent), s.time_s, csv_field(site), s.power_watts, s.energy_kwh,
                 s.carbon_kg, s.carbon_intensity, s.running_jobs, s.queued_jobs, s.waiting_jobs,
                 s.allocated_gpus, s.gpu_alloc_pct, s.online_nodes);
    }
  }
}

void write_decisions_csv(std::ostream& out, const multi::Fleet& fleet,
                         std::span<const multi::MultiResult> results) {
  fmt::print(out, "agent,pod,qos,home_site,site,submit_s,not_before_s,start_s,reason\n");
  for (const multi::MultiResult& r : results) {
    for (const multi::JobDecision& d : r.decisions) {
      fmt::print(out, "{},{},{},{},{},{},{},{},{}\n", csv_field(r.agent), csv_field(d.pod),
                 d.latency_sensitive ? "LS" : "BE", csv_field(fleet.sites[d.home_site].name),
                 csv_field(fleet.sites[d.site].name), d.submit_s, d.not_before_s, d.start_s,
                 csv_field(d.reason));
    }
  }
}

std::string multi_summary_table(std::span<const multi::MultiResult> results) {
  std::size_t width = 6;
  for (const auto& r : results) width = std::max(width, r.agent.size());
  std::string out = fmt::format(
      "{:<{}} {:>11} {:>10} {:>8} {:>9} {:>9} {:>9} {:>7} {:>7} {:>8} {:>7} {:>6} {:>7}\n", "agent",
      width, "energy kWh", "carbon kg", "vs first", "LS wait s", "BE wait s", "BE p99 s", "LS viol",
      "moved", "GB moved", "alloc %", "never", "run s");
  const double base = results.empty() ? 0.0 : results.front().carbon_kg;
  for (const auto& r : results) {
    const std::string vs =
        base > 0 ? fmt::format("{:+.1f}%", 100.0 * (r.carbon_kg / base - 1.0)) : "-";
    out += fmt::format(
        "{:<{}} {:>11.1f} {:>10.1f} {:>8} {:>9.1f} {:>9.1f} {:>9.1f} {:>7} {:>7} {:>8.0f} {:>7.2f} "
        "{:>6} {:>7.2f}\n",
        r.agent, width, r.energy_kwh, r.carbon_kg, vs, r.mean_delay_s_ls, r.mean_delay_s_be,
        r.p99_delay_s_be, r.ls_slo_violations, r.jobs_moved, r.gb_moved, r.gpu_alloc_pct,
        r.jobs_never_started, r.wall_seconds);
  }
  out +=
      "vs first: carbon relative to the first agent listed; waits are from submission to "
      "start;\nLS viol: latency-sensitive jobs that started later than the bound; alloc %: "
      "time-weighted fleet GPU allocation.\n";
  return out;
}

}  // namespace greensched::report
