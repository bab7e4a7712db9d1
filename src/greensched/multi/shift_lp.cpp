#include "greensched/multi/shift_lp.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

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
    if (x.immediate && x.max_shift_h != 0) {
      return Error{fmt::format("shift LP: work {} runs in its own hour but may shift {} h", w,
                               x.max_shift_h)};
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
  if (work.empty() || hours == 0) return result;
  const std::size_t n_sites = sites.size();
  const auto deadline = [&](const ShiftLpWork& x) {
    return std::min(hours - 1,
                    static_cast<std::size_t>(x.hour) + static_cast<std::size_t>(x.max_shift_h));
  };
  // Pieces in the order a site serves them (first available, then first due); agreeable
  // windows make that order the earliest-deadline-first order, so the backlog rows below say
  // all there is to say about meeting the deadlines.
  std::vector<std::size_t> order;
  for (std::size_t w = 0; w < work.size(); ++w) {
    if (!work[w].immediate) order.push_back(w);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(work[a].hour, deadline(work[a])) < std::pair(work[b].hour, deadline(work[b]));
  });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (deadline(work[order[i]]) < deadline(work[order[i - 1]])) {
      return Error{fmt::format(
          "shift LP: work {} (hour {}, due hour {}) is due before work {} (hour {}, due hour {}) "
          "that is available earlier; the windows must be agreeable",
          order[i], work[order[i]].hour, deadline(work[order[i]]), order[i - 1],
          work[order[i - 1]].hour, deadline(work[order[i - 1]]))};
    }
  }
  // Rows: work w served in full; flow (s, h): backlog in + arriving = run + backlog out;
  // due (s, h), h < H - 1: the backlog at the end of hour h only holds work not yet due;
  // capacity (s, h): the run and the immediate work there at most the capacity.
  const auto work_row = [](std::size_t w) { return static_cast<int>(w); };
  const auto flow_row = [&](std::size_t s, std::size_t h) {
    return static_cast<int>(work.size() + s * hours + h);
  };
  const auto due_row = [&](std::size_t s, std::size_t h) {
    return static_cast<int>(work.size() + n_sites * hours + s * (hours - 1) + h);
  };
  // Capacity rows only where immediate work shares the capacity with the runs; else the
  // capacity bounds the run columns (the smaller LP: a plan solves one every hour).
  const bool capacity_rows =
      std::any_of(work.begin(), work.end(), [](const ShiftLpWork& x) { return x.immediate; });
  const auto capacity_row = [&](std::size_t s, std::size_t h) {
    return static_cast<int>(work.size() + n_sites * hours + n_sites * (hours - 1) + s * hours + h);
  };
  const int rows = static_cast<int>(work.size() + n_sites * hours + n_sites * (hours - 1) +
                                    (capacity_rows ? n_sites * hours : 0));
  std::vector<CoinBigIndex> starts{0};
  std::vector<int> index;
  std::vector<double> value, objective, col_lo, col_hi;
  std::vector<std::pair<int, double>> entries;  // of the column being added
  // What each column and row stands for, in absolute hours: the warm start's keys.
  std::vector<ShiftLpBasis::Key> column_key, row_key(static_cast<std::size_t>(rows));
  ShiftLpBasis::Key key{};
  const auto add_column = [&](double cost, double hi) {
    column_key.push_back(key);
    std::sort(entries.begin(), entries.end());
    for (const auto& [r, v] : entries) {
      index.push_back(r);
      value.push_back(v);
    }
    starts.push_back(static_cast<CoinBigIndex>(index.size()));
    objective.push_back(cost);
    col_lo.push_back(0.0);
    col_hi.push_back(hi);
    entries.clear();
    return static_cast<int>(objective.size()) - 1;
  };
  // Moves y[w][s]: piece w sent to site s (its home included); unserved u[w].
  std::vector<std::vector<int>> move_col(work.size(), std::vector<int>(n_sites, -1));
  std::vector<int> unserved_col(work.size());
  const auto absolute = [&](std::size_t h) { return options.first_hour + static_cast<int64_t>(h); };
  std::map<std::pair<int, int>, int> seen;  // (home, hour) -> pieces so far
  for (std::size_t w = 0; w < work.size(); ++w) {
    const ShiftLpWork& x = work[w];
    const auto h0 = static_cast<std::size_t>(x.hour);
    const std::size_t due = deadline(x);
    const int nth = seen[{x.home, x.hour}]++;
    row_key[w] = {ShiftLpBasis::kWorkRow, x.home, absolute(h0), nth};
    for (std::size_t s = 0; s < n_sites; ++s) {
      key = {ShiftLpBasis::kMove, x.home, absolute(h0), nth * 1024 + static_cast<int>(s)};
      const double move = static_cast<int>(s) == x.home ? 0.0 : x.move_cost_per_gpu_hour[s];
      if (!std::isfinite(move)) continue;
      if (x.immediate) {  // runs there in its hour, at that hour's cost
        entries = {{work_row(w), 1.0}, {capacity_row(s, h0), 1.0}};
        move_col[w][s] = add_column(move + sites[s].cost_per_gpu_hour[h0], COIN_DBL_MAX);
        continue;
      }
      entries = {{work_row(w), 1.0}, {flow_row(s, h0), 1.0}};
      for (std::size_t h = h0; h < due; ++h) entries.emplace_back(due_row(s, h), -1.0);
      move_col[w][s] = add_column(move, COIN_DBL_MAX);
    }
    entries = {{work_row(w), 1.0}};
    key = {ShiftLpBasis::kUnserved, x.home, absolute(h0), nth};
    unserved_col[w] = add_column(options.unserved_penalty, COIN_DBL_MAX);
  }
  // Runs x[s][h] (at most the capacity) and backlogs b[s][h] for h < H - 1 (none at the end).
  std::vector<std::vector<int>> run_col(n_sites, std::vector<int>(hours));
  for (std::size_t s = 0; s < n_sites; ++s) {
    for (std::size_t h = 0; h < hours; ++h) {
      const int site = static_cast<int>(s);
      row_key[static_cast<std::size_t>(flow_row(s, h))] = {ShiftLpBasis::kFlowRow, site,
                                                           absolute(h), 0};
      entries = {{flow_row(s, h), -1.0}};
      key = {ShiftLpBasis::kRun, site, absolute(h), 0};
      if (capacity_rows) {
        row_key[static_cast<std::size_t>(capacity_row(s, h))] = {ShiftLpBasis::kCapacityRow, site,
                                                                 absolute(h), 0};
        entries.emplace_back(capacity_row(s, h), 1.0);
      }
      run_col[s][h] = add_column(sites[s].cost_per_gpu_hour[h],
                                 capacity_rows ? COIN_DBL_MAX : sites[s].capacity[h]);
      if (h + 1 < hours) {
        row_key[static_cast<std::size_t>(due_row(s, h))] = {ShiftLpBasis::kDueRow, site,
                                                            absolute(h), 0};
        entries = {{flow_row(s, h), -1.0}, {flow_row(s, h + 1), 1.0}, {due_row(s, h), 1.0}};
        key = {ShiftLpBasis::kBacklog, site, absolute(h), 0};
        add_column(0.0, COIN_DBL_MAX);
      }
    }
  }
  std::vector<double> row_lo(static_cast<std::size_t>(rows), 0.0),
      row_hi(static_cast<std::size_t>(rows), 0.0);
  for (std::size_t w = 0; w < work.size(); ++w) row_lo[w] = row_hi[w] = work[w].gpu_hours;
  for (std::size_t s = 0; s < n_sites; ++s) {
    for (std::size_t h = 0; h + 1 < hours; ++h) {
      row_lo[static_cast<std::size_t>(due_row(s, h))] = -COIN_DBL_MAX;
    }
    for (std::size_t h = 0; h < hours && capacity_rows; ++h) {
      const auto r = static_cast<std::size_t>(capacity_row(s, h));
      row_lo[r] = -COIN_DBL_MAX;
      row_hi[r] = sites[s].capacity[h];
    }
  }
  const int columns = static_cast<int>(objective.size());
  CoinPackedMatrix matrix(true, rows, columns, static_cast<CoinBigIndex>(value.size()),
                          value.data(), index.data(), starts.data(), nullptr);
  ClpSimplex clp;
  clp.setLogLevel(0);
  clp.loadProblem(matrix, col_lo.data(), col_hi.data(), objective.data(), row_lo.data(),
                  row_hi.data());
  clp.setOptimizationDirection(1);
  // Start from the last solve's basis where the caller keeps one: an hour later most of the
  // plan is the same, and the new hours' columns start at 0 and their rows' slacks basic.
  if (options.basis != nullptr && !options.basis->status.empty()) {
    std::vector<unsigned char> status(static_cast<std::size_t>(columns + rows));
    const auto& kept = options.basis->status;
    const auto find = [&](const ShiftLpBasis::Key& k, unsigned char otherwise) {
      const auto it = std::lower_bound(kept.begin(), kept.end(), k,
                                       [](const std::pair<ShiftLpBasis::Key, unsigned char>& e,
                                          const ShiftLpBasis::Key& key) { return e.first < key; });
      return it == kept.end() || it->first != k ? otherwise : it->second;
    };
    for (int c = 0; c < columns; ++c) {
      status[static_cast<std::size_t>(c)] =
          find(column_key[static_cast<std::size_t>(c)], ClpSimplex::atLowerBound);
    }
    for (int r = 0; r < rows; ++r) {
      status[static_cast<std::size_t>(columns + r)] =
          find(row_key[static_cast<std::size_t>(r)], ClpSimplex::basic);
    }
    clp.copyinStatus(status.data());
  }
  // Primal simplex from that basis (or CLP's crash basis). A values pass first (primal(1))
  // reaches an optimum of the same cost about 10 % more slowly over a 14-day green-plan run.
  clp.primal();
  if (!clp.isProvenOptimal()) {
    return Error{fmt::format("shift LP: CLP did not solve it (status {}, {} rows, {} columns)",
                             clp.status(), rows, columns)};
  }
  if (options.basis != nullptr) {
    auto& kept = options.basis->status;
    kept.clear();
    const unsigned char* status = clp.statusArray();
    for (int c = 0; c < columns; ++c) {
      kept.emplace_back(column_key[static_cast<std::size_t>(c)], status[c]);
    }
    for (int r = 0; r < rows; ++r) {
      kept.emplace_back(row_key[static_cast<std::size_t>(r)], status[columns + r]);
    }
    // Each key stands for one column or row.
    std::sort(kept.begin(), kept.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  const double* sol = clp.primalColumnSolution();
  const double* dual = clp.dualRowSolution();
  const double* reduced = clp.dualColumnSolution();
  for (std::size_t w = 0; w < work.size(); ++w) {
    result.unserved_gpu_hours += std::max(0.0, sol[unserved_col[w]]);
  }
  // Each site serves what it received in order, hour by hour: the per-piece flows.
  for (std::size_t s = 0; s < n_sites; ++s) {
    std::size_t next = 0;  // into `order`: the first piece at s not served in full
    const auto sent = [&](std::size_t i) {
      const int c = move_col[order[i]][s];
      return c >= 0 ? std::max(0.0, sol[c]) : 0.0;
    };
    double left = order.empty() ? 0.0 : sent(0);  // of the piece order[next]
    const auto skip_empty = [&] {
      while (next < order.size() && left <= 1e-9) {
        if (++next < order.size()) left = sent(next);
      }
    };
    for (std::size_t h = 0; h < hours; ++h) {
      // Minimising, a binding capacity row has a dual <= 0, and a run column at its upper
      // bound a reduced cost <= 0: more capacity lowers the cost.
      result.capacity_price[s][h] =
          std::max(0.0, capacity_rows ? -dual[capacity_row(s, h)] : -reduced[run_col[s][h]]);
      double run = std::max(0.0, sol[run_col[s][h]]);
      result.objective += run * sites[s].cost_per_gpu_hour[h];
      while (run > 1e-9) {
        skip_empty();
        if (next >= order.size() || static_cast<std::size_t>(work[order[next]].hour) > h) break;
        const double amount = std::min(run, left);
        result.flows.push_back(
            ShiftLpFlow{order[next], static_cast<int>(s), static_cast<int>(h), amount});
        run -= amount;
        left -= amount;
      }
    }
  }
  for (std::size_t w = 0; w < work.size(); ++w) {
    for (std::size_t s = 0; s < n_sites; ++s) {
      if (move_col[w][s] < 0) continue;
      const double amount = std::max(0.0, sol[move_col[w][s]]);
      result.objective += amount * objective[move_col[w][s]];
      if (work[w].immediate && amount > 1e-9) {
        result.flows.push_back(ShiftLpFlow{w, static_cast<int>(s), work[w].hour, amount});
      }
    }
  }
  std::sort(result.flows.begin(), result.flows.end(),
            [](const ShiftLpFlow& a, const ShiftLpFlow& b) {
              return std::tuple(a.work, a.site, a.hour) < std::tuple(b.work, b.site, b.hour);
            });
  return result;
}

}  // namespace greensched::multi
