// The generation forecasts agents and site controllers share (multi/generation_forecast.hpp):
// hand-computed past-only answers, the weather forecast's error model measured on a year of
// hours, and the day-ahead publication rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/energy/controller.hpp"
#include "greensched/energy/price_series.hpp"
#include "greensched/energy/weather.hpp"
#include "greensched/energy/wind.hpp"
#include "greensched/multi/generation_forecast.hpp"
#include "test_data.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kJan1 = 1672531200;  // 2023-01-01T00:00Z
constexpr int64_t kH = 3600;

// A site with 20 kW of wind and of solar whose hourly output (and clear-sky output) is given.
SiteEnergy site_of(const std::vector<double>& wind, const std::vector<double>& pv,
                   const std::vector<double>& clear) {
  SiteEnergy e;
  e.wind_kw = e.pv_kw = 20;
  e.wind_kwh = TimeSeries(kJan1, kH, wind);
  e.pv_kwh = TimeSeries(kJan1, kH, pv);
  e.pv_clear_kwh = TimeSeries(kJan1, kH, clear);
  return e;
}

// `a` with its wind and solar output from hour `from` on replaced by `wind` and `pv`.
SiteEnergy changed_from(const SiteEnergy& a, int from, double wind, const std::vector<double>& pv) {
  std::vector<double> w = a.wind_kwh.values(), p = a.pv_kwh.values();
  for (std::size_t h = from; h < w.size(); ++h) {
    w[h] = wind;
    p[h] = pv[h];
  }
  SiteEnergy b = a;
  b.wind_kwh = TimeSeries(kJan1, kH, w);
  b.pv_kwh = TimeSeries(kJan1, kH, p);
  return b;
}

GenerationForecastOptions kind(GenerationForecastKind k) {
  GenerationForecastOptions o;
  o.kind = k;
  return o;
}

// Wind 0 kWh for 23 hours, then 24 in hour 23, repeated daily: at the start of hour 24 the
// last day's mean is 1 and the last hour 24, so hour 24 + k - 1 (k hours after the last one)
// is 1 + 23 exp(-k / 6).
TEST(GenerationForecast, PastOnlyWindRevertsFromTheLastHourToTheDaysMean) {
  SiteEnergy e;
  e.wind_kw = 30;
  std::vector<double> wind(48, 0.0);
  wind[23] = 24;
  wind[47] = 24;
  e.wind_kwh = TimeSeries(kJan1, kH, wind);
  const GenerationForecast f(e, kind(GenerationForecastKind::kPast), 0);
  const int64_t now = kJan1 + 24 * kH;
  for (int k = 1; k <= 10; ++k) {
    EXPECT_NEAR(f.wind_kwh(now, now + (k - 1) * kH), 1 + 23 * std::exp(-k / 6.0), 1e-9) << k;
  }
  // Hours that have ended are what they were; the one in progress is forecast.
  EXPECT_DOUBLE_EQ(f.wind_kwh(now, now - kH), 24.0);
  EXPECT_DOUBLE_EQ(f.wind_kwh(now + 1800, now), 1 + 23 * std::exp(-1 / 6.0));
  // Exact reads the actual hour.
  const GenerationForecast exact(e, kind(GenerationForecastKind::kExact), 0);
  EXPECT_DOUBLE_EQ(exact.wind_kwh(now, now + 10 * kH), 0.0);
}

