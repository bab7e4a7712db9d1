#include "greensched/multi/generation_forecast.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "greensched/core/rng.hpp"
#include "greensched/energy/wind.hpp"

namespace greensched::multi {

std::string_view generation_forecast_name(GenerationForecastKind kind) {
  switch (kind) {
    case GenerationForecastKind::kPast:
      return "past";
    case GenerationForecastKind::kWeather:
      return "weather";
    case GenerationForecastKind::kExact:
      return "exact";
  }
  return "past";
}

Result<GenerationForecastKind> parse_generation_forecast(std::string_view text) {
  for (auto kind : {GenerationForecastKind::kPast, GenerationForecastKind::kWeather,
                    GenerationForecastKind::kExact}) {
    if (text == generation_forecast_name(kind)) return kind;
  }
  return Error{fmt::format("unknown generation forecast '{}' (past, weather or exact)", text)};
}

Status validate(const GenerationForecastOptions& o) {
  if (!(o.wind_speed_rmse_ms >= 0) || !(o.solar_rmse >= 0) ||
      !std::isfinite(o.wind_speed_rmse_ms) || !std::isfinite(o.solar_rmse)) {
    return Error{
        fmt::format("generation forecast: errors {} m/s (wind) and {} (solar) must be >= 0",
                    o.wind_speed_rmse_ms, o.solar_rmse)};
  }
  if (!(o.error_correlation >= 0 && o.error_correlation < 1)) {
    return Error{fmt::format("generation forecast: error correlation {} is outside [0, 1)",
                             o.error_correlation)};
  }
  if (o.weather_lead_h < 1 || !(o.wind_reversion_h > 0)) {
    return Error{fmt::format("generation forecast: lead {} h must be >= 1 and reversion {} h > 0",
                             o.weather_lead_h, o.wind_reversion_h)};
  }
  return Status::Ok();
}

namespace {

constexpr int kRecentH = 24;  // the past the past-only forecasts read

// A standard normal draw (Box-Muller on the run's portable uniform draws).
double normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform_real();  // (0, 1]
  const double u2 = rng.uniform_real();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Sample j's value (cyclic outside the span, as the series is everywhere).
double sample(const TimeSeries& s, int64_t j) {
  return s.at(s.start_s() + j * s.step_s());
}

// How many of the kRecentH samples before sample j_now (the one in progress) are the past:
// fewer where the series holds less before it (TimeSeries::history_s).
int64_t recent_known(const TimeSeries& s, int64_t j_now) {
  return std::min<int64_t>(kRecentH, s.history_s(s.start_s() + j_now * s.step_s()) / s.step_s());
}

}  // namespace

GenerationForecast::GenerationForecast(const SiteEnergy& site,
                                       const GenerationForecastOptions& options, int site_index)
    : site_(&site), options_(options) {
  if (options.kind != GenerationForecastKind::kWeather) return;
  Rng rng(options.seed ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(site_index + 1)));
  const double rho = options.error_correlation;
  const double fresh = std::sqrt(1.0 - rho * rho);
  const std::size_t n = std::max(site.pv_kwh.values().size(), site.wind_kwh.values().size());
  double daylight_sum = 0;
  int64_t daylight_hours = 0;
  const bool has_clear = site.pv_clear_kwh.values().size() == site.pv_kwh.values().size();
  for (std::size_t h = 0; has_clear && h < site.pv_clear_kwh.values().size(); ++h) {
    if (site.pv_clear_kwh.values()[h] > 0) {
      daylight_sum += site.pv_kwh.values()[h];
      ++daylight_hours;
    }
  }
  const double daylight_mean = daylight_hours > 0 ? daylight_sum / daylight_hours : 0.0;
  const std::vector<double>& speed = site.wind_speed_ms.values();
  const bool has_speed = !speed.empty() && speed.size() == site.wind_kwh.values().size();
  energy::WindTurbine turbine;
  turbine.rated_kw = site.wind_kw;
  std::vector<double> pv(site.pv_kwh.values().size()), wind(site.wind_kwh.values().size()),
      speed_fc(has_speed ? speed.size() : 0);
  double zw = 0, zs = 0;
  for (std::size_t h = 0; h < n; ++h) {
    const double nw = normal(rng), ns = normal(rng);
    zw = h == 0 ? nw : rho * zw + fresh * nw;
    zs = h == 0 ? ns : rho * zs + fresh * ns;
    if (h < wind.size()) {
      if (has_speed) {
        speed_fc[h] = std::max(0.0, speed[h] + options.wind_speed_rmse_ms * zw);
        wind[h] = site.wind_kw > 0 ? energy::wind_output_kw(turbine, speed_fc[h]) : 0.0;
      } else {
        wind[h] = site.wind_kwh.values()[h];
      }
    }
    if (h < pv.size() && !has_clear) {
      pv[h] = site.pv_kwh.values()[h];
    } else if (h < pv.size()) {
      const double clear = site.pv_clear_kwh.values()[h];
      pv[h] = clear > 0
                  ? std::clamp(site.pv_kwh.values()[h] + options.solar_rmse * daylight_mean * zs,
                               0.0, clear)
                  : 0.0;
    }
  }
  if (!pv.empty()) pv_weather_ = TimeSeries(site.pv_kwh.start_s(), 3600, std::move(pv));
  if (!wind.empty()) wind_weather_ = TimeSeries(site.wind_kwh.start_s(), 3600, std::move(wind));
  if (has_speed) {
    speed_weather_ = TimeSeries(site.wind_speed_ms.start_s(), 3600, std::move(speed_fc));
  }
}

