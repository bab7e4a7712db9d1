// The agents' learned forecaster (multi/learned_forecaster.hpp): the model's own forecasts at
// the issue hour for the hours it covers, checked against the model called directly; no
// sample after `now` read; the same-hour forecaster wherever the model cannot answer; a site's
// holiday calendar on its series.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <thread>
#include <vector>

#include "greensched/forecast/holidays.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/multi/learned_forecaster.hpp"
#include "greensched/multi/mpc_forecast.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kMonday = 1672617600;  // 2023-01-02T00:00Z, a Monday
constexpr int64_t kHour = 3600;

// Two sites on 84 days of a weekly pattern with a little noise: prices 0.05 at night and 0.40
// from 17:00 to 20:59 UTC on weekdays, 0.10 at weekends; carbon 200-400 g/kWh by hour of day,
// the second site's a third higher. The first site has prices, the second none.
Fleet two_pattern_sites() {
  Fleet fleet;
  fleet.start_s = kMonday;
  std::vector<double> price(84 * 24), carbon(84 * 24);
  for (std::size_t i = 0; i < price.size(); ++i) {
    const std::size_t day = i / 24 % 7, hour = i % 24;
    const double wiggle = 0.01 * static_cast<double>((i * 7919) % 13) / 13.0;
    price[i] = (day >= 5 ? 0.10 : hour >= 17 && hour < 21 ? 0.40 : 0.05) + wiggle;
    carbon[i] = 300.0 + 100.0 * std::sin(static_cast<double>(hour) * std::numbers::pi / 12.0) +
                1000 * wiggle;
  }
  SiteSpec a;
  a.name = "a";
  a.price = TimeSeries(kMonday, kHour, price);
  a.carbon = TimeSeries(kMonday, kHour, carbon);
  SiteSpec b;
  b.name = "b";
  for (double& c : carbon) c *= 4.0 / 3.0;
  b.carbon = TimeSeries(kMonday, kHour, carbon);
  fleet.sites = {std::move(a), std::move(b)};
  return fleet;
}

forecast::TreeParams small_trees() {
  forecast::TreeParams t;
  t.trees = 40;
  t.max_depth = 4;
  t.eta = 0.3;
  return t;
}

std::shared_ptr<const MpcForecastModels> trained(const Fleet& fleet, int64_t window_start_s,
                                                 int max_horizon_h = 24) {
  auto m = train_mpc_forecasts(fleet, window_start_s, max_horizon_h, small_trees());
  EXPECT_TRUE(m.ok()) << m.error();
  return std::make_shared<const MpcForecastModels>(std::move(m.value()));
}

constexpr int64_t kWindow = kMonday + 56 * 86400;  // day 56: 56 days of history
// Mid-hour, 3 days into the window: samples up to the hour before are complete.
constexpr int64_t kNow = kWindow + 3 * 86400 + 5 * kHour + 1800;

TEST(LearnedForecaster, SitesSeriesCarryTheirHolidayCalendar) {
  // A site naming a zone of the built-in holiday calendar gives its carbon and price series that
  // zone's holidays; a site naming none gives none (its holiday features are missing).
  Fleet fleet = two_pattern_sites();
  fleet.sites[0].holidays = "DE-LU";
  std::vector<forecast::Series> carbon, price;
  fleet_forecast_series(fleet, carbon, price);
  ASSERT_EQ(carbon.size(), 2u);
  const auto& de = forecast::builtin_holidays().zones.at("DE-LU");
  EXPECT_EQ(carbon[0].holidays, de);
  EXPECT_EQ(price[0].holidays, de);
  EXPECT_LT(carbon[0].holidays_from_day, carbon[0].holidays_to_day);
  EXPECT_TRUE(carbon[1].holidays.empty());
  EXPECT_EQ(carbon[1].holidays_from_day, carbon[1].holidays_to_day);
}

