// The mpc and oracle controllers: both solve the dispatch LP (dispatch_lp.hpp) and pass the
// planned battery flows through the Battery and settle_hour, so their results are booked
// exactly like the rule-based controllers' and the battery never leaves its window.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "greensched/energy/dispatch_lp.hpp"
#include "greensched/energy/price_series.hpp"

namespace greensched::energy {
namespace {

constexpr int kDay = 24;

// Seasonal-naive forecast of hours t..t+horizon-1 from hours [0, t) only (t >= 1).
std::vector<HourInput> forecast(const std::vector<HourInput>& past_and_future, std::size_t t,
                                int horizon, int days) {
  const auto mean_of = [&](const std::vector<std::size_t>& idx) {
    HourInput m;
    for (std::size_t j : idx) {
      const HourInput& h = past_and_future[j];
      m.demand_kwh += h.demand_kwh;
      m.generation_kwh += h.generation_kwh;
      m.price_usd_per_kwh += h.price_usd_per_kwh;
      m.carbon_g_per_kwh += h.carbon_g_per_kwh;
      m.export_price_usd_per_kwh += h.export_price_usd_per_kwh;
    }
    const double n = static_cast<double>(idx.size());
    m.demand_kwh /= n;
    m.generation_kwh /= n;
    m.price_usd_per_kwh /= n;
    m.carbon_g_per_kwh /= n;
    m.export_price_usd_per_kwh /= n;
    return m;
  };
  std::vector<std::size_t> all_past(t);
  for (std::size_t j = 0; j < t; ++j) all_past[j] = j;
  const HourInput past_mean = mean_of(all_past);

  std::vector<HourInput> out;
  out.reserve(static_cast<std::size_t>(horizon));
  std::vector<std::size_t> idx;
  for (int k = 0; k < horizon; ++k) {
    const int64_t j = static_cast<int64_t>(t) + k;
    idx.clear();
    // The first m with j - 24 m < t is k / 24 + 1.
    for (int m = k / kDay + 1; m <= k / kDay + days; ++m) {
      const int64_t back = j - static_cast<int64_t>(kDay) * m;
      if (back >= 0) idx.push_back(static_cast<std::size_t>(back));
    }
    out.push_back(idx.empty() ? past_mean : mean_of(idx));
  }
  return out;
}

// What is known of the coming hours beyond the seasonal-naive forecast: the site's demand
// of the last hour, held (persistence, as dispatch agents read a site's demand from its power
// now); prices already published (a day-ahead market's); the site's own generation forecast.
void know_ahead(const std::vector<HourInput>& hours, std::size_t t,
                const ControllerOptions& options, std::vector<HourInput>& ahead) {
  const std::size_t known_price = static_cast<std::size_t>(std::max(
      options.mpc_known_price_h, options.mpc_day_ahead ? options.day_ahead_known_h(t) : 0));
  for (std::size_t k = 0; k < ahead.size() && t + k < hours.size(); ++k) {
    ahead[k].demand_kwh = hours[t - 1].demand_kwh;
    if (k < known_price) {
      ahead[k].price_usd_per_kwh = hours[t + k].price_usd_per_kwh;
      ahead[k].export_price_usd_per_kwh = hours[t + k].export_price_usd_per_kwh;
    }
    if (options.generation_forecast)
      ahead[k].generation_kwh = options.generation_forecast(t, t + k);
  }
}

// The plan's first hour as the battery runs it, knowing the hour as it happens: where the site
// has more to spare than the plan expected (generation above its forecast, demand below), the
// battery first discharges less, then takes the generation that would otherwise leave the site
// (export or curtailment) while what it earns leaving is below what a stored kWh is worth. A
// shortfall is left to the grid, as planned. A site battery follows its net load within the
// hour; without this, a forecast that missed the sun sold the surplus at the feed-in price
// with the battery half empty and imports at 1.8 USD/kWh hours later (SG, 9 January 2023).
BatteryRequest run_first_hour(const DispatchPlanHour& plan, const HourInput& forecast,
                              const HourInput& actual, double stored_value_usd_per_kwh,
                              const ControllerOptions& options) {
  BatteryRequest request{plan.charge_kwh, plan.discharge_kwh};
  const double spare =
      (actual.generation_kwh - forecast.generation_kwh) - (actual.demand_kwh - forecast.demand_kwh);
  // What generation leaving the site earns: the feed-in price, or nothing where it is
  // curtailed (no export, or a negative price).
  const double leaving_worth =
      options.allow_export ? std::max(0.0, actual.export_price_usd_per_kwh) : 0.0;
  if (!(spare > 0) || leaving_worth >= stored_value_usd_per_kwh) return request;
  const double less = std::min(request.discharge_kwh, spare);
  request.discharge_kwh -= less;
  const double leaving =
      actual.generation_kwh - (actual.demand_kwh + request.charge_kwh - request.discharge_kwh);
  request.charge_kwh += std::max(0.0, std::min(spare - less, leaving));
  return request;
}

}  // namespace

int ControllerOptions::day_ahead_known_h(std::size_t t) const {
  const int64_t now = hour0_utc_s + 3600 * static_cast<int64_t>(t);
  return static_cast<int>((day_ahead_published_until(now, utc_offset_s) - now + 3599) / 3600);
}

Result<ControllerRun> run_mpc(const std::vector<HourInput>& hours, const BatterySpec& spec,
                              const ControllerOptions& options) {
  return run_with_battery(
      hours, spec, options, [&](std::size_t t, const Battery& battery) -> Result<BatteryRequest> {
        if (t == 0) return BatteryRequest{};  // no past to forecast from
        std::vector<HourInput> ahead =
            forecast(hours, t, options.mpc_horizon_h, options.forecast_days);
        if (options.mpc_forecast) {
          if (Status s = options.mpc_forecast(t, ahead); !s.ok()) {
            return Error{fmt::format("mpc: hour {}: forecast: {}", t, s.message())};
          }
        }
        know_ahead(hours, t, options, ahead);
        double mean_price = 0;
        for (const HourInput& f : ahead) mean_price += effective_import_price(f, options);
        mean_price /= static_cast<double>(ahead.size());
        const double stored_value = battery.discharge_efficiency() * std::max(0.0, mean_price);
        auto plan = solve_dispatch_lp(ahead, spec, battery.stored_kwh(), options, stored_value);
        if (!plan.ok()) return Error{fmt::format("mpc: hour {}: {}", t, plan.error())};
        return run_first_hour(plan.value().hours[0], ahead[0], hours[t], stored_value, options);
      });
}

Result<ControllerRun> run_oracle(const std::vector<HourInput>& hours, const BatterySpec& spec,
                                 const ControllerOptions& options) {
  auto made = Battery::make(spec);
  if (!made.ok()) return Error{made.error()};
  // The span after the history, with the actual values.
  const std::vector<HourInput> span(hours.begin() + static_cast<std::ptrdiff_t>(options.history_h),
                                    hours.end());
  auto plan = solve_dispatch_lp(span, spec, made.value().stored_kwh(), options, 0.0);
  if (!plan.ok()) return Error{plan.error()};
  return run_with_battery(hours, spec, options,
                          [&](std::size_t t, const Battery&) -> Result<BatteryRequest> {
                            const DispatchPlanHour& p = plan.value().hours[t - options.history_h];
                            return BatteryRequest{p.charge_kwh, p.discharge_kwh};
                          });
}

}  // namespace greensched::energy
