// The site dispatch linear program shared by the mpc and oracle controllers, solved with
// COIN-OR CLP. Hours k = 0..H-1 of one hour each; variables per hour, all >= 0 (kWh):
// import m_k, export x_k, curtail c_k, charge q_k, discharge d_k, stored energy e_k.
//   minimise  sum_k (p_k + carbon_price * g_k) m_k - f_k x_k  -  terminal_value * e_{H-1}
//   balance   G_k + m_k + d_k = D_k + q_k + x_k + c_k
//   battery   e_k = e_{k-1} + eta_c q_k - d_k / eta_d        (e_{-1} = initial stored)
//   window    soc_min C <= e_k <= soc_max C
//   power     q_k <= P_c, d_k <= P_d, q_k / P_c + d_k / P_d <= 1   (time-sharing in the hour)
//   generation x_k + c_k <= G_k;  x_k = 0 when export is not allowed
// It is always feasible (idle battery) and bounded (m_k <= D_k + P_c + G_k).
#pragma once

#include <span>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/energy/battery.hpp"
#include "greensched/energy/controller.hpp"

namespace greensched::energy {

struct DispatchPlanHour {
  double import_kwh = 0;
  double export_kwh = 0;
  double curtailed_kwh = 0;
  double charge_kwh = 0;
  double discharge_kwh = 0;
  double stored_kwh = 0;  // at the end of the hour
};

struct DispatchPlan {
  std::vector<DispatchPlanHour> hours;
  double objective_usd = 0;  // including -terminal_value * e_{H-1}
};

Result<DispatchPlan> solve_dispatch_lp(std::span<const HourInput> hours, const BatterySpec& spec,
                                       double initial_stored_kwh, const ControllerOptions& options,
                                       double terminal_value_usd_per_kwh);

// The LP controllers (run_controller dispatches to them; inputs already validated).
//   mpc: each hour t, the LP over the next mpc_horizon_h hours on a seasonal-naive forecast
//   from hours before t only: hour j is the mean of hours j - 24 m for the forecast_days
//   smallest m with j - 24 m < t (for j = t..t+23 that is yesterday's same hour); where none
//   exists yet, the mean of all past hours; with no past at all (t = 0) the battery idles.
//   The options' mpc_forecast, where set, then replaces what it forecasts (a learned price and
//   carbon forecast). Demand is the last hour's, held; generation the options' generation_forecast
//   where set; prices published day-ahead (mpc_known_price_h, mpc_day_ahead) the actual ones.
//   Energy left stored at the horizon's end is valued at eta_d times the forecast mean import
//   price (at least 0), so the plan does not empty the battery just because the horizon ends.
//   The first hour runs as planned, except that where the hour turns out to have more to
//   spare than forecast (more generation, less demand), the battery discharges less and then
//   takes the generation that would leave the site, while what it earns leaving (the feed-in
//   price; 0 where curtailed) is below that value of a stored kWh (a battery follows its
//   site's net load within the hour).
//   oracle: one LP over all hours on the actual values, end state free.
Result<ControllerRun> run_mpc(const std::vector<HourInput>& hours, const BatterySpec& battery,
                              const ControllerOptions& options);
Result<ControllerRun> run_oracle(const std::vector<HourInput>& hours, const BatterySpec& battery,
                                 const ControllerOptions& options);

}  // namespace greensched::energy
