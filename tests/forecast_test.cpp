// The forecast library: baselines and features on tiny series by hand, the error measures on
// known numbers, the holiday table and features, no look-ahead, determinism of training, a learned
// model that must beat the seasonal-naive forecast on a series with a daily pattern and a trend,
// the zone guard that falls back to seasonal-naive where it is exact, and a short rolling-origin
// evaluation on the public carbon data (and at several issue hours a day).
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/forecast/arrivals.hpp"
#include "greensched/forecast/baselines.hpp"
#include "greensched/forecast/evaluate.hpp"
#include "greensched/forecast/features.hpp"
#include "greensched/forecast/holidays.hpp"
#include "greensched/forecast/learned.hpp"
#include "greensched/multi/series_readers.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"
#include "test_pod.hpp"

namespace greensched::forecast {
namespace {

constexpr int64_t kT0 = 1688169600;  // 2023-07-01 00:00 UTC, a Saturday

// Values 0, 1, 2, ...: sample i is i.
Series ramp_series(std::size_t n) {
  Series s;
  s.name = "ramp";
  s.start_s = kT0;
  for (std::size_t i = 0; i < n; ++i) s.values.push_back(static_cast<double>(i));
  return s;
}

// A daily cycle with a slow trend and some noise (deterministic), level around 200.
Series daily_series(std::size_t n, const std::string& name, double level, double trend,
                    uint64_t seed) {
  Series s;
  s.name = name;
  s.start_s = kT0;
  uint64_t state = seed;
  double noise = 0;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53 - 0.5;
    noise = 0.7 * noise + 0.3 * 40.0 * u;  // correlated hour to hour
    const double hour = static_cast<double>(i % 24);
    s.values.push_back(level + trend * static_cast<double>(i) +
                       60.0 * std::sin(2 * std::numbers::pi * hour / 24.0) + noise);
  }
  return s;
}

TEST(ForecastSeries, KnownCountAndTargets) {
  const Series s = ramp_series(10);
  EXPECT_EQ(known_count(s, kT0 - 1), 0u);
  EXPECT_EQ(known_count(s, kT0), 0u);
  EXPECT_EQ(known_count(s, kT0 + 3599), 0u);  // hour 0 not yet complete
  EXPECT_EQ(known_count(s, kT0 + 3600), 1u);
  EXPECT_EQ(known_count(s, kT0 + 100 * 3600), 10u);
  EXPECT_EQ(target_index(3, 1), 3u);
  Series bad = s;
  bad.values[4] = std::nan("");
  EXPECT_FALSE(validate_series(bad).ok());
  bad = s;
  bad.step_s = 1800;
  EXPECT_FALSE(validate_series(bad).ok());
  bad = s;
  bad.start_s += 1800;  // stamped at :30 (IN-WE's weather): still hourly
  EXPECT_TRUE(validate_series(bad).ok());
}

PodSpec timed_pod(const std::string& name, int gpus, int32_t milli, Qos qos, int64_t created,
                  int64_t deleted) {
  PodSpec p = testing::test_pod(name, 1000, gpus, milli);
  p.qos = qos;
  p.creation_time = created;
  p.deletion_time = deleted;
  return p;
}

TEST(ForecastArrivals, GpuHoursAndJobsPerHourByClass) {
  const std::vector<PodSpec> pods = {
      timed_pod("a", 2, 1000, Qos::kLS, 100, 100 + 3 * 3600),        // hour 0: 6 GPU-h, LS
      timed_pod("b", 1, 500, Qos::kBE, 3599, 3599 + 1800),           // hour 0: 0.25 GPU-h, BE
      timed_pod("c", 1, 1000, Qos::kGuaranteed, 7300, 7300 + 3600),  // hour 2: 1 GPU-h, LS
      timed_pod("d", 0, 0, Qos::kBurstable, 7400, 9000),             // hour 2: no GPU, BE
      timed_pod("e", 8, 1000, Qos::kBE, 3 * 3600, 3 * 3600 + 900),   // hour 3: 2 GPU-h, BE
  };
  auto ls = arrival_series(pods, ArrivalClass::kLatencySensitive, ArrivalUnit::kGpuHours, "t");
  ASSERT_TRUE(ls.ok()) << ls.status().message();
  EXPECT_EQ(ls.value().name, "LS");
  EXPECT_EQ(ls.value().start_s, 0);
  EXPECT_EQ(ls.value().values, (std::vector<double>{6, 0, 1, 0}));
  auto be = arrival_series(pods, ArrivalClass::kBestEffort, ArrivalUnit::kGpuHours, "t");
  ASSERT_TRUE(be.ok());
  EXPECT_EQ(be.value().values, (std::vector<double>{0.25, 0, 0, 2}));
  auto jobs = arrival_series(pods, ArrivalClass::kAll, ArrivalUnit::kJobs, "t");
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs.value().name, "all");
  EXPECT_EQ(jobs.value().values, (std::vector<double>{2, 0, 2, 1}));
  ArrivalClass c = ArrivalClass::kAll;
  EXPECT_TRUE(parse_arrival_class("BE", c));
  EXPECT_EQ(c, ArrivalClass::kBestEffort);
  EXPECT_FALSE(parse_arrival_class("be", c));

