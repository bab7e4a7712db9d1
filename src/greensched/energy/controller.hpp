// Site energy controllers, run hourly over a span of hours. Each hour the site must serve its
// demand (cluster energy including cooling) from on-site generation, a battery and the grid.
// A controller decides only the battery's charge and discharge; given those, settle_hour
// splits generation between use on site, export and curtailment and imports the rest, at the
// least cost for that hour. All controllers share that settlement and the Battery's
// bookkeeping, so they differ only in their battery strategy and their results compare.
//
//   none    no storage: generation serves demand, surplus exported (or curtailed), rest
//           imported.
//   greedy  charges from on-site surplus, and from the grid when the price is at or below the
//           low quantile of the trailing window of past prices; discharges to cover the
//           deficit when the price is at or above the high quantile. Prices here are import
//           prices plus the carbon price (effective_import_price), as everywhere below.
//   mpc     rolling-horizon LP (dispatch_lp.hpp) re-solved each hour on forecasts built only
//           from past hours; the first hour's battery plan is applied, and within that hour the
//           battery keeps generation the forecast missed rather than export it.
//   oracle  the same LP over the whole span with the actual values (perfect foresight): a
//           lower bound on the objective of any controller on this settlement.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/energy/battery.hpp"

namespace greensched::energy {

struct HourInput {
  double demand_kwh = 0;                // >= 0
  double generation_kwh = 0;            // on-site, >= 0
  double price_usd_per_kwh = 0;         // grid import; may be negative
  double carbon_g_per_kwh = 0;          // grid import, >= 0
  double export_price_usd_per_kwh = 0;  // feed-in; may be negative
};

struct HourOutput {
  double import_kwh = 0;
  double export_kwh = 0;
  double curtailed_kwh = 0;
  double charge_kwh = 0;       // into the battery, from the bus
  double discharge_kwh = 0;    // out of the battery, to the bus
  double soc = 0;              // at the end of the hour, fraction of capacity
  double onsite_used_kwh = 0;  // generation neither exported nor curtailed
  double cost_usd = 0;         // import_kwh * price - export_kwh * export_price
  double carbon_kg = 0;        // import_kwh * carbon / 1000
};

struct ControllerOptions {
  bool allow_export = true;           // false: any surplus is curtailed
  double carbon_price_usd_per_t = 0;  // USD/t CO2, see effective_import_price
  int mpc_horizon_h = 24;             // hours in each rolling LP, >= 1
  int forecast_days = 1;              // seasonal-naive mean over this many past days, >= 1
  // mpc: hours from now (the current one first) whose import and export prices are known
  // rather than forecast, as a day-ahead market publishes them; 0: prices only from the past.
  int mpc_known_price_h = 0;
  // mpc: prices known as a day-ahead auction publishes them: at 12:00 local time, every hour of
  // the next local day; before noon, the rest of today. Needs the UTC time of hour 0 and the
  // site's UTC offset. Counts beside mpc_known_price_h (the longer of the two holds).
  bool mpc_day_ahead = false;
  // mpc: the site's generation forecast, generation_forecast(t, h) the kWh of hour h (an
  // index into the hours given) as known at the start of hour t; h >= t. Unset: the
  // seasonal-naive forecast of past generation, as for the other series.
  std::function<double(std::size_t t, std::size_t h)> generation_forecast;
  // mpc: a forecast of the import price and carbon intensity that replaces the seasonal-naive
  // one (a learned forecaster's): mpc_forecast(t, ahead) is called at the start of hour t with
  // ahead[k] the seasonal-naive forecast of hour t + k, and overwrites what it forecasts. It
  // must read only hours before t. Prices published day-ahead, demand and the generation
  // forecast are applied after it. Unset: the seasonal-naive forecast.
  std::function<Status(std::size_t t, std::vector<HourInput>& ahead)> mpc_forecast;
  int greedy_window_h = 24;            // trailing past prices for the quantiles, >= 1
  double greedy_low_quantile = 0.25;   // charge from the grid at or below
  double greedy_high_quantile = 0.75;  // discharge at or above
  // The first history_h hours are the past before the span: the forecasts (mpc) and greedy's
  // price window read them, but no controller acts in them and they are not booked. The run's
  // hours and totals cover the rest.
  std::size_t history_h = 0;
  int64_t hour0_utc_s = 0;   // epoch second of hour 0
  int64_t utc_offset_s = 0;  // local time = UTC + this

