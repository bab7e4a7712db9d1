// Replays a pod list in time across a fleet: each job is submitted at its creation time to a
// home site (drawn in proportion to site GPU capacity), a dispatch agent picks the site and
// earliest start, and the site places it when it fits (waiting in the site's queue otherwise).
// Every site is the engine of `simulate --mode replay` (sim/site_engine.hpp: the queue, LS
// jobs first; power states and the wake rule; preemption); the fleet adds dispatch, data
// transfer and the carbon, price and weather signals. Each instant: the sites' departures and
// power-state timers, then submissions and arrivals, then one scheduling pass per site that
// changed, then the time-series sample. Power is integrated into energy, and energy times the
// site's carbon intensity into emissions.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/multi/agent.hpp"
#include "greensched/multi/energy_result.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/generation_forecast.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::multi {

class LearnedForecasts;  // learned_forecaster.hpp

struct MultiOptions {
  std::string agent = "local";
  bool oracle = false;  // forecasts see the future (an upper bound)
  // Not null (and no oracle): the agents forecast carbon and prices on these learned models'
  // forecasts (learned_forecaster.hpp; `multi --forecast learned`), trained on this run's fleet
  // and shared by the window's runs.
  std::shared_ptr<const LearnedForecasts> learned_forecasts;
  uint64_t seed = 42;              // home sites, node tie orders, local policies
  int64_t ls_bound_s = 600;        // LS jobs must start within this of submission
  int64_t be_slack_s = 12 * 3600;  // BE jobs may start up to this late
  int64_t power_down_idle_s = -1;  // < 0: never power down
  int64_t wake_delay_s = 300;
  int64_t sample_s = 3600;      // time-series step
  double data_gb_per_job = -1;  // < 0: the pod's memory request in GiB
  AgentOptions agent_options;
  power::PowerModel power_model = power::PowerModel::builtin();
  bool record = false;  // a dispatch record per job (JSON Lines in MultiResult::records)
  // Agents decide on a duration predicted from the jobs finished before each submission
  // (trace/job_predictor.hpp) instead of the true one; jobs still run for their true
  // duration. (--predict-durations; owned by the monitor subsystem.)
  bool predict_durations = false;
  // Metrics cover [measure_from_s, measure_to_s) in trace seconds: energy, carbon and
  // allocation are integrated inside it, delays are those of jobs submitted in it. Past its
  // end, once nothing waits, the run stops. Default: the whole run.
  int64_t measure_from_s = std::numeric_limits<int64_t>::min();
  int64_t measure_to_s = std::numeric_limits<int64_t>::max();
  double target_load_pct = 0;  // the workload's stated load, for reports (0: the trace's own)
  // A latency-sensitive job that finds no node evicts best-effort jobs from one node to make
  // room, as kube-scheduler's priority preemption does; evicted jobs wait again and restart
  // from the beginning (--preempt-be).
  bool preempt_be = false;
  // What agents know of each site's on-site generation; the site controllers get the same
  // (run_site_controllers), so both see one forecast.
  GenerationForecastOptions generation_forecast;
  // Agents know the prices a day-ahead auction has published (energy::day_ahead_published_until)
  // at sites with an `energy` block, as the mpc controller does with mpc_day_ahead.
  bool day_ahead_prices = false;
};

// One row of the time series: a site (or the fleet, site = -1) at a time.
struct FleetSample {
  int64_t time_s = 0;  // trace seconds
  int site = -1;
  double power_watts = 0;  // facility
  double energy_kwh = 0;   // cumulative
  double carbon_kg = 0;    // cumulative
  double carbon_intensity = 0;
  int64_t running_jobs = 0;
  int64_t queued_jobs = 0;
  int64_t waiting_jobs = 0;  // dispatched but deferred or moving
  double allocated_gpus = 0;
  double gpu_alloc_pct = 0;
  double cpu_alloc_pct = 0;  // of the CPU of the site's nodes, GPU and CPU-only jobs together
  int64_t online_nodes = 0;
};

struct JobDecision {
  std::string pod;
  int home_site = 0;
  int site = 0;
  bool latency_sensitive = false;
  int64_t submit_s = 0;
  int64_t not_before_s = 0;
  int64_t start_s = -1;  // -1: never started
  std::string reason;
};

struct MultiResult {
  // With " (oracle)" when forecasts saw the future, " (learned)" when they were the learned
  // models', " (bound prices)" when it planned with the fleet bound's capacity prices
  // (AgentOptions::capacity_prices), or one of the first two and the third ("(oracle, bound
  // prices)").
  std::string agent;
  double target_load_pct = 0;
  double be_slack_h = 0;
  double offered_load_pct = 0;  // over the measured window, fleet-wide
  double window_s = 0;
  double p99_delay_s_ls = 0;
  int64_t jobs = 0;
  double energy_kwh = 0;  // facility energy of all sites plus data movement
  double carbon_kg = 0;
  double mean_delay_s_ls = 0;
  double mean_delay_s_be = 0;
  double p99_delay_s_be = 0;
  int64_t ls_slo_violations = 0;
  int64_t jobs_moved = 0;
  double gb_moved = 0;
  double transfer_kwh = 0;
  int64_t jobs_deferred = 0;
  double gpu_alloc_pct = 0;  // time-weighted mean over the run, fleet-wide
  int64_t jobs_never_started = 0;
  int64_t be_preemptions = 0;  // best-effort jobs evicted for latency-sensitive ones
  // Best-effort jobs not started by their latest start that the agent sent to another site.
  int64_t jobs_redispatched = 0;
  std::vector<double> site_energy_kwh;
  std::vector<double> site_carbon_kg;
  std::vector<int64_t> site_jobs;
  // Facility energy (IT x PUE, plus data movement) per site and UTC hour inside the measured
  // window: hour k is [energy_hour0_s + 3600 k, + 3600); every site has the same count.
  int64_t energy_hour0_s = 0;
  std::vector<std::vector<double>> site_hourly_kwh;
  // One per site energy controller run on this result (multi/site_controller.hpp).
  std::vector<EnergyResult> energy;
  std::vector<FleetSample> timeline;
  std::vector<JobDecision> decisions;
  std::string records;  // when options.record
  double wall_seconds = 0;
};

// Pods need creation and deletion times; `shape_count` bounds their shape ids.
Result<MultiResult> run_fleet(const Fleet& fleet, const std::vector<PodSpec>& pods,
                              uint32_t shape_count, const MultiOptions& options);

}  // namespace greensched::multi