  // A list without times (the multigpu schema) is an error naming the file and the pod.
  std::vector<PodSpec> untimed = pods;
  untimed[3].creation_time = -1;
  auto bad = arrival_series(untimed, ArrivalClass::kAll, ArrivalUnit::kJobs, "list.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("list.csv: pod d"), std::string::npos)
      << bad.status().message();
}

TEST(ForecastBaselines, HandComputedOnARamp) {
  const Series s = ramp_series(100);
  const int64_t now = kT0 + 50 * 3600;  // samples 0..49 known
  const std::vector<int> hs = {1, 24, 25, 48, 49};
  // seasonal-naive: i - 24 d, d = (h - 1) / 24 + 1; i = 49 + h.
  const auto sn = seasonal_naive(s, now, hs);
  EXPECT_EQ(sn, (std::vector<double>{26, 49, 26, 49, 26}));
  // same-hour over 2 days: mean of i - 24 d and i - 24 (d + 1).
  const auto sh = same_hour(s, now, hs, 2);
  EXPECT_EQ(sh, (std::vector<double>{14, 37, 14, 37, 14}));
  // With 7 days asked but only the days the series has: h = 1, i = 50: 26, 2 -> 14.
  EXPECT_EQ(same_hour(s, now, std::vector<int>{1}, 7), (std::vector<double>{14}));
  EXPECT_EQ(oracle(s, now, std::vector<int>{1, 50, 51}).at(0), 50);
  EXPECT_EQ(oracle(s, now, std::vector<int>{1, 50, 51}).at(1), 99);
  EXPECT_TRUE(std::isnan(oracle(s, now, std::vector<int>{51}).at(0)));
  // Nothing a day back: NaN, never a read of the future.
  EXPECT_TRUE(std::isnan(seasonal_naive(s, kT0 + 10 * 3600, std::vector<int>{1}).at(0)));
}

TEST(ForecastFeatures, RowOfARampByHand) {
  const Series s = ramp_series(400);
  const std::size_t known = 300;  // samples 0..299
  const double scale = scale_at(s, known);
  EXPECT_DOUBLE_EQ(scale, (132.0 + 299.0) / 2.0);  // mean of 132..299
  std::vector<float> row;
  append_row(s, nullptr, known, 30, scale, 3.0, row);
  ASSERT_EQ(row.size(), kBaseFeatures);
  const std::size_t i = 329;  // target
  const auto sc = [&](double v) { return static_cast<float>(v / scale); };
  EXPECT_EQ(row[0], 30);
  // Target 2023-07-01 + 329 h = 2023-07-14 17:00 UTC, a Friday (4).
  EXPECT_EQ(row[1], 17);
  EXPECT_EQ(row[2], 4);
  EXPECT_EQ(row[3], sc(299));
  EXPECT_EQ(row[4], sc(298));
  EXPECT_EQ(row[5], sc(276));
  EXPECT_EQ(row[6], sc(287.5));                                 // mean of 276..299
  EXPECT_FLOAT_EQ(row[7], sc(std::sqrt(47.9166666666666667)));  // sd of 24 consecutive integers
  EXPECT_EQ(row[8], sc(i - 48));                                // d = 2
  EXPECT_EQ(row[9], sc(i - 72));
  EXPECT_EQ(row[10], sc(i - 168));
  EXPECT_FLOAT_EQ(row[11], sc(i - 48 - 72));  // mean of i - 48 .. i - 192 step 24
  EXPECT_EQ(row[12], sc(215.5));              // signed mean of 132..299
  EXPECT_EQ(row[13], sc(24));                 // trend
  // Local time moves the calendar features.
  Series local = s;
  local.utc_offset_s = 9 * 3600;
  row.clear();
  append_row(local, nullptr, known, 30, scale, 3.0, row);
  EXPECT_EQ(row[1], 2);  // 02:00 on Saturday
  EXPECT_EQ(row[2], 5);
  // No calendar: the holiday features are missing.
  EXPECT_TRUE(std::isnan(row[18]) && std::isnan(row[19]));
  // A calendar whose one holiday is local 2023-07-13 (day 19551), the day the base reads
  // (d = 2 days before Saturday 2023-07-15).
  local.holidays = {19551};
  local.holidays_from_day = 19358;  // 2023-01-01
  local.holidays_to_day = 19723;    // 2024-01-01
  row.clear();
  append_row(local, nullptr, known, 30, scale, 3.0, row);
  EXPECT_EQ(row[18], 0);
  EXPECT_EQ(row[19], 1);
  local.holidays = {19553};  // the target's own day
  row.clear();
  append_row(local, nullptr, known, 30, scale, 3.0, row);
  EXPECT_EQ(row[18], 1);
  EXPECT_EQ(row[19], 0);
  local.holidays_to_day = 19553;  // the calendar ends before the target's day
  row.clear();
  append_row(local, nullptr, known, 30, scale, 3.0, row);
  EXPECT_TRUE(std::isnan(row[18]));
  EXPECT_EQ(row[19], 0);
}

TEST(ForecastHolidays, ParsesTheTableAndNamesItsErrors) {
  auto c = parse_holidays(
      "zone,date,name\nXX,2023-12-25,Christmas\nXX,2023-12-25,\"Christmas, again\"\n"
      "XX,2021-01-01,New Year\nYY,2023-07-04,Independence Day\n",
      "h.csv");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c.value().first_year, 2021);
  EXPECT_EQ(c.value().last_year, 2023);
  EXPECT_EQ(c.value().zones.at("XX"), (std::vector<int32_t>{18628, 19716}));
  EXPECT_EQ(c.value().zones.at("YY"), (std::vector<int32_t>{19542}));
  Series s;
  EXPECT_FALSE(attach_holidays(c.value(), "ZZ", s));
  EXPECT_TRUE(s.holidays.empty());
  ASSERT_TRUE(attach_holidays(c.value(), "XX", s));
  EXPECT_EQ(s.holidays.size(), 2u);
  EXPECT_EQ(s.holidays_from_day, 18628);  // 2021-01-01
  EXPECT_EQ(s.holidays_to_day, 19723);    // 2024-01-01
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"zone,day\nXX,2023-01-01\n", "h.csv:1: the header must name columns zone and date"},
           {"zone,date\nXX,2023-01-01\nXX,1/2/2023\n", "h.csv:3: date '1/2/2023'"},
           {"zone,date\nXX,2023-02-30\n", "h.csv:2: date '2023-02-30'"},
           {"zone,date\n,2023-01-01\n", "h.csv:2: empty zone"},
           {"zone,date\nXX\n", "h.csv:2: 1 fields"},
           {"zone,date\n", "h.csv: no holidays"}}) {
    auto bad = parse_holidays(text, "h.csv");
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.status().message().find(want), std::string::npos) << bad.status().message();
  }
  // The built-in table: every zone of the public data, 2020 to 2030.
  const HolidayCalendar& b = builtin_holidays();
  EXPECT_EQ(b.first_year, 2020);
  EXPECT_EQ(b.last_year, 2030);
  EXPECT_EQ(b.zones.size(), 23u);
  const auto is_holiday = [&](const char* zone, const char* date) {
    const auto& days = b.zones.at(zone);
    const auto day = static_cast<int32_t>(parse_utc_time(date).value() / kDayS);
    return std::binary_search(days.begin(), days.end(), day);
  };
  EXPECT_TRUE(is_holiday("DE-LU", "2023-10-03"));        // German Unity Day
  EXPECT_TRUE(is_holiday("US-TEX-ERCO", "2023-11-23"));  // Thanksgiving
  EXPECT_TRUE(is_holiday("GB", "2023-05-08"));           // the Coronation bank holiday
  EXPECT_FALSE(is_holiday("GB", "2023-05-09"));
  EXPECT_TRUE(is_holiday("JP-TK", "2023-05-03"));  // Constitution Memorial Day
}