// The last day's output was 40 % of its clear-sky output: each coming hour is 40 % of its own
// clear-sky output, whatever the actual turns out to be.
TEST(GenerationForecast, PastOnlySolarIsClearSkyTimesTheDaysClearness) {
  SiteEnergy e;
  e.pv_kw = 10;
  std::vector<double> clear(48), pv(48);
  for (int h = 0; h < 48; ++h) {
    clear[h] = h % 24 >= 8 && h % 24 < 16 ? 5.0 + h % 24 - 8 : 0.0;
    pv[h] = h < 24 ? 0.4 * clear[h] : clear[h];  // the second day is clear
  }
  e.pv_kwh = TimeSeries(kJan1, kH, pv);
  e.pv_clear_kwh = TimeSeries(kJan1, kH, clear);
  const GenerationForecast f(e, kind(GenerationForecastKind::kPast), 0);
  const int64_t now = kJan1 + 24 * kH;
  for (int h = 24; h < 48; ++h) {
    EXPECT_NEAR(f.pv_kwh(now, kJan1 + h * kH), 0.4 * clear[h], 1e-12) << h;
  }
}

// A forecast made at `now` reads nothing after it: changing the future leaves it unchanged.
TEST(GenerationForecast, PastOnlyReadsOnlyThePast) {
  std::vector<double> wind(96), pv(96), clear(96);
  for (int h = 0; h < 96; ++h) {
    wind[h] = 10 + 5 * std::sin(h * 0.3);
    clear[h] = std::max(0.0, 8 * std::sin((h % 24 - 6) * 3.14159 / 12));
    pv[h] = clear[h] * (0.5 + 0.4 * std::cos(h * 0.7));
  }
  const SiteEnergy a = site_of(wind, pv, clear);
  const SiteEnergy b = changed_from(a, 50, 0.0, clear);
  const GenerationForecast fa(a, kind(GenerationForecastKind::kPast), 0);
  const GenerationForecast fb(b, kind(GenerationForecastKind::kPast), 0);
  const int64_t now = kJan1 + 50 * kH;
  for (int h = 0; h < 96; ++h) {
    EXPECT_DOUBLE_EQ(fa.kwh(now, kJan1 + h * kH), fb.kwh(now, kJan1 + h * kH)) << h;
  }
}

// Before the series' first hours nothing has been seen: the past-only forecasts read only the
// hours since the start (a cyclic read would show the series' last hours, the future). Changing
// the last day, which such a read would see, changes no forecast of the first two days made
// during the first; with no hour seen, no wind and clear-sky sun; with five, their mean and
// clearness.
TEST(GenerationForecast, NothingBeforeTheSeriesStartIsRead) {
  std::vector<double> wind(72), pv(72), clear(72);
  for (int h = 0; h < 72; ++h) {
    wind[h] = 10 + h;
    clear[h] = 4.0 + h % 24;
    pv[h] = 0.5 * clear[h];
  }
  const SiteEnergy a = site_of(wind, pv, clear);
  const SiteEnergy b = changed_from(a, 48, 500.0, std::vector<double>(72, 0.0));
  SiteEnergy no_clear = a;  // solar forecast by the same hour of the last day seen
  no_clear.pv_clear_kwh = TimeSeries();
  {
    const GenerationForecast fa(a, kind(GenerationForecastKind::kPast), 0);
    const GenerationForecast fb(b, kind(GenerationForecastKind::kPast), 0);
    for (int now_h = 0; now_h < 24; ++now_h) {
      const int64_t now = kJan1 + now_h * kH;
      for (int h = now_h; h < now_h + 60; ++h) {
        const int64_t t = kJan1 + h * kH;
        EXPECT_DOUBLE_EQ(fa.kwh(now, t), fb.kwh(now, t)) << now_h << " " << h;
      }
    }
  }
  // The weather forecast at the start is the one issued: no error of an hour seen to correct.
  const GenerationForecast weather(a, kind(GenerationForecastKind::kWeather), 0);
  for (int h = 0; h < 24; ++h) {
    EXPECT_DOUBLE_EQ(weather.pv_kwh(kJan1, kJan1 + h * kH),
                     std::max(0.0, weather.forecast_pv_kwh(kJan1 + h * kH)))
        << h;
  }
  EXPECT_NE(weather.forecast_pv_kwh(kJan1 + 12 * kH), pv[12]);  // it has an error to correct
  {
    const GenerationForecast fa(a, kind(GenerationForecastKind::kPast), 0);
    const GenerationForecast fc(no_clear, kind(GenerationForecastKind::kPast), 0);
    const int64_t later = kJan1 + 10 * kH;
    EXPECT_DOUBLE_EQ(fa.wind_kwh(kJan1, later), 0.0);
    EXPECT_DOUBLE_EQ(fa.pv_kwh(kJan1, later), clear[10]);
    EXPECT_DOUBLE_EQ(fc.pv_kwh(kJan1, later), 0.0);
    // Five hours seen (10..14): the mean 12, the last 14, 6 hours on.
    const int64_t now = kJan1 + 5 * kH;
    EXPECT_NEAR(fa.wind_kwh(now, later), 12 + 2 * std::exp(-6 / 6.0), 1e-12);
    EXPECT_NEAR(fa.pv_kwh(now, later), 0.5 * clear[10], 1e-12);
    // A day seen: the same hour of the last day.
    EXPECT_DOUBLE_EQ(fc.pv_kwh(kJan1 + 24 * kH, kJan1 + 34 * kH), pv[10]);
    EXPECT_DOUBLE_EQ(fc.pv_kwh(now, kJan1 + 34 * kH), 0.0);  // hour 10 of day 1 not seen yet
  }
}