TEST(LearnedForecaster, AnswersTheModelsForecastForTheHourAndHorizon) {
  const Fleet fleet = two_pattern_sites();
  const auto models = trained(fleet, kWindow);
  ASSERT_TRUE(models->price && models->carbon);
  const auto f = make_learned_forecaster(fleet, models);
  std::vector<int> horizons(24);
  for (int h = 1; h <= 24; ++h) horizons[static_cast<std::size_t>(h - 1)] = h;
  // The hour holding kNow is horizon 1 (its sample is not complete yet).
  const int64_t hour_of_now = kNow - 1800;
  for (std::size_t site = 0; site < 2; ++site) {
    auto carbon = models->carbon->forecast({&models->carbon_series[site], nullptr}, kNow, horizons);
    ASSERT_TRUE(carbon.ok()) << carbon.error();
    for (int h = 1; h <= 24; ++h) {
      const int64_t t = hour_of_now + (h - 1) * kHour;
      const double expected = std::max(0.0, carbon.value()[static_cast<std::size_t>(h - 1)]);
      EXPECT_EQ(f->at(fleet.sites[site].carbon, kNow, std::max(t, kNow)), expected) << h;
      EXPECT_EQ(f->at(fleet.sites[site].carbon, kNow, t + 1234), expected) << h;
    }
  }
  auto price = models->price->forecast({&models->price_series[0], nullptr}, kNow, horizons);
  ASSERT_TRUE(price.ok()) << price.error();
  for (int h = 1; h <= 24; ++h) {
    EXPECT_EQ(f->at(*fleet.sites[0].price, kNow, hour_of_now + h * kHour - 1),
              price.value()[static_cast<std::size_t>(h - 1)])
        << h;
  }
  // The mean over [now, now + 3 h): half of hour 1, hours 2 and 3, half of hour 4.
  const auto& p = price.value();
  const double mean = (0.5 * p[0] + p[1] + p[2] + 0.5 * p[3]) / 3.0;
  EXPECT_NEAR(f->mean(*fleet.sites[0].price, kNow, kNow, kNow + 3 * kHour), mean, 1e-12);
  // The learned forecast is not the same-hour one (the test would prove nothing if it were).
  const auto same_hour = make_same_hour_forecaster();
  EXPECT_NE(f->at(*fleet.sites[0].price, kNow, kNow + 10 * kHour),
            same_hour->at(*fleet.sites[0].price, kNow, kNow + 10 * kHour));
  // A sample complete at now is itself.
  EXPECT_EQ(f->at(*fleet.sites[0].price, kNow, kNow - 5 * kHour),
            fleet.sites[0].price->at(kNow - 5 * kHour));
}