TEST(ForecastMetrics, KnownNumbers) {
  // MAPE and MAE over hours, the 1 % floor, the saving-weighted error on one day.
  ErrorSums sums(/*mape_floor=*/1.0, /*k_lowest=*/1);
  std::vector<double> actual(24, 100.0), fc(24, 100.0);
  actual[3] = 50;   // the best hour
  fc[3] = 60;       // found, with a 20 % error
  fc[7] = 80;       // an error of 20 on a 100 hour
  actual[9] = 0.5;  // below the floor: not in the MAPE
  fc[9] = 10;
  sums.add(fc, actual);
  const Metrics m = sums.finish();
  EXPECT_EQ(m.hours, 24u);
  EXPECT_EQ(m.mape_hours, 23u);
  EXPECT_NEAR(m.mae, (10.0 + 20.0 + 9.5) / 24.0, 1e-12);
  EXPECT_NEAR(m.mape_pct, 100.0 * (0.2 + 0.2) / 23.0, 1e-12);
  // The lowest forecast is hour 9 (10): actual 0.5, below the floor: no chosen hour in the
  // MAPE; the best actual hour is 9 too, so nothing was missed.
  EXPECT_TRUE(std::isnan(m.sel_mape_pct));
  EXPECT_NEAR(m.missed_saving_pct, 0.0, 1e-12);

  ErrorSums miss(1.0, 1);
  std::vector<double> a2(24, 100.0), f2(24, 100.0);
  a2[3] = 50;
  f2[5] = 40;  // picks hour 5 (actual 100) instead of 3 (50)
  miss.add(f2, a2);
  const Metrics m2 = miss.finish();
  EXPECT_NEAR(m2.sel_mape_pct, 60.0, 1e-12);  // hour 5: 40 vs 100
  // Chosen 100, best 50, day mean (23 x 100 + 50) / 24: worse than the day's mean, over 100 %.
  EXPECT_NEAR(m2.missed_saving_pct, 100.0 * 50.0 / ((2350.0 / 24.0) - 50.0), 1e-9);
}

