// What a site's operator knows, at time `now`, of its on-site generation in a coming hour. The
// dispatch agents (net_signal.hpp) and the site energy controllers (site_controller.hpp) read
// the same object, so a plan and the dispatch that tracks it see the same future.
//
//   past      (default) only generation already seen, hours that ended before now:
//             wind: persistence of the last hour reverting to the mean of the last 24 hours,
//               f(k) = m + (w_last - m) exp(-k / tau), k hours after the last one, tau 6 h;
//             solar: clear-sky output of the hour times the clearness of the last 24 hours
//               (their output over their clear-sky output; 1 when the sun never rose);
//               a site given without a clear-sky series: the same hour of the last day seen.
//             Only hours of the series' own past are read (TimeSeries::history_s): at its
//             start, fewer than 24 (the mean and clearness of those there are); with none,
//             clear-sky output (clearness 1), and no wind nor, without a clear-sky series,
//             sun, rather than a cyclic read of the series' last hours.
//   weather   a day-ahead weather forecast for the hours up to `weather_lead_h` from now: the
//             actual weather plus an error, past-only beyond. In hour h
//               wind:  the 10 m wind speed plus wind_speed_rmse_ms x z_w(h) (at least 0),
//                      through the site's turbine model (energy/wind.hpp);
//               solar: the output plus solar_rmse x mean daylight output x z_s(h), clipped
//                      to [0, clear-sky output], daylight hours only (clear-sky output > 0);
//             z an AR(1) sequence over hours with unit variance and lag-one correlation
//             `error_correlation`, drawn once per site from the run's seed. One realisation
//             serves every forecast time. The operator sees the forecast's error in the last
//             hour that ended and expects error_correlation^k of it k hours later, so the
//             forecast of a coming hour is the weather's minus that (at least 0).
//             Default sizes from published day-ahead skill, sources in docs/ENERGY.md. A site
//             given without a wind speed (clear-sky) series forecasts its actual wind (solar)
//             output.
//   exact     the actual output: an upper bound, never an operator's forecast.
// Hours that have ended are always their actual output.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "greensched/core/status.hpp"
#include "greensched/multi/site_energy.hpp"
#include "greensched/multi/time_series.hpp"

namespace greensched::multi {

enum class GenerationForecastKind { kPast, kWeather, kExact };

std::string_view generation_forecast_name(GenerationForecastKind kind);
// "past", "weather" or "exact".
Result<GenerationForecastKind> parse_generation_forecast(std::string_view text);

struct GenerationForecastOptions {
  GenerationForecastKind kind = GenerationForecastKind::kPast;
  double wind_speed_rmse_ms = 1.0;  // at 10 m
  double solar_rmse = 0.35;         // share of the mean daylight output
  double error_correlation = 0.8;
  int weather_lead_h = 48;
  double wind_reversion_h = 6;  // tau of the past-only wind forecast
  uint64_t seed = 42;
};

// Ranges: rmse >= 0, correlation in [0, 1), lead >= 1, reversion > 0.
Status validate(const GenerationForecastOptions& options);

class GenerationForecast {
 public:
  // A site without generation: every answer is 0.
  GenerationForecast() = default;
  // `site` must outlive the forecast; `site_index` varies the error draw between sites.
  GenerationForecast(const SiteEnergy& site, const GenerationForecastOptions& options,
                     int site_index);

  // Expected kWh in the hour holding epoch second t, known at epoch second now.
  double kwh(int64_t now, int64_t t) const;
  // The same split into its parts.
  double pv_kwh(int64_t now, int64_t t) const;
  double wind_kwh(int64_t now, int64_t t) const;
  // The weather forecast as issued, before the correction by the last hour's error (kind
  // kWeather; else the actual values): 10 m wind speed and solar output in the hour holding t.
  double forecast_wind_speed_ms(int64_t t) const;
  double forecast_pv_kwh(int64_t t) const;

 private:
  const SiteEnergy* site_ = nullptr;
  GenerationForecastOptions options_;
  // Kind kWeather only: forecast solar output, wind speed and wind output per hour.
  TimeSeries pv_weather_, speed_weather_, wind_weather_;

  // The hour holding t where more than the past-only forecast is known at now: its actual
  // output (ended, or kind kExact), or `weather`'s corrected forecast within the lead; else
  // nullopt.
  std::optional<double> known(const TimeSeries& actual, const TimeSeries& weather, int64_t now,
                              int64_t t) const;
};

}  // namespace greensched::multi
