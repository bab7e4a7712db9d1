// The hourly work-shifting LP: best-effort and latency-sensitive work, in GPU-hours, moved
// between sites and hours at the least cost. Each piece of work goes to one or more sites (its
// home, or another at a move cost per GPU-hour) and runs there in any hour of its window; each
// site and hour runs at most its capacity. Cost: the site's cost per GPU-hour in that hour
// plus, away from home, the move cost. Immediate pieces (latency-sensitive work) run in their
// own hour wherever they go and take capacity beside the queue. Which piece runs in which
// hour does not change the
// cost, so a site is a queue: what it receives in hour h joins its backlog, it runs x[s][h]
// of the backlog, and the backlog left at the end of hour h may hold only work whose window
// is still open. With agreeable windows (a piece available later is not due earlier: every
// piece has the same slack, say) that queue, served in order, meets every window, and the LP
// has O(pieces x sites + sites x hours) columns instead of one per piece, site and hour. The
// reduced costs of the runs at their capacity are the capacity prices: what one more GPU-hour
// at a site and hour would save the rest of the work. Solved by CLP's dual simplex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
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
  // Runs in its own hour at the site it goes to (latency-sensitive work; max_shift_h must be
  // 0): it takes that hour's capacity directly, outside the site's queue, so its window need
  // not agree with the others'.
  bool immediate = false;
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

// The final basis of a solve, to start the next one from: a rolling plan solves nearly the
// same LP every hour. Keyed by what a column or row stands for, in absolute hours.
struct ShiftLpBasis {
  enum Kind { kMove, kUnserved, kRun, kBacklog, kWorkRow, kFlowRow, kDueRow, kCapacityRow };
  // (kind, home or site, absolute hour, which piece of that home and hour x 1024 + site)
  using Key = std::tuple<int, int, int64_t, int>;
  // CLP's status of each column and row, sorted by key.
  std::vector<std::pair<Key, unsigned char>> status;
};

struct ShiftLpOptions {
  double unserved_penalty = 1e9;  // per GPU-hour
  int64_t first_hour = 0;         // absolute number of hour 0 (keys of the basis)
  // When set: the solve starts from it (where it has one) and leaves its own basis there.
  ShiftLpBasis* basis = nullptr;
};

// Errors: sites with capacity and cost of different lengths, negative or non-finite figures,
// work outside the hours, a move cost list of the wrong size, windows of queued pieces that
// are not agreeable, an immediate piece with a shift.
Result<ShiftLpResult> solve_shift_lp(const std::vector<ShiftLpSite>& sites,
                                     const std::vector<ShiftLpWork>& work,
                                     const ShiftLpOptions& options = {});

}  // namespace greensched::multi