double GenerationForecast::forecast_wind_speed_ms(int64_t t) const {
  if (!speed_weather_.empty()) return speed_weather_.at(t);
  if (site_ == nullptr || site_->wind_speed_ms.empty()) return 0.0;
  return site_->wind_speed_ms.at(t);
}

double GenerationForecast::forecast_pv_kwh(int64_t t) const {
  if (!pv_weather_.empty()) return pv_weather_.at(t);
  if (site_ == nullptr || site_->pv_kwh.empty()) return 0.0;
  return site_->pv_kwh.at(t);
}

std::optional<double> GenerationForecast::known(const TimeSeries& actual, const TimeSeries& weather,
                                                int64_t now, int64_t t) const {
  const int64_t j = actual.index_of(t);
  const int64_t j_now = actual.index_of(now);  // in progress at now: not known yet
  if (j < j_now || options_.kind == GenerationForecastKind::kExact) return actual.at(t);
  if (options_.kind != GenerationForecastKind::kWeather ||
      actual.start_s() + j * actual.step_s() >= now + 3600 * int64_t{options_.weather_lead_h}) {
    return std::nullopt;
  }
  // The issued forecast less what persists of the error seen in the last hour that ended
  // (none before the series' first hour ended).
  const double last_error = recent_known(actual, j_now) > 0
                                ? sample(weather, j_now - 1) - sample(actual, j_now - 1)
                                : 0.0;
  const double k = static_cast<double>(j - (j_now - 1));
  return std::max(0.0, sample(weather, j) - std::pow(options_.error_correlation, k) * last_error);
}

double GenerationForecast::kwh(int64_t now, int64_t t) const {
  return pv_kwh(now, t) + wind_kwh(now, t);
}

double GenerationForecast::pv_kwh(int64_t now, int64_t t) const {
  if (site_ == nullptr || site_->pv_kwh.empty()) return 0.0;
  const TimeSeries& actual = site_->pv_kwh;
  if (const std::optional<double> v = known(actual, pv_weather_, now, t)) return *v;
  const int64_t j = actual.index_of(t);
  const int64_t j_now = actual.index_of(now);
  const int64_t known = recent_known(actual, j_now);
  if (site_->pv_clear_kwh.empty()) {
    // The same hour of the last day seen; none seen yet: no output expected.
    const int64_t same_hour = j - kRecentH * ((j - j_now) / kRecentH + 1);
    return same_hour >= j_now - known ? sample(actual, same_hour) : 0.0;
  }
  double seen = 0, clear = 0;
  for (int64_t i = j_now - known; i < j_now; ++i) {
    seen += sample(actual, i);
    clear += sample(site_->pv_clear_kwh, i);
  }
  const double clearness = clear > 0 ? seen / clear : 1.0;
  return clearness * site_->pv_clear_kwh.at(t);
}

double GenerationForecast::wind_kwh(int64_t now, int64_t t) const {
  if (site_ == nullptr || site_->wind_kwh.empty()) return 0.0;
  const TimeSeries& actual = site_->wind_kwh;
  if (const std::optional<double> v = known(actual, wind_weather_, now, t)) return *v;
  const int64_t j = actual.index_of(t);
  const int64_t j_now = actual.index_of(now);
  // The hours seen (fewer than kRecentH at the series' start; none: no output expected).
  const int64_t known = recent_known(actual, j_now);
  if (known == 0) return 0.0;
  double mean = 0;
  for (int64_t i = j_now - known; i < j_now; ++i) mean += sample(actual, i);
  mean /= static_cast<double>(known);
  const double last = sample(actual, j_now - 1);
  const double k = static_cast<double>(j - (j_now - 1));
  return mean + (last - mean) * std::exp(-k / options_.wind_reversion_h);
}

}  // namespace greensched::multi