TEST(ForecastMetrics, SelectedHoursError) {
  ErrorSums sums(1.0, 2);
  std::vector<double> a(24, 100.0), f(24, 100.0);
  f[1] = 50;  // actual 100: 50 %
  f[2] = 90;  // actual 100: 10 %
  a[4] = 40;  // missed
  sums.add(f, a);
  const Metrics m = sums.finish();
  EXPECT_NEAR(m.sel_mape_pct, 30.0, 1e-12);
  // chosen mean 100, best mean (40 + 100) / 2 = 70, day mean (23 * 100 + 40) / 24 = 97.5.
  EXPECT_NEAR(m.missed_saving_pct, 100.0 * 30.0 / 27.5, 1e-9);
}

TrainOptions small_training(int64_t until) {
  TrainOptions t;
  t.trees.trees = 40;
  t.trees.max_depth = 4;
  t.trees.eta = 0.2;
  t.issue_every_h = 24;
  t.max_horizon_h = 48;
  t.until_s = until;
  t.kind = "test";
  return t;
}

TEST(ForecastLearned, NoLookAhead) {
  const Series s = daily_series(24 * 40, "a", 200, 0.05, 7);
  const ZoneSeries zs{&s, nullptr};
  auto model =
      LearnedModel::train(std::span<const ZoneSeries>(&zs, 1), small_training(kT0 + 30 * kDayS));
  ASSERT_TRUE(model.ok()) << model.status().message();
  const int64_t now = kT0 + 32 * kDayS + 5 * 3600;
  const std::vector<int> hs = {1, 2, 24, 48};
  auto before = model.value().forecast(zs, now, hs);
  ASSERT_TRUE(before.ok()) << before.status().message();
  Series changed = s;
  for (std::size_t i = known_count(s, now); i < changed.size(); ++i) changed.values[i] = 1e6;
  const ZoneSeries zc{&changed, nullptr};
  auto after = model.value().forecast(zc, now, hs);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(before.value(), after.value());
  EXPECT_EQ(seasonal_naive(s, now, hs), seasonal_naive(changed, now, hs));
  EXPECT_EQ(same_hour(s, now, hs), same_hour(changed, now, hs));
  // Training reads nothing at or after until_s either: the same model from a changed future.
  Series late = s;
  for (std::size_t i = known_count(s, kT0 + 30 * kDayS); i < late.size(); ++i) late.values[i] = -5;
  const ZoneSeries zl{&late, nullptr};
  auto model2 =
      LearnedModel::train(std::span<const ZoneSeries>(&zl, 1), small_training(kT0 + 30 * kDayS));
  ASSERT_TRUE(model2.ok());
  EXPECT_EQ(model.value().bytes().value(), model2.value().bytes().value());
}

