#include "greensched/energy/dispatch_lp.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>

namespace greensched::energy {
namespace {

// Column and row layout: six columns and four rows per hour.
enum Column { kImport = 0, kExport, kCurtail, kCharge, kDischarge, kStored, kColumns };
enum Row { kBalance = 0, kDynamics, kGeneration, kTimeShare, kRows };

}  // namespace

Result<DispatchPlan> solve_dispatch_lp(std::span<const HourInput> hours, const BatterySpec& spec,
                                       double initial_stored_kwh, const ControllerOptions& options,
                                       double terminal_value_usd_per_kwh) {
  if (auto st = validate(spec); !st.ok()) return Error{st.message()};
  DispatchPlan plan;
  const int n = static_cast<int>(hours.size());
  if (n == 0) return plan;

  const double eta = std::sqrt(spec.round_trip_efficiency);
  const double lo = spec.soc_min * spec.capacity_kwh;
  const double hi = spec.soc_max * spec.capacity_kwh;
  const double initial = std::clamp(initial_stored_kwh, lo, hi);
  const bool has_battery = spec.capacity_kwh > 0;
  const double charge_cap = has_battery ? spec.max_charge_kw : 0.0;
  const double discharge_cap = has_battery ? spec.max_discharge_kw : 0.0;

  const int columns = kColumns * n;
  const int rows = kRows * n;
  std::vector<double> objective(columns, 0.0), col_lo(columns, 0.0), col_hi(columns, COIN_DBL_MAX),
      row_lo(rows, 0.0), row_hi(rows, 0.0);
  std::vector<int> row_index, col_index;
  std::vector<double> value;
  const auto put = [&](int row, int col, double v) {
    row_index.push_back(row);
    col_index.push_back(col);
    value.push_back(v);
  };

  for (int k = 0; k < n; ++k) {
    const HourInput& in = hours[k];
    const int c = kColumns * k;
    const int r = kRows * k;
    objective[c + kImport] = effective_import_price(in, options);
    objective[c + kExport] = -in.export_price_usd_per_kwh;
    if (!options.allow_export) col_hi[c + kExport] = 0;
    col_hi[c + kCharge] = charge_cap;
    col_hi[c + kDischarge] = discharge_cap;
    col_lo[c + kStored] = lo;
    col_hi[c + kStored] = hi;

    // balance: m + d - q - x - c = D - G
    put(r + kBalance, c + kImport, 1);
    put(r + kBalance, c + kDischarge, 1);
    put(r + kBalance, c + kCharge, -1);
    put(r + kBalance, c + kExport, -1);
    put(r + kBalance, c + kCurtail, -1);
    row_lo[r + kBalance] = row_hi[r + kBalance] = in.demand_kwh - in.generation_kwh;

    // battery: e_k - e_{k-1} - eta q + d / eta = 0 (initial stored on the right at k = 0)
    put(r + kDynamics, c + kStored, 1);
    if (k > 0) put(r + kDynamics, c - kColumns + kStored, -1);
    put(r + kDynamics, c + kCharge, -eta);
    put(r + kDynamics, c + kDischarge, 1.0 / eta);
    row_lo[r + kDynamics] = row_hi[r + kDynamics] = k == 0 ? initial : 0.0;

    // generation: x + c <= G
    put(r + kGeneration, c + kExport, 1);
    put(r + kGeneration, c + kCurtail, 1);
    row_lo[r + kGeneration] = -COIN_DBL_MAX;
    row_hi[r + kGeneration] = in.generation_kwh;

    // time-sharing: q / P_c + d / P_d <= 1 (a zero limit already fixes its column at 0)
    if (charge_cap > 0) put(r + kTimeShare, c + kCharge, 1.0 / charge_cap);
    if (discharge_cap > 0) put(r + kTimeShare, c + kDischarge, 1.0 / discharge_cap);
    row_lo[r + kTimeShare] = -COIN_DBL_MAX;
    row_hi[r + kTimeShare] = 1.0;
  }
  objective[kColumns * (n - 1) + kStored] = -terminal_value_usd_per_kwh;

  CoinPackedMatrix matrix(true, row_index.data(), col_index.data(), value.data(),
                          static_cast<CoinBigIndex>(value.size()));
  matrix.setDimensions(rows, columns);
  ClpSimplex clp;
  clp.setLogLevel(0);
  clp.loadProblem(matrix, col_lo.data(), col_hi.data(), objective.data(), row_lo.data(),
                  row_hi.data());
  clp.setOptimizationDirection(1);
  clp.initialSolve();
  if (!clp.isProvenOptimal()) {
    return Error{fmt::format("energy dispatch LP: CLP did not solve it (status {}, {} hours)",
                             clp.status(), n)};
  }
  const double* x = clp.getColSolution();
  plan.objective_usd = clp.objectiveValue();
  plan.hours.resize(n);
  for (int k = 0; k < n; ++k) {
    const int c = kColumns * k;
    DispatchPlanHour& h = plan.hours[k];
    // The solver may return -1e-12 and the like; flows are >= 0.
    h.import_kwh = std::max(0.0, x[c + kImport]);
    h.export_kwh = std::max(0.0, x[c + kExport]);
    h.curtailed_kwh = std::max(0.0, x[c + kCurtail]);
    h.charge_kwh = std::max(0.0, x[c + kCharge]);
    h.discharge_kwh = std::max(0.0, x[c + kDischarge]);
    h.stored_kwh = std::clamp(x[c + kStored], lo, hi);
  }
  return plan;
}

}  // namespace greensched::energy
