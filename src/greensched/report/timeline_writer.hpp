// Writers for time replays: timeline.csv (the cluster after each instant of one replay) and
// replay_summary.csv (one row per replay). Column names are stable; new columns are only ever
// appended. Nothing run-dependent (wall time) is written, so a seed gives byte-identical files.
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "greensched/sim/replay.hpp"

namespace greensched::report {

// Header time_s,running_pods,queued_pods,allocated_gpus,power_watts,energy_joules,nodes_awake;
// times in scaled seconds, fixed three decimals.
void write_timeline_csv(std::ostream& out, const sim::ReplayResult& result);

// The timelines of several replays in one file (simulate --mode replay --out's timeline.csv):
// each row of write_timeline_csv prefixed with policy,seed,load_pct,gpu_power,power_down_idle_s.
std::string replay_timeline_csv(std::span<const sim::ReplayResult> results);

// Header policy,seed,queue,pods_total,pods_started,pods_never_started,pods_requeued,
// mean_queue_delay_s,p99_queue_delay_s,energy_kwh,makespan_s, then the energy-management and
// controlled-load columns (gpu_power ... be_p99_delay_s; see the README). Energy, delays and
// allocation are those of the measured window.
void write_replay_summary_csv(std::ostream& out, std::span<const sim::ReplayResult> results);

}  // namespace greensched::report