TEST(ForecastLearned, DeterministicModelFiles) {
  const Series s = daily_series(24 * 40, "a", 200, 0.05, 11);
  const ZoneSeries zs{&s, nullptr};
  TrainOptions t = small_training(kT0 + 35 * kDayS);
  t.trees.subsample = 0.8;  // the seed matters
  auto a = LearnedModel::train(std::span<const ZoneSeries>(&zs, 1), t);
  auto b = LearnedModel::train(std::span<const ZoneSeries>(&zs, 1), t);
  ASSERT_TRUE(a.ok() && b.ok());
  const testing::ScratchDir dir("forecast-determinism");
  const std::string pa = dir.path() + "/a.ubj", pb = dir.path() + "/b.ubj";
  ASSERT_TRUE(a.value().save(pa).ok());
  ASSERT_TRUE(b.value().save(pb).ok());
  EXPECT_EQ(read_file(pa).value(), read_file(pb).value());
  // Loading keeps what the file says and forecasts the same.
  auto loaded = LearnedModel::load(pa);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded.value().trained_until_s(), t.until_s);
  EXPECT_EQ(loaded.value().max_horizon_h(), 48);
  const std::vector<int> hs = {1, 12, 48};
  EXPECT_EQ(loaded.value().forecast(zs, kT0 + 36 * kDayS, hs).value(),
            a.value().forecast(zs, kT0 + 36 * kDayS, hs).value());
  // The zones it was trained on; a series of another name still forecasts.
  EXPECT_EQ(loaded.value().zones(), (std::vector<std::string>{"a"}));
  Series other = s;
  other.name = "elsewhere";
  const ZoneSeries zo{&other, nullptr};
  auto elsewhere = loaded.value().forecast(zo, kT0 + 36 * kDayS, hs);
  ASSERT_TRUE(elsewhere.ok());
  for (double v : elsewhere.value()) EXPECT_TRUE(std::isfinite(v));
  // Another seed: another model.
  t.trees.seed = 43;
  auto c = LearnedModel::train(std::span<const ZoneSeries>(&zs, 1), t);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c.value().bytes().value(), a.value().bytes().value());
  // Not a model: an error naming the file.
  ASSERT_TRUE(write_text_file(dir.path() + "/junk.ubj", "not a model").ok());
  auto junk = LearnedModel::load(dir.path() + "/junk.ubj");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("junk.ubj"), std::string::npos);
}