// The weather forecast over a year of hours: its 10 m wind speed error has the stated size
// (1 m/s around 8 m/s, so rarely cut at 0) and lag-one correlation (0.8); the solar output's error
// is 0.35 of the mean daylight output (30 kWh; clipped to [0, 60] only past 2.9 sigma) and night
// solar is 0. The same seed gives the same forecast and another seed another one; beyond the 48 h
// lead it is past-only; with no error it is the actual output.
TEST(GenerationForecast, WeatherForecastHasTheStatedError) {
  const int n = 8760;
  std::vector<double> speed(n, 8.0), pv(n), clear(n);
  for (int h = 0; h < n; ++h) {
    clear[h] = h % 24 >= 6 && h % 24 < 18 ? 60.0 : 0.0;
    pv[h] = clear[h] / 2;
  }
  energy::WindTurbine turbine;
  turbine.rated_kw = 100;
  SiteEnergy e;
  e.wind_kw = e.pv_kw = 100;
  e.wind_speed_ms = TimeSeries(kJan1, kH, speed);
  e.wind_kwh = TimeSeries(kJan1, kH, std::vector<double>(n, energy::wind_output_kw(turbine, 8.0)));
  e.pv_kwh = TimeSeries(kJan1, kH, pv);
  e.pv_clear_kwh = TimeSeries(kJan1, kH, clear);
  const GenerationForecast f(e, kind(GenerationForecastKind::kWeather), 3);
  double sq = 0, lag = 0, prev = 0, solar_sq = 0;
  int daylight = 0;
  for (int h = 0; h < n; ++h) {
    const int64_t t = kJan1 + h * kH;
    const double v = f.forecast_wind_speed_ms(t);
    const double err = v - 8.0;
    sq += err * err;
    if (h > 0) lag += err * prev;
    prev = err;
    const double s = f.forecast_pv_kwh(t);
    if (clear[h] == 0) {
      EXPECT_EQ(s, 0.0) << h;
    } else {
      solar_sq += (s - pv[h]) * (s - pv[h]);
      ++daylight;
    }
  }
  EXPECT_NEAR(std::sqrt(sq / n), 1.0, 0.05);
  EXPECT_NEAR(lag / sq, 0.8, 0.05);
  EXPECT_NEAR(std::sqrt(solar_sq / daylight) / 30.0, 0.35, 0.035);

  const GenerationForecast same(e, kind(GenerationForecastKind::kWeather), 3);
  GenerationForecastOptions other_seed = kind(GenerationForecastKind::kWeather);
  other_seed.seed = 43;
  const GenerationForecast other(e, other_seed, 3);
  const int64_t t = kJan1 + 100 * kH;
  EXPECT_DOUBLE_EQ(f.kwh(t, t), same.kwh(t, t));
  EXPECT_DOUBLE_EQ(f.forecast_wind_speed_ms(t), same.forecast_wind_speed_ms(t));
  EXPECT_NE(f.forecast_wind_speed_ms(t), other.forecast_wind_speed_ms(t));
  // The forecast of a coming hour is the issued one less 0.8^k of the error seen in the last
  // hour that ended, k hours before it.
  const auto issued = [&](int64_t at) {
    return energy::wind_output_kw(turbine, f.forecast_wind_speed_ms(at));
  };
  const double seen = issued(t - kH) - e.wind_kwh.at(t - kH);
  for (int k = 1; k <= 5; ++k) {
    const int64_t at = t + (k - 1) * kH;
    EXPECT_NEAR(f.wind_kwh(t, at), std::max(0.0, issued(at) - std::pow(0.8, k) * seen), 1e-9);
  }
  // 48 hours ahead and more: past-only (a constant wind stays constant).
  EXPECT_DOUBLE_EQ(f.wind_kwh(t, t + 48 * kH), e.wind_kwh.at(t));
  GenerationForecastOptions perfect = kind(GenerationForecastKind::kWeather);
  perfect.wind_speed_rmse_ms = perfect.solar_rmse = 0;
  const GenerationForecast p(e, perfect, 3);
  for (int h = 0; h < 48; ++h) {
    EXPECT_DOUBLE_EQ(p.kwh(t, t + h * kH), e.wind_kwh.at(t) + pv[100 + h]) << h;
  }
}

