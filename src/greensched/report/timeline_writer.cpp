#include "greensched/report/timeline_writer.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <sstream>

#include "greensched/power/power_model.hpp"

namespace greensched::report {

void write_timeline_csv(std::ostream& out, const sim::ReplayResult& result) {
  fmt::print(out,
             "time_s,running_pods,queued_pods,allocated_gpus,power_watts,energy_joules,"
             "nodes_awake\n");
  for (const sim::TimelinePoint& p : result.timeline) {
    fmt::print(out, "{:.3f},{},{},{:.3f},{:.3f},{:.3f},{}\n", p.time_s, p.running_pods,
               p.queued_pods, p.allocated_gpus, p.power_watts, p.energy_joules, p.nodes_awake);
  }
}

std::string replay_timeline_csv(std::span<const sim::ReplayResult> results) {
  std::string timeline;
  for (const auto& r : results) {
    std::ostringstream one;
    write_timeline_csv(one, r);
    std::istringstream lines(one.str());
    std::string line;
    std::getline(lines, line);
    if (timeline.empty()) {
      timeline = "policy,seed,load_pct,gpu_power,power_down_idle_s," + line + "\n";
    }
    const std::string load =
        r.config.target_load_pct > 0 ? fmt::format("{:g}", r.config.target_load_pct) : "";
    while (std::getline(lines, line)) {
      timeline +=
          fmt::format("{},{},{},{},{},{}\n", r.config.policy, r.config.seed, load,
                      power::gpu_power_rule_name(r.gpu_rule), r.config.power_down_idle_s, line);
    }
  }
  return timeline;
}

void write_replay_summary_csv(std::ostream& out, std::span<const sim::ReplayResult> results) {
  fmt::print(
      out,
      "policy,seed,queue,pods_total,pods_started,pods_never_started,pods_requeued,"
      "mean_queue_delay_s,p99_queue_delay_s,energy_kwh,makespan_s,gpu_power,"
      "power_down_idle_s,wake_delay_s,target_load_pct,offered_load_pct,window_s,"
      "energy_floor_kwh,energy_over_floor,kwh_per_gpu_hour,gpu_alloc_pct,"
      "mean_nodes_awake,wakeups,ls_pods,ls_mean_delay_s,ls_p99_delay_s,be_pods,"
      "be_mean_delay_s,be_p99_delay_s,window_start_s,migrate_budget_pct,pods_migrated,"
      "pods_rescued,lost_gpu_hours,lost_energy_kwh,pending_gpu_hours,consolidate,nodes_drained\n");
  for (const sim::ReplayResult& r : results) {
    const auto& c = r.config;
    fmt::print(out, "{},{},{},{},{},{},{},{:.3f},{:.3f},{:.6f},{:.3f},", c.policy, c.seed,
               sim::queue_name(c.queue), r.pods_total, r.pods_started, r.pods_never_started,
               r.pods_requeued, r.mean_queue_delay_s, r.p99_queue_delay_s, r.energy_kwh,
               r.makespan_s);
    const std::string target =
        c.target_load_pct > 0 ? fmt::format("{:.1f}", c.target_load_pct) : std::string();
    fmt::print(out, "{},{},{},{},{:.3f},{:.3f},{:.6f},{:.4f},{:.4f},{:.3f},{:.2f},{},",
               power::gpu_power_rule_name(r.gpu_rule), c.power_down_idle_s, c.wake_delay_s, target,
               r.offered_load_pct, r.window_s, r.energy_floor_kwh,
               r.energy_floor_kwh > 0 ? r.energy_kwh / r.energy_floor_kwh : 0.0, r.kwh_per_gpu_hour,
               r.gpu_alloc_pct, r.mean_nodes_awake, r.wakeups);
    fmt::print(out, "{},{:.3f},{:.3f},{},{:.3f},{:.3f},{:.3f},", r.delay_ls.pods, r.delay_ls.mean_s,
               r.delay_ls.p99_s, r.delay_be.pods, r.delay_be.mean_s, r.delay_be.p99_s,
               r.window_start_s);
    fmt::print(out, "{},{},{},{:.4f},{:.4f},{:.4f},{},{}\n", c.migrate_budget_pct, r.pods_migrated,
               r.pods_rescued, r.lost_gpu_hours, r.lost_energy_kwh, r.pending_gpu_hours,
               c.consolidate ? 1 : 0, r.nodes_drained);
  }
}

}  // namespace greensched::report