TEST(ForecastLearned, BeatsSeasonalNaiveOnADailyPatternWithTrend) {
  // Two zones of different levels, 120 days; evaluated by rolling origin over the last 40. The
  // noise is independent from day to day, so the seasonal-naive forecast carries two days' noise
  // and the best forecast (the pattern plus the trend) one: a model that learned the pattern is
  // better by more than 5 %; one that learned nothing is seasonal-naive itself (its base).
  std::vector<EvalZone> zones(2);
  zones[0].series = daily_series(24 * 120, "low", 80, 0.02, 3);
  zones[1].series = daily_series(24 * 120, "high", 400, -0.03, 5);
  EvalOptions o;
  o.start_s = kT0 + 78 * kDayS;
  o.days = 40;
  o.horizons = {24};
  o.retrain_days = 20;
  o.train = small_training(0);
  o.train.trees = TreeParams{};  // the defaults: 200 trees of depth 6, eta 0.05
  o.train.max_horizon_h = 24;
  auto r = evaluate(zones, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (std::size_t z = 0; z < 2; ++z) {
    const auto& m = r.value().metrics[z][0];
    EXPECT_LT(m[0].mape_pct, 0.95 * m[1].mape_pct)
        << zones[z].series.name << ": learned " << m[0].mape_pct << " % vs seasonal-naive "
        << m[1].mape_pct << " %, same-hour " << m[2].mape_pct << " %";
    EXPECT_EQ(m[3].mape_pct, 0.0);
    EXPECT_EQ(m[0].hours, 40u * 24u);
  }
  // Every forecast came from a model trained on data before its issue day.
  ASSERT_EQ(r.value().issues.size(), 80u);
  for (const IssueRecord& issue : r.value().issues) {
    EXPECT_LE(issue.model_trained_until_s, issue.issue_s);
    EXPECT_EQ(floor_mod(issue.issue_s, kDayS), 0);
  }
  ASSERT_EQ(r.value().retrains.size(), 2u);
  EXPECT_EQ(r.value().retrains[1].trained_until_s, o.start_s + 20 * kDayS);
  EXPECT_GT(r.value().retrains[1].rows, r.value().retrains[0].rows);
}

TEST(ForecastLearned, ZoneGuardKeepsSeasonalNaiveWhereItIsExact) {
  // Zone "periodic" repeats one day exactly: the seasonal-naive forecast has no error there, so
  // the guard must give the trees' correction no weight and the model forecast that day again.
  // Zone "noisy" is the pattern with a trend and noise, where the trees beat seasonal-naive
  // (BeatsSeasonalNaiveOnADailyPatternWithTrend): the guard keeps some of their correction.
  Series periodic;
  periodic.name = "periodic";
  periodic.start_s = kT0;
  for (std::size_t i = 0; i < 24 * 70; ++i) {
    periodic.values.push_back(200 + 60 * std::sin(2 * std::numbers::pi * (i % 24) / 24.0));
  }
  const Series noisy = daily_series(24 * 70, "noisy", 150, 0.05, 9);
  const std::vector<ZoneSeries> zs = {{&periodic, nullptr}, {&noisy, nullptr}};
  TrainOptions t = small_training(kT0 + 60 * kDayS);
  t.validation_days = 14;
  auto guarded = LearnedModel::train(zs, t);
  ASSERT_TRUE(guarded.ok()) << guarded.status().message();
  ASSERT_TRUE(guarded.value().guarded());
  ASSERT_EQ(guarded.value().correction_weights().size(), 2u);
  EXPECT_EQ(guarded.value().correction_weights()[0], 0.0);
  EXPECT_GT(guarded.value().correction_weights()[1], 0.0);
  const int64_t now = kT0 + 62 * kDayS;
  const std::vector<int> hs = {1, 7, 24, 30, 48};
  const auto f = guarded.value().forecast(zs[0], now, hs);
  ASSERT_TRUE(f.ok());
  const std::vector<double> naive = seasonal_naive(periodic, now, hs);
  for (std::size_t k = 0; k < hs.size(); ++k) EXPECT_NEAR(f.value()[k], naive[k], 1e-4);

  // The file keeps the weights.
  const testing::ScratchDir dir("forecast-guard");
  ASSERT_TRUE(guarded.value().save(dir.path() + "/g.ubj").ok());
  auto loaded = LearnedModel::load(dir.path() + "/g.ubj");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded.value().guarded());
  EXPECT_EQ(loaded.value().correction_weights(), guarded.value().correction_weights());
  EXPECT_EQ(loaded.value().forecast(zs[1], now, hs).value(),
            guarded.value().forecast(zs[1], now, hs).value());

  // Off, or with more validation days than days before them: every weight 1, and the model is
  // the one trained on all the data.
  t.validation_days = 0;
  auto plain = LearnedModel::train(zs, t);
  t.validation_days = 40;
  auto skipped = LearnedModel::train(zs, t);
  ASSERT_TRUE(plain.ok() && skipped.ok());
  for (const auto* m : {&plain.value(), &skipped.value()}) {
    EXPECT_FALSE(m->guarded());
    EXPECT_EQ(m->correction_weights(), (std::vector<double>{1.0, 1.0}));
  }
  EXPECT_EQ(plain.value().bytes().value(), skipped.value().bytes().value());
  t.validation_days = -1;
  EXPECT_FALSE(LearnedModel::train(zs, t).ok());

  // A weight list that does not fit the zones is refused by name.
  Matrix x;
  x.cols = 1;
  x.values = {0, 1, 2, 3};
  TreeParams two;
  two.trees = 2;
  auto booster = Booster::train(x, {0, 1, 2, 3}, two,
                                {{"greensched_feature_version", std::to_string(kFeatureVersion)},
                                 {"greensched_trained_until", "0"},
                                 {"greensched_max_horizon_h", "24"},
                                 {"greensched_exog_columns", "0"},
                                 {"greensched_rows", "4"},
                                 {"greensched_zones", "a,b"},
                                 {"greensched_correction_weights", "0.5,2"}});
  ASSERT_TRUE(booster.ok()) << booster.status().message();
  ASSERT_TRUE(booster.value().save(dir.path() + "/bad.ubj").ok());
  auto bad = LearnedModel::load(dir.path() + "/bad.ubj");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("greensched_correction_weights"), std::string::npos);
}

