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
};

struct WholeJobCosts {
  // Per site and hour: the objective of one GPU-hour run there (0 outside the measured window:
  // the work still takes capacity). Hours past the end cost and price nothing.
  std::vector<std::vector<double>> per_gpu_hour;
  // Per site and hour: the objective of one kWh of transfer arriving there (0 outside it).
  std::vector<std::vector<double>> per_transfer_kwh;
  std::vector<double> kwh_per_gb;  // per site, transfer energy into it
  std::vector<double> capacity;    // per site, GPUs usable in any hour
  int64_t be_slack_s = 0;          // a BE job may start this late
  int64_t ls_slack_s = 0;          // an LS job may start this late (its start bound)
  double unserved_per_gpu_hour = 0;
};

// Where and when a job of a schedule starts: site (-1: none) and delay after its submission.
struct WholeJobStart {
  int site = -1;
  int64_t delay_s = 0;
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

}  // namespace greensched::multi