// Every sample after the hour holding now changed (tripled): the models, trained on samples
// before the window, and every forecast at now are the same.
TEST(LearnedForecaster, NeverReadsASampleAfterNow) {
  const Fleet fleet = two_pattern_sites();
  Fleet changed = fleet;
  const auto first_unknown = static_cast<std::size_t>((kNow - kMonday) / kHour);
  for (SiteSpec& site : changed.sites) {
    std::vector<double> c = site.carbon.values();
    for (std::size_t i = first_unknown; i < c.size(); ++i) c[i] *= 3.0;
    site.carbon = TimeSeries(site.carbon.start_s(), kHour, c);
    if (site.price) {
      std::vector<double> p = site.price->values();
      for (std::size_t i = first_unknown; i < p.size(); ++i) p[i] *= 3.0;
      site.price = TimeSeries(site.price->start_s(), kHour, p);
    }
  }
  const auto f = make_learned_forecaster(fleet, trained(fleet, kWindow));
  const auto g = make_learned_forecaster(changed, trained(changed, kWindow));
  int compared = 0;
  for (std::size_t site = 0; site < 2; ++site) {
    for (int64_t t = kNow; t < kNow + 60 * kHour; t += 1700) {
      EXPECT_EQ(f->at(fleet.sites[site].carbon, kNow, t),
                g->at(changed.sites[site].carbon, kNow, t));
      EXPECT_EQ(f->mean(fleet.sites[site].carbon, kNow, kNow, t + 1),
                g->mean(changed.sites[site].carbon, kNow, kNow, t + 1));
      if (site == 0) {
        EXPECT_EQ(f->at(*fleet.sites[0].price, kNow, t), g->at(*changed.sites[0].price, kNow, t));
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
  // The changed samples are read once they are the past.
  EXPECT_NE(f->at(*fleet.sites[0].price, kNow + 30 * kHour, kNow + 31 * kHour),
            g->at(*changed.sites[0].price, kNow + 30 * kHour, kNow + 31 * kHour));
}

// The runs of a window share one LearnedForecasts: whatever order the runs ask in, and from
// however many threads, each reads what a forecaster of its own would have read.
TEST(LearnedForecaster, SharedForecastsAnswerAsForecastsOfItsOwn) {
  const Fleet fleet = two_pattern_sites();
  const auto models = trained(fleet, kWindow);
  const auto shared = std::make_shared<const LearnedForecasts>(models);
  std::vector<int64_t> nows;
  for (int64_t now = kWindow - 2 * kHour; now < kWindow + 5 * 86400; now += 5 * kHour + 900) {
    nows.push_back(now);
  }
  // What each run reads: every site's carbon and the first site's price, at, and means.
  const auto reads = [&](const Forecaster& f, bool backwards) {
    std::vector<double> out;
    for (std::size_t k = 0; k < nows.size(); ++k) {
      const int64_t now = nows[backwards ? nows.size() - 1 - k : k];
      for (int64_t ahead = 0; ahead < 30 * kHour; ahead += 7 * kHour) {
        out.push_back(f.at(fleet.sites[0].carbon, now, now + ahead));
        out.push_back(f.at(fleet.sites[1].carbon, now, now + ahead));
        out.push_back(f.at(*fleet.sites[0].price, now, now + ahead));
        out.push_back(f.mean(*fleet.sites[0].price, now, now, now + ahead + kHour));
      }
    }
    if (backwards) {  // in the forwards order, for comparing
      std::vector<double> forwards;
      const std::size_t per_now = out.size() / nows.size();
      for (std::size_t k = nows.size(); k-- > 0;) {
        forwards.insert(forwards.end(), out.begin() + static_cast<std::ptrdiff_t>(k * per_now),
                        out.begin() + static_cast<std::ptrdiff_t>((k + 1) * per_now));
      }
      return forwards;
    }
    return out;
  };
  const std::vector<double> alone = reads(*make_learned_forecaster(fleet, models), false);
  // The first shared run asks from the end of the window back; the second reads what it left.
  EXPECT_EQ(reads(*make_learned_forecaster(fleet, shared), true), alone);
  EXPECT_EQ(reads(*make_learned_forecaster(fleet, shared), false), alone);
  // Four threads on a fresh shared set, two in each order.
  const auto fresh = std::make_shared<const LearnedForecasts>(models);
  std::vector<std::vector<double>> got(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] { got[i] = reads(*make_learned_forecaster(fleet, fresh), i % 2); });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, alone);
  // The learned answers differ from the same-hour ones somewhere (else this proves nothing).
  EXPECT_NE(alone, reads(*make_same_hour_forecaster(), false));
}

TEST(LearnedForecaster, FallsBackToSameHourWhereTheModelCannotAnswer) {
  const Fleet fleet = two_pattern_sites();
  const auto same_hour = make_same_hour_forecaster();
  const TimeSeries& price = *fleet.sites[0].price;
  const TimeSeries& carbon = fleet.sites[1].carbon;
  const auto same = [&](const Forecaster& f, const TimeSeries& s, int64_t now, int64_t t) {
    return f.at(s, now, t) == same_hour->at(s, now, t) &&
           f.mean(s, now, t, t + 7 * kHour) == same_hour->mean(s, now, t, t + 7 * kHour);
  };

  // Too little history before the window (20 days of data): no model, same-hour everywhere.
  const int64_t early = kMonday + 20 * 86400;
  const auto none = trained(fleet, early);
  EXPECT_FALSE(none->price || none->carbon);
  const auto f_none = make_learned_forecaster(fleet, none);
  for (int64_t t = early + 1800; t < early + 48 * kHour; t += 3 * kHour) {
    EXPECT_TRUE(same(*f_none, price, early + 1800, t)) << t;
    EXPECT_TRUE(same(*f_none, carbon, early + 1800, t)) << t;
  }

  const auto models = trained(fleet, kWindow);
  const auto f = make_learned_forecaster(fleet, models);
  // Beyond the 24 horizons: from the hour 24 h after the hour holding now.
  const int64_t hour_of_now = kNow - 1800;
  for (int64_t t = hour_of_now + 24 * kHour; t < hour_of_now + 72 * kHour; t += 2 * kHour) {
    EXPECT_EQ(f->at(price, kNow, t), same_hour->at(price, kNow, t)) << t;
    EXPECT_EQ(f->at(carbon, kNow, t), same_hour->at(carbon, kNow, t)) << t;
  }
  EXPECT_NE(f->at(price, kNow, hour_of_now + 23 * kHour),
            same_hour->at(price, kNow, hour_of_now + 23 * kHour));
  // A mean across the last horizon: the model's hours, then the same-hour ones.
  const int64_t from = hour_of_now + 22 * kHour, to = hour_of_now + 30 * kHour;
  const double expected = (f->at(price, kNow, from) + f->at(price, kNow, from + kHour) +
                           6.0 * same_hour->mean(price, kNow, from + 2 * kHour, to)) /
                          8.0;
  EXPECT_NEAR(f->mean(price, kNow, from, to), expected, 1e-12);

  // Before the models' training end (the warm-up before the window) and on a series the
  // models were not built from (the same samples, built apart): same-hour.
  EXPECT_TRUE(same(*f, price, kWindow - 5 * kHour, kWindow));
  const TimeSeries copy_built_apart(price.start_s(), price.step_s(), price.values());
  EXPECT_TRUE(same(*f, copy_built_apart, kNow, kNow + 3 * kHour));
  EXPECT_TRUE(f->knows_a_day(price, kNow));
  EXPECT_FALSE(f->knows_a_day(price, kMonday + kHour));
}

}  // namespace
}  // namespace greensched::multi
