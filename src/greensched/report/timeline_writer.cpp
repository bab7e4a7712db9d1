#include "greensched/report/timeline_writer.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace greensched::report {

void write_timeline_csv(std::ostream& out, const sim::ReplayResult& result) {
  fmt::print(out, "time_s,running_pods,queued_pods,allocated_gpus,power_watts,energy_joules\n");
  for (const sim::TimelinePoint& p : result.timeline) {
    fmt::print(out, "{:.3f},{},{},{:.3f},{:.3f},{:.3f}\n", p.time_s, p.running_pods, p.queued_pods,
               p.allocated_gpus, p.power_watts, p.energy_joules);
  }
}

void write_replay_summary_csv(std::ostream& out, std::span<const sim::ReplayResult> results) {
  fmt::print(out,
             "policy,seed,queue,pods_total,pods_started,pods_never_started,pods_requeued,"
             "mean_queue_delay_s,p99_queue_delay_s,energy_kwh,makespan_s,wall_seconds\n");
  for (const sim::ReplayResult& r : results) {
    fmt::print(out, "{},{},{},{},{},{},{},{:.3f},{:.3f},{:.6f},{:.3f},{:.3f}\n", r.config.policy,
               r.config.seed, sim::queue_name(r.config.queue), r.pods_total, r.pods_started,
               r.pods_never_started, r.pods_requeued, r.mean_queue_delay_s, r.p99_queue_delay_s,
               r.energy_kwh, r.makespan_s, r.wall_seconds);
  }
}

}  // namespace greensched::report