// On a year of real weather at the four sites of examples/fleet-energy.json (2023; 1 MW of
// solar and of wind each), forecasts made every hour for the hour a day later: the default
// weather forecast has the skill over the past-only one (1 - its mean absolute error over the
// past-only one's) that published day-ahead forecasts have over persistence, about half (here
// 40-70 % for solar, 20-70 % for wind, where SG's weak wind varies least); the exact one does
// not err; the actual output never exceeds its clear-sky output. Prints the skills
// (docs/ENERGY.md quotes them).
TEST(GenerationForecast, WeatherForecastSkillOnRealWeather) {
  const std::string data = testing::shared_data_dir();
  for (const char* zone : {"DE-LU", "US-CAL-CISO", "US-TEX-ERCO", "SG"}) {
    GREENSCHED_REQUIRE_SHARED_FILE(energy::weather_file(data, zone));
    std::optional<TimeSeries> price;
    auto e = parse_site_energy(
        nlohmann::json{{"pv_kw", 1000},
                       {"wind_kw", 1000},
                       {"weather", std::string("energy/weather2023/") + zone + "_2023.json"}},
        "w", data, price);
    ASSERT_TRUE(e.ok()) << e.error();
    const SiteEnergy& site = e.value();
    const GenerationForecast past(site, kind(GenerationForecastKind::kPast), 0);
    const GenerationForecast weather(site, kind(GenerationForecastKind::kWeather), 0);
    const GenerationForecast exact(site, kind(GenerationForecastKind::kExact), 0);
    double past_pv = 0, past_wind = 0, weather_pv = 0, weather_wind = 0, exact_err = 0;
    const int64_t start = site.pv_kwh.start_s() + 2 * 86400;
    for (int64_t now = start; now < site.pv_kwh.end_s() - 86400; now += kH) {
      const int64_t t = now + 24 * kH;
      ASSERT_LE(site.pv_kwh.at(t), site.pv_clear_kwh.at(t) + 1e-9);
      past_pv += std::abs(past.pv_kwh(now, t) - site.pv_kwh.at(t));
      past_wind += std::abs(past.wind_kwh(now, t) - site.wind_kwh.at(t));
      weather_pv += std::abs(weather.pv_kwh(now, t) - site.pv_kwh.at(t));
      weather_wind += std::abs(weather.wind_kwh(now, t) - site.wind_kwh.at(t));
      exact_err += std::abs(exact.pv_kwh(now, t) - site.pv_kwh.at(t)) +
                   std::abs(exact.wind_kwh(now, t) - site.wind_kwh.at(t));
    }
    const double solar_skill = 1 - weather_pv / past_pv;
    const double wind_skill = 1 - weather_wind / past_wind;
    std::printf("%s: day-ahead skill over past-only: solar %.0f %%, wind %.0f %%\n", zone,
                100 * solar_skill, 100 * wind_skill);
    EXPECT_GT(solar_skill, 0.4) << zone;
    EXPECT_LT(solar_skill, 0.7) << zone;
    EXPECT_GT(wind_skill, 0.2) << zone;
    EXPECT_LT(wind_skill, 0.7) << zone;
    EXPECT_EQ(exact_err, 0.0) << zone;
  }
}

