// The hourly work-shifting LP: best-effort and latency-sensitive work, in GPU-hours, moved
// between sites and hours at the least cost. Columns: for every piece of work, every site it
// may go to and every hour within its shift window, the GPU-hours it runs there (>= 0), plus
// one column of work left unserved (paid the penalty). Rows: each piece of work is served in
// full (its columns sum to its GPU-hours); each site and hour holds at most its capacity.
// Cost: the site's cost per GPU-hour in that hour plus, away from home, the move cost. The
// duals of the capacity rows are the capacity prices: what one more GPU-hour at a site and
// hour would save the rest of the work. Solved by CLP's dual simplex.
#pragma once

#include <cstddef>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::multi {

struct ShiftLpSite {
  std::vector<double> capacity;           // GPU-hours available in each hour 0..H-1
  std::vector<double> cost_per_gpu_hour;  // objective units per GPU-hour run in each hour
};

struct ShiftLpWork {
  int home = 0;          // site it was submitted to
  int hour = 0;          // first hour it may run (0..H-1)
  double gpu_hours = 0;  // amount of work
  int max_shift_h = 0;   // may run in any hour of [hour, hour + max_shift_h] (clipped to H-1)
  std::vector<double> move_cost_per_gpu_hour;  // per site; +inf: may not go there; home: 0
};

struct ShiftLpFlow {
  std::size_t work = 0;
  int site = 0;
  int hour = 0;
  double gpu_hours = 0;
};

struct ShiftLpResult {
  double objective = 0;            // cost of the work served (excluding the unserved penalty)
  double unserved_gpu_hours = 0;   // work the capacity could not take (paid unserved_penalty)
  std::vector<ShiftLpFlow> flows;  // nonzero flows, sorted by (work, site, hour)
  // Per site and hour, >= 0: the objective saved by one more GPU-hour of capacity there.
  std::vector<std::vector<double>> capacity_price;
};

struct ShiftLpOptions {
  double unserved_penalty = 1e9;  // per GPU-hour
};

// Errors: sites with capacity and cost of different lengths, negative or non-finite figures,
// work outside the hours, a move cost list of the wrong size.
Result<ShiftLpResult> solve_shift_lp(const std::vector<ShiftLpSite>& sites,
                                     const std::vector<ShiftLpWork>& work,
                                     const ShiftLpOptions& options = {});

}  // namespace greensched::multi
