// The feasible side of the fleet bound: a schedule of the whole-job fluid model (each job at
// one site, or one pool, without a pause, started within its LS bound or BE slack, every hour
// within the capacities), found by local search at the true costs (no prices). Its cost is an
// upper bound on the model's optimum, as the whole-job dual (whole_job_bound.hpp) is a lower
// one: the true fluid optimum lies between them.
//
// It starts from a schedule (the dual's first come, first placed one), then:
// - repair: a job without room is placed at its cheapest start that fits, else where evicting
//   a few of the jobs in its way lets it fit and lets each of them fit again elsewhere; largest
//   first. One that still finds none stays unplaced and is reported, never dropped silently;
// - reinsertion: each job taken out and put back at its cheapest start that fits;
// - ejection: each job moved to a cheaper start where the jobs in its way fit elsewhere, kept
//   where the sum of their costs falls.
// Passes repeat until one changes nothing or the pass limit. Deterministic: fixed orders and
// work limits, no clock.
#pragma once

#include <cstddef>
#include <vector>

#include "greensched/multi/whole_job_bound.hpp"

namespace greensched::multi {

struct WholeJobSearchOptions {
  // Per job, the cheapest starts it may take (and the one it started at): enough for the
  // search, and memory in bounds on a fleet of 250,000 jobs.
  int starts_kept = 24;
  int starts_per_place = 3;  // and at least this many at each site (or pool) it may use
  int max_passes = 6;
  // Per job and pass, the cheaper starts an ejection tries, and the jobs it may evict there.
  int eject_starts = 4;
  int eject_jobs = 3;
  // Ejections tried in all, over every pass: the work limit of the search. On a 4-site,
  // 14-day fleet at 12 h slack (250,000 jobs) 150,000 take 1.5 s and the 250,000 more that
  // 400,000 would try add 0.1 % to the saving in 3.8 s.
  std::size_t eject_budget = 150000;
};

struct FeasibleWholeJobSchedule {
  std::vector<WholeJobStart> start;  // per job; site -1: no room anywhere (unplaced)
  double cost = 0;                   // the objective of the placed jobs at the true costs
  std::size_t unplaced = 0;
  double unserved_gpu_hours = 0;  // GPU-hours (kW-hours for jobs without GPUs) of those
  // The schedule it started from: its cost and the jobs it had left unplaced.
  double start_cost = 0;
  std::size_t start_unplaced = 0;
  double start_unserved_gpu_hours = 0;
  int passes = 0;
  std::size_t moves = 0;      // reinsertions and ejections that lowered the cost
  std::size_t repaired = 0;   // jobs placed that the start had left unplaced
  std::size_t ejections = 0;  // ejections tried
};

// `start`: per job (site -1: to be placed); `costs`: the model's, without prices.
FeasibleWholeJobSchedule improve_whole_job_schedule(const std::vector<WholeJob>& jobs,
                                                    const WholeJobCosts& costs,
                                                    std::vector<WholeJobStart> start,
                                                    const WholeJobSearchOptions& options = {});

// The cost of each job of a schedule at the true costs (0 where unplaced).
std::vector<double> whole_job_costs(const std::vector<WholeJob>& jobs, const WholeJobCosts& costs,
                                    const std::vector<WholeJobStart>& start);

}  // namespace greensched::multi