TEST(ForecastEvaluate, RefusesTooLittleHistory) {
  std::vector<EvalZone> zones(1);
  zones[0].series = daily_series(24 * 20, "short", 100, 0, 1);
  EvalOptions o;
  o.start_s = kT0 + 5 * kDayS;
  o.days = 3;
  o.horizons = {24};
  o.train = small_training(0);
  auto r = evaluate(zones, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("short"), std::string::npos);
}

TEST(ForecastEvaluate, IssuesAtEachIssueHourAndRefusesBadHours) {
  // On a ramp (sample i is i) the seasonal-naive forecast of every hour is 24 low and the
  // same-hour forecast (the mean over 7 days back) 96 low, whatever the issue hour: 3 days
  // issued at 00, 06 and 13 UTC give 9 issues of 24 hours each, every one scored.
  std::vector<EvalZone> zones(1);
  zones[0].series = ramp_series(24 * 16);
  EvalOptions o;
  o.start_s = kT0 + 10 * kDayS;
  o.days = 3;
  o.horizons = {24};
  o.retrain_days = 3;
  o.issue_hours = {0, 6, 13};
  o.train = small_training(0);
  o.train.max_horizon_h = 24;
  auto r = evaluate(zones, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& m = r.value().metrics[0][0];
  EXPECT_EQ(m[1].hours, 9u * 24u);
  EXPECT_DOUBLE_EQ(m[1].mae, 24.0);
  EXPECT_DOUBLE_EQ(m[2].mae, 96.0);
  EXPECT_EQ(m[3].mae, 0.0);
  ASSERT_EQ(r.value().issues.size(), 9u);
  for (std::size_t k = 0; k < 9; ++k) {
    const int64_t day = static_cast<int64_t>(k / 3), hour = std::array<int64_t, 3>{0, 6, 13}[k % 3];
    EXPECT_EQ(r.value().issues[k].issue_s, o.start_s + day * kDayS + hour * 3600);
    EXPECT_LE(r.value().issues[k].model_trained_until_s, o.start_s);
  }
  for (const std::vector<int>& bad :
       {std::vector<int>{}, std::vector<int>{24}, std::vector<int>{-1}, std::vector<int>{6, 6},
        std::vector<int>{6, 0}}) {
    o.issue_hours = bad;
    auto refused = evaluate(zones, o);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("issue hours"), std::string::npos);
  }
}

