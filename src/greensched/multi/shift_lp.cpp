#include "greensched/multi/shift_lp.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>

namespace greensched::multi {
namespace {

bool finite_non_negative(double x) {
  return std::isfinite(x) && x >= 0;
}

Status check(const std::vector<ShiftLpSite>& sites, const std::vector<ShiftLpWork>& work,
             const ShiftLpOptions& options, std::size_t& hours) {
  if (!(options.unserved_penalty > 0) || !std::isfinite(options.unserved_penalty)) {
    return Error{"shift LP: the unserved penalty must be a positive number"};
  }
  hours = sites.empty() ? 0 : sites.front().capacity.size();
  for (std::size_t s = 0; s < sites.size(); ++s) {
    if (sites[s].capacity.size() != hours || sites[s].cost_per_gpu_hour.size() != hours) {
      return Error{fmt::format("shift LP: site {} has {} capacities and {} costs for {} hours", s,
                               sites[s].capacity.size(), sites[s].cost_per_gpu_hour.size(), hours)};
    }
    for (std::size_t h = 0; h < hours; ++h) {
      if (!finite_non_negative(sites[s].capacity[h]) ||
          !std::isfinite(sites[s].cost_per_gpu_hour[h])) {
        return Error{
            fmt::format("shift LP: site {} hour {}: capacity {} and cost {} must be "
                        "finite, capacity >= 0",
                        s, h, sites[s].capacity[h], sites[s].cost_per_gpu_hour[h])};
      }
    }
  }
  for (std::size_t w = 0; w < work.size(); ++w) {
    const ShiftLpWork& x = work[w];
    if (x.home < 0 || static_cast<std::size_t>(x.home) >= sites.size() || x.hour < 0 ||
        static_cast<std::size_t>(x.hour) >= hours || x.max_shift_h < 0 ||
        !finite_non_negative(x.gpu_hours) || x.move_cost_per_gpu_hour.size() != sites.size()) {
      return Error{fmt::format(
          "shift LP: work {} (home {}, hour {}, {} GPU-hours, shift {} h, {} move costs) does "
          "not fit {} sites x {} hours",
          w, x.home, x.hour, x.gpu_hours, x.max_shift_h, x.move_cost_per_gpu_hour.size(),
          sites.size(), hours)};
    }
    for (double c : x.move_cost_per_gpu_hour) {
      if (std::isnan(c) || c < 0) {
        return Error{fmt::format("shift LP: work {}: a move cost must be >= 0 or +inf", w)};
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<ShiftLpResult> solve_shift_lp(const std::vector<ShiftLpSite>& sites,
                                     const std::vector<ShiftLpWork>& work,
                                     const ShiftLpOptions& options) {
  std::size_t hours = 0;
  if (Status s = check(sites, work, options, hours); !s.ok()) return s.error();
  ShiftLpResult result;
  result.capacity_price.assign(sites.size(), std::vector<double>(hours, 0.0));
  // Rows: one per piece of work (served in full), then one per site and hour (capacity).
  const auto capacity_row = [&](std::size_t s, std::size_t h) {
    return static_cast<int>(work.size() + s * hours + h);
  };
  const int rows = static_cast<int>(work.size() + sites.size() * hours);
  std::vector<int> row_index, col_index;
  std::vector<double> value, objective, col_lo, col_hi;
  struct Column {
    std::size_t work;
    int site;  // -1: unserved
    int hour;
  };
  std::vector<Column> columns;
  const auto add_column = [&](std::size_t w, int site, int hour, double cost) {
    const int c = static_cast<int>(columns.size());
    columns.push_back(Column{w, site, hour});
    objective.push_back(cost);
    col_lo.push_back(0.0);
    col_hi.push_back(COIN_DBL_MAX);
    row_index.push_back(static_cast<int>(w));
    col_index.push_back(c);
    value.push_back(1.0);
    if (site >= 0) {
      row_index.push_back(
          capacity_row(static_cast<std::size_t>(site), static_cast<std::size_t>(hour)));
      col_index.push_back(c);
      value.push_back(1.0);
    }
  };
  for (std::size_t w = 0; w < work.size(); ++w) {
    const ShiftLpWork& x = work[w];
    const std::size_t last = std::min(
        hours - 1, static_cast<std::size_t>(x.hour) + static_cast<std::size_t>(x.max_shift_h));
    for (std::size_t s = 0; s < sites.size(); ++s) {
      const double move = static_cast<int>(s) == x.home ? 0.0 : x.move_cost_per_gpu_hour[s];
      if (!std::isfinite(move)) continue;
      for (std::size_t h = static_cast<std::size_t>(x.hour); h <= last; ++h) {
        add_column(w, static_cast<int>(s), static_cast<int>(h),
                   sites[s].cost_per_gpu_hour[h] + move);
      }
    }
    add_column(w, -1, -1, options.unserved_penalty);
  }
  std::vector<double> row_lo(static_cast<std::size_t>(rows)),
      row_hi(static_cast<std::size_t>(rows));
  for (std::size_t w = 0; w < work.size(); ++w) row_lo[w] = row_hi[w] = work[w].gpu_hours;
  for (std::size_t s = 0; s < sites.size(); ++s) {
    for (std::size_t h = 0; h < hours; ++h) {
      const auto r = static_cast<std::size_t>(capacity_row(s, h));
      row_lo[r] = -COIN_DBL_MAX;
      row_hi[r] = sites[s].capacity[h];
    }
  }
  if (columns.empty()) return result;
  CoinPackedMatrix matrix(true, row_index.data(), col_index.data(), value.data(),
                          static_cast<CoinBigIndex>(value.size()));
  matrix.setDimensions(rows, static_cast<int>(columns.size()));
  ClpSimplex clp;
  clp.setLogLevel(0);
  clp.loadProblem(matrix, col_lo.data(), col_hi.data(), objective.data(), row_lo.data(),
                  row_hi.data());
  clp.setOptimizationDirection(1);
  clp.dual();
  if (!clp.isProvenOptimal()) {
    return Error{fmt::format("shift LP: CLP did not solve it (status {}, {} rows, {} columns)",
                             clp.status(), rows, columns.size())};
  }
  const double* x = clp.primalColumnSolution();
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (x[c] <= 1e-9) continue;
    const Column& col = columns[c];
    if (col.site < 0) {
      result.unserved_gpu_hours += x[c];
      continue;
    }
    result.objective += x[c] * objective[c];
    result.flows.push_back(ShiftLpFlow{col.work, col.site, col.hour, x[c]});
  }
  const double* dual = clp.dualRowSolution();
  for (std::size_t s = 0; s < sites.size(); ++s) {
    for (std::size_t h = 0; h < hours; ++h) {
      // Minimising, a <= row's dual is <= 0: more capacity lowers the cost.
      result.capacity_price[s][h] =
          std::max(0.0, -dual[static_cast<std::size_t>(capacity_row(s, h))]);
    }
  }
  return result;
}

}  // namespace greensched::multi