TEST(GenerationForecast, OptionsAreChecked) {
  GenerationForecastOptions o;
  EXPECT_TRUE(validate(o).ok());
  o.error_correlation = 1;
  EXPECT_FALSE(validate(o).ok());
  o = {};
  o.wind_speed_rmse_ms = -0.1;
  EXPECT_FALSE(validate(o).ok());
  o = {};
  o.weather_lead_h = 0;
  EXPECT_FALSE(validate(o).ok());
  EXPECT_EQ(parse_generation_forecast("weather").value(), GenerationForecastKind::kWeather);
  EXPECT_FALSE(parse_generation_forecast("perfect").ok());
}

// Published until: at a site one hour ahead of UTC, 10:00 local knows the rest of today
// (until 00:00 local = 23:00Z); 12:00 local knows all of tomorrow (until 22:00Z next day).
TEST(DayAheadPrices, PublishedAtLocalNoon) {
  EXPECT_EQ(energy::day_ahead_published_until(kJan1 + 9 * kH, 3600), kJan1 + 23 * kH);
  EXPECT_EQ(energy::day_ahead_published_until(kJan1 + 11 * kH, 3600), kJan1 + 47 * kH);
  EXPECT_EQ(energy::day_ahead_published_until(kJan1 + 11 * kH, -8 * kH),
            kJan1 + 32 * kH);  // 03:00 local
}

// The mpc controller plans on the generation forecast it is given: a site whose past days had
// no sun expects none from the seasonal-naive forecast and buys at a price peak it could have
// covered from a stored midday surplus; told the coming sun, it stores that surplus instead.
TEST(GenerationForecast, MpcPlansOnTheForecastItIsGiven) {
  std::vector<energy::HourInput> hours(72);
  for (std::size_t t = 0; t < hours.size(); ++t) {
    const std::size_t h = t % 24;
    const bool sunny = t >= 48 && h >= 10 && h < 14;
    hours[t] =
        energy::HourInput{10.0, sunny ? 30.0 : 0.0, h >= 18 && h < 22 ? 0.5 : 0.1, 300.0, 0.0};
  }
  energy::BatterySpec b;
  b.capacity_kwh = 60;
  b.max_charge_kw = b.max_discharge_kw = 20;
  b.round_trip_efficiency = 0.9;
  b.soc_min = 0;
  b.soc_max = 1;
  b.initial_soc = 0;
  energy::ControllerOptions blind;
  blind.allow_export = false;
  blind.history_h = 48;
  energy::ControllerOptions told = blind;
  told.generation_forecast = [&](std::size_t, std::size_t h) { return hours[h].generation_kwh; };
  const auto a = energy::run_controller(energy::ControllerKind::kMpc, hours, b, blind).value();
  const auto k = energy::run_controller(energy::ControllerKind::kMpc, hours, b, told).value();
  EXPECT_LT(k.cost_usd, a.cost_usd - 1.0);
}

}  // namespace
}  // namespace greensched::multi