TEST(ForecastEvaluate, NegativePricesAreKeptAndScored) {
  // A price series that dips below zero every afternoon (surplus solar): the scale is the mean
  // |price|, the MAPE leaves out hours near zero, and every number is finite.
  std::vector<EvalZone> zones(1);
  zones[0].series = daily_series(24 * 60, "neg", 0.02, 0, 9);
  for (double& v : zones[0].series.values) v /= 1000.0;  // about -0.04 .. 0.08 USD/kWh
  std::size_t negative = 0;
  for (double v : zones[0].series.values) negative += v < 0 ? 1 : 0;
  ASSERT_GT(negative, 100u);
  EXPECT_GT(scale_at(zones[0].series, 300), 0.0);
  EvalOptions o;
  o.start_s = kT0 + 40 * kDayS;
  o.days = 10;
  o.horizons = {24};
  o.retrain_days = 10;
  o.train = small_training(0);
  o.train.max_horizon_h = 24;
  auto r = evaluate(zones, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const Metrics& m : r.value().metrics[0][0]) {
    EXPECT_TRUE(std::isfinite(m.mae));
    EXPECT_TRUE(std::isfinite(m.mape_pct));
    EXPECT_LE(m.mape_hours, m.hours);
  }
}

TEST(ForecastRealData, TwoCarbonZonesShortWindow) {
  const std::string dir = testing::shared_data_dir() + "/carbon/emaps2023/";
  GREENSCHED_REQUIRE_SHARED_FILE(dir + "DE-LU_2023_hourly.csv");
  std::vector<EvalZone> zones;
  for (const char* zone : {"DE-LU", "US-CAL-CISO"}) {
    auto t = multi::read_emaps_csv(dir + zone + "_2023_hourly.csv");
    ASSERT_TRUE(t.ok()) << t.status().message();
    EvalZone z;
    z.series.name = zone;
    z.series.start_s = t.value().start_s();
    z.series.values = t.value().values();
    zones.push_back(std::move(z));
  }
  EvalOptions o;
  o.start_s = parse_utc_time("2023-03-01").value();
  o.days = 14;
  o.horizons = {24, 96};
  o.retrain_days = 7;
  o.train = small_training(0);
  o.train.max_horizon_h = 96;
  auto r = evaluate(zones, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (std::size_t z = 0; z < zones.size(); ++z) {
    for (std::size_t h = 0; h < 2; ++h) {
      for (std::size_t m = 0; m < kModels; ++m) {
        const Metrics& x = r.value().metrics[z][h][m];
        EXPECT_TRUE(std::isfinite(x.mape_pct) && std::isfinite(x.mae)) << zones[z].series.name;
        EXPECT_GT(x.hours, 0u);
      }
      EXPECT_GT(r.value().metrics[z][h][0].mape_pct, 0.0);
      EXPECT_LT(r.value().metrics[z][h][0].mape_pct, 100.0);
    }
  }
}

}  // namespace
}  // namespace greensched::forecast