  // Hours from hour `t` (the current one first) whose prices a day-ahead market has published.
  int day_ahead_known_h(std::size_t t) const;
};

enum class ControllerKind { kNone, kGreedy, kMpc, kOracle };

Result<ControllerKind> parse_controller(std::string_view name);  // none|greedy|mpc|oracle
std::string_view controller_name(ControllerKind kind);

struct ControllerRun {
  std::vector<HourOutput> hours;
  double cost_usd = 0;
  double carbon_kg = 0;
  double objective_usd = 0;  // cost_usd + carbon_price_usd_per_t * carbon_kg / 1000
  double import_kwh = 0;
  double export_kwh = 0;
  double curtailed_kwh = 0;
  double full_cycles = 0;
};

// Runs a controller over the hours (hour 0 first) with a fresh battery from `battery`.
// Errors name the bad input ("energy controller: hour 3: demand_kwh -1 is not >= 0").
Result<ControllerRun> run_controller(ControllerKind kind, const std::vector<HourInput>& hours,
                                     const BatterySpec& battery,
                                     const ControllerOptions& options = {});

// ---- Building blocks, shared by the controllers (and tested on their own) ----

// Import price plus the carbon price, USD/kWh: what every controller weighs an import at
// (settle_hour, greedy's quantiles, the LP's objective), so with a carbon price they minimise
// cost + carbon price x carbon (objective_usd); cost_usd stays the bill.
double effective_import_price(const HourInput& in, const ControllerOptions& options);
// The same weighing for any price and intensity (the dispatch agents' net view uses it too).
double weighted_price(double price_usd_per_kwh, double carbon_g_per_kwh,
                      double carbon_price_usd_per_t);

// Settles one hour given the battery flows already exchanged: generation goes to the best of
// on-site use (worth the effective import price, up to the load), export (worth the export
// price, if allowed) and curtailment (worth 0); ties prefer use, then export. The load
// demand + charge - discharge is taken as >= 0 (apply_battery guarantees it).
HourOutput settle_hour(const HourInput& in, const Battery::Flows& flows,
                       const ControllerOptions& options);

// Adds an hour to a run's list and totals.
void record_hour(ControllerRun& run, const HourOutput& hour, const ControllerOptions& options);

// ok, or the first bad hour or option.
Status validate_inputs(const std::vector<HourInput>& hours, const ControllerOptions& options);

// What a controller asks of the battery for one hour, kWh; apply_battery trims it.
struct BatteryRequest {
  double charge_kwh = 0;
  double discharge_kwh = 0;
};

// A controller's battery strategy: the request for hour t given the battery as it stands.
using BatteryStrategy = std::function<Result<BatteryRequest>(std::size_t t, const Battery&)>;

// Runs the hours through a fresh battery from `spec`, asking `strategy` each hour, and books
// every hour alike (apply_battery, settle_hour, record_hour, full cycles).
Result<ControllerRun> run_with_battery(const std::vector<HourInput>& hours, const BatterySpec& spec,
                                       const ControllerOptions& options,
                                       const BatteryStrategy& strategy);

// Asks the battery for (charge, discharge) kWh over one hour, never discharging more than
// the hour's demand plus charge (the battery does not export); returns what it exchanged.
Battery::Flows apply_battery(Battery& battery, const HourInput& in, double charge_kwh,
                             double discharge_kwh);

}  // namespace greensched::energy
