// Time replay: pods arrive at creation_time and leave after their trace lifetime
// (deletion_time - creation_time) counted from when they start. The cluster is one SiteEngine
// (site_engine.hpp), the engine of every fleet site too: a pod that fits nowhere waits in its
// queue (fifo, backfill or priority) and is retried whenever resources free up; node events
// take nodes down (their pods are re-queued, none lost) and back up. Cluster power is
// integrated over time into energy, beside the energy floor (an ideal energy-proportional
// cluster doing the same work).
//
// Energy management: with power_down_idle_s >= 0 a node idle that long sleeps (draws nothing);
// a queued pod that fits on no awake node wakes the sleeping node that would draw the least
// with it, and waits wake_delay_s for it (the node draws idle power meanwhile), which counts
// as queueing delay.
//
// A measured window (a controlled-load workload's, trace/load_generator.hpp) limits every
// metric to [measure_from_s, measure_to_s): energy, floor, allocation and nodes awake are
// integrated inside it, delays are those of pods created in it. Once past its end with the
// queue empty the replay stops.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/site_engine.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::sim {

struct NodeEvent {
  int64_t time = 0;  // trace seconds
  std::string node;  // node name
  bool up = false;   // false: down
};

// Reads a CSV `time,node,event` (event `down` or `up`); errors are "file:line: reason" and
// name unknown nodes.
Result<std::vector<NodeEvent>> read_node_events(const std::string& path,
                                                const std::vector<NodeSpec>& nodes);
// The same from text; `source` names it in errors.
Result<std::vector<NodeEvent>> parse_node_events(std::string_view text, const std::string& source,
                                                 const std::vector<NodeSpec>& nodes);

struct ReplayConfig {
  std::string policy = "fgd";  // any policy spec make_policy accepts
  uint64_t seed = 42;          // node tie order and the policy's own draws
  // As kube-scheduler: a job that fits nowhere does not hold up the ones behind it.
  QueueDiscipline queue = QueueDiscipline::kBackfill;
  double time_scale = 1.0;  // trace times are divided by this (60: a trace minute per second)
  std::vector<NodeEvent> node_events;
  bool record = false;             // decision records: every start, and each pod's first failed try
  int64_t power_down_idle_s = -1;  // < 0: nodes never sleep (trace seconds)
  int64_t wake_delay_s = 300;      // trace seconds
  int64_t measure_from_s = std::numeric_limits<int64_t>::min();  // trace seconds
  int64_t measure_to_s = std::numeric_limits<int64_t>::max();
  int64_t timeline_step_s = 0;  // 0: a point after every instant; else at most one per step
  double target_load_pct = 0;   // the workload's stated load, for reports (0: the trace's own)
  // Bounded migration (SiteEngineConfig): moves up to this % of the pods started (0: never),
  // and a moved pod's lost run time since its last checkpoint.
  double migrate_budget_pct = 0;
  int max_moves = 4;
  int64_t checkpoint_interval_s = 1800;
  bool consolidate = false;  // with power-down: drain lightly used nodes so they sleep
};

// Queueing delay of one class of pods (first start - creation), over those that started.
struct DelayStats {
  int64_t pods = 0;
  double mean_s = 0;
  double p99_s = 0;  // nearest rank
};

// The cluster after each instant at which something happened (times in scaled seconds),
// preceded by one point at the first event's time with the cluster as it was before it.
struct TimelinePoint {
  double time_s = 0;
  int64_t running_pods = 0;
  int64_t queued_pods = 0;
  double allocated_gpus = 0;  // allocated GPU milli / 1000
  double power_watts = 0;     // facility power (IT power x PUE)
  double energy_joules = 0;   // cumulative since the first event (the first point's time)
  int64_t nodes_awake = 0;    // drawing power: awake or waking
};

struct ReplayResult {
  ReplayConfig config;
  int64_t pods_total = 0;
  int64_t pods_started = 0;        // started at least once
  int64_t pods_never_started = 0;  // never started: still queued when nothing is left to happen
  int64_t pods_queued_at_end = 0;  // those, plus evicted pods that never restarted
  int64_t pods_requeued = 0;       // evictions by node-down events
  double mean_queue_delay_s = 0;   // first start - creation, over started pods
  double p99_queue_delay_s = 0;
  DelayStats delay_ls;  // LS and Guaranteed pods
  DelayStats delay_be;  // the rest
  // Inside the measured window (the whole run when none is set):
  double window_s = 0;
  double window_start_s = 0;    // where the window starts, on timeline.csv's clock
  double offered_load_pct = 0;  // GPU requests x run time / (GPUs x window)
  double energy_kwh = 0;        // facility energy
  double energy_floor_kwh = 0;  // the same work on an ideal energy-proportional cluster
  double gpu_alloc_pct = 0;     // time-weighted GPU allocation
  double gpu_hours = 0;         // allocated GPU-hours
  double kwh_per_gpu_hour = 0;  // energy_kwh / gpu_hours
  double mean_nodes_awake = 0;
  int64_t wakeups = 0;           // nodes woken from sleep (whole run)
  int64_t pods_migrated = 0;     // moves of running pods (whole run)
  int64_t pods_rescued = 0;      // pods started thanks to moves
  int64_t nodes_drained = 0;     // nodes emptied by moves to sleep (consolidate)
  double lost_gpu_hours = 0;     // run time lost to moves (since the last checkpoint) x GPUs
  double lost_energy_kwh = 0;    // those GPU-hours at the run's kwh_per_gpu_hour
  double pending_gpu_hours = 0;  // GPU requests waiting in the queue, integrated (window)
  power::GpuPowerRule gpu_rule = power::GpuPowerRule::kPwr;  // of the figures the run used
  double makespan_s = 0;                                     // time of the last event
  std::vector<TimelinePoint> timeline;
  std::string records;  // JSON Lines, when config.record
  double wall_seconds = 0;
};

// `power` holds the per-node figures (PowerModel::resolve) and `pue` the facility factor.
Result<ReplayResult> run_replay(const trace::Workload& workload, const frag::TargetWorkload& target,
                                const std::vector<power::NodePower>& power, double pue,
                                const ReplayConfig& config);

// The same replay under each set of power figures (one result per set, in order). Where the
// schedule cannot depend on the set (figures that differ only in the GPU power rule, a policy
// that does not read the rule, no node sleeping: waking picks nodes by power, no decision
// records), the cluster is simulated once and each set accounts its energy; otherwise each
// set is a replay of its own. The results are the same either way.
Result<std::vector<ReplayResult>> run_replay_each(
    const trace::Workload& workload, const frag::TargetWorkload& target,
    std::span<const std::vector<power::NodePower>> figure_sets, double pue,
    const ReplayConfig& config);

}  // namespace greensched::sim
