// The whole-job dual bound: a lower bound on the least cost of a fleet's jobs in which each job
// runs at one site from start to end, found as the Lagrangian dual of the capacity rows.
//
// Priced at lambda[s][h] per GPU-hour for the capacity of site s in hour h, the jobs no longer
// compete: each takes its cheapest site and start alone (an LS job within its start bound, a BE
// job within its slack, runs without a pause, and pays the grid and the price of every
// hour it covers), and L(lambda) = the sum of those minima less lambda . capacity. By weak
// duality every L(lambda), lambda >= 0, is at most the cost of any schedule that keeps within
// the capacities, so the best one seen is a bound. A job's cost is piecewise linear in its
// delay, with corners where its start or end crosses an hour, so its least cost is at one of
// those delays (or 0 or the slack), each read in O(1) off the cumulative price. The search
// starts from the capacity prices of fleet_bound's LP (whose pieces may split a job across
// sites day by day, and pause BE work) and climbs by deflected subgradient steps.
//
// The same dual serves the tightened model (fleet_bound's tight side): the GPUs of a site split
// into pools (its node types, each job only on those it fits), and CPU rows per site and hour
// that every job takes its cores of. Then a job picks site, pool and start at the priced cost,
// and every pool and CPU row has its price. Without pools and CPU rows it is the plain dual.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace greensched::multi {

// A job, in trace seconds from the fleet's start (hour h is [3600 h, 3600 (h + 1))).
struct WholeJob {
  int home = 0;
  bool ls = false;
  uint32_t allowed = 0;  // bit s: the job may run at site s
  double data_gb = 0;
  double gpus = 0;
  int64_t submit_s = 0;  // it starts then (LS) or up to the slack later (BE) ...
  int64_t end_s = 0;     // ... and runs end_s - submit_s seconds
  // The tightened model only (0 and all elsewhere): its CPU floor, kW, charged at the site's
  // WholeJobCosts::per_cpu_kwh; its cores on the CPU rows; bit t: it fits node type t.
  double floor_kw = 0;
  double cpus = 0;
  uint32_t types = ~0u;
};

struct WholeJobCosts {
  // Per site and hour: the objective of one GPU-hour run there (0 outside the measured window:
  // the work still takes capacity). Hours past the end cost and price nothing.
  std::vector<std::vector<double>> per_gpu_hour;
  // Per site and hour: the objective of one kWh of transfer arriving there (0 outside it).
  std::vector<std::vector<double>> per_transfer_kwh;
  std::vector<double> kwh_per_gb;  // per site, transfer energy into it
  std::vector<double> capacity;    // per site, GPUs usable in any hour
  // The tightened model (empty elsewhere). GPU pools: per pool, its site, its node type (a bit
  // of WholeJob::types) and the GPUs usable in any hour; empty: one pool per site holding
  // `capacity`. Per site and hour, the objective of one IT kWh (WholeJob::floor_kw). Per site,
  // the cores usable in any hour (empty: no CPU rows).
  std::vector<int> pool_site{};
  std::vector<int> pool_type{};
  std::vector<double> pool_capacity{};
  std::vector<std::vector<double>> per_cpu_kwh{};
  std::vector<double> cpu_capacity{};
  int64_t be_slack_s = 0;  // a BE job may start this late
  int64_t ls_slack_s = 0;  // an LS job may start this late (its start bound)
  double unserved_per_gpu_hour = 0;
};

// Where and when a job of a schedule starts: site (-1: none) and delay after its submission;
// with pools, the pool (-1: a job without GPUs).
struct WholeJobStart {
  int site = -1;
  int64_t delay_s = 0;
  int pool = -1;
};

// Prices per pool (per site without pools) and hour, and per site and hour of the CPU rows
// (empty without them).
struct WholeJobPrices {
  std::vector<std::vector<double>> lambda;
  std::vector<std::vector<double>> mu;
};

// What schedule to read off the best prices: none; each job in order of submission at its
// cheapest start that keeps every hour it covers within the capacities left (first come, first
// placed: a schedule the fluid fleet can run); or each at its cheapest start alone.
enum class WholeJobSchedule { kNone, kWithinCapacity, kAlone };

struct WholeJobBoundResult {
  double objective = 0;  // the best L(lambda) found: a lower bound
  int iterations = 0;    // subgradient steps taken
  // The prices at which it was found, per site and hour: what one more GPU-hour of capacity
  // there is worth to the rest of the jobs, knowing them all.
  std::vector<std::vector<double>> lambda;
  std::vector<std::vector<double>> mu;  // the CPU rows' prices (empty without them)
  // Per job, as asked (empty for kNone): its start at those prices. A schedule, not a bound:
  // its cost is at least the bound's; with kWithinCapacity a job no start has room for has
  // site -1.
  std::vector<WholeJobStart> schedule;
};

// `lambda`: per site and hour (the LP's capacity prices, >= 0) to start from; hours past its
// size are priced 0. Deterministic: the same inputs give the same bound and schedule.
WholeJobBoundResult whole_job_bound(const std::vector<WholeJob>& jobs, const WholeJobCosts& costs,
                                    std::vector<std::vector<double>> lambda, int max_iterations,
                                    WholeJobSchedule schedule = WholeJobSchedule::kNone);
// The same from prices per pool and CPU row (either may be empty: 0).
// `aim`: each step aims this share above the best bound seen (0.05 for the plain dual from the
// LP's prices; less from prices near the optimum already).
WholeJobBoundResult whole_job_bound_from(const std::vector<WholeJob>& jobs,
                                         const WholeJobCosts& costs, WholeJobPrices start,
                                         int max_iterations,
                                         WholeJobSchedule schedule = WholeJobSchedule::kNone,
                                         double aim = 0.05);

}  // namespace greensched::multi
