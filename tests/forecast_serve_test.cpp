// forecast serve (dispatch/forecast_server.hpp): the Carbon Aware SDK replies built from a tiny
// series and a stub forecaster, checked by hand; the no-look-ahead rule; the live error of
// /metrics on a forecast of known values as the truth arrives.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "greensched/dispatch/forecast_server.hpp"

namespace greensched::dispatch {
namespace {

using nlohmann::json;

constexpr int64_t kT0 = 1672531200;  // 2023-01-01T00:00:00Z

// 48 hours of 100, then hours 48, 49, 50 of 100, 200, 50 (the truth of the hand case).
forecast::Series tiny_series(const std::string& name, double offset = 0) {
  forecast::Series s;
  s.name = name;
  s.start_s = kT0;
  s.values.assign(60, 100.0 + offset);
  s.values[49] = 200.0 + offset;
  s.values[50] = 50.0 + offset;
  return s;
}

// values[h - 1] = base + h; the zone "BB" forecasts 10 lower.
Forecaster stub_forecaster(double base) {
  return [base](const forecast::Series& s, int64_t issue_s, int horizon_h) {
    IssuedForecast f;
    f.issue_s = issue_s;
    f.method = "learned";
    for (int h = 1; h <= horizon_h; ++h) f.values.push_back(base + h - (s.name == "BB" ? 10 : 0));
    return Result<IssuedForecast>(f);
  };
}

ForecastService tiny_service(Forecaster f, int horizon_h = 4) {
  std::map<std::string, forecast::Series> zones;
  zones.emplace("AA", tiny_series("AA"));
  zones.emplace("BB", tiny_series("BB", 5));
  // Signal time = 2023-01-03T00:30:00Z + wall seconds.
  return ForecastService(std::move(zones), std::move(f), SignalClock(kT0 + 48 * 3600 + 1800, 1, 0),
                         {.horizon_h = horizon_h, .max_pending_issues = 8});
}

TEST(ForecastServe, CurrentForecastAsTheSdkWritesIt) {
  ForecastService svc = tiny_service(stub_forecaster(100));
  const ForecastReply r = svc.current({{"location", "AA"}}, 0);
  ASSERT_EQ(r.status, 200) << r.body;
  const json expected = json::parse(R"([{
    "generatedAt": "2023-01-03T00:00:00+00:00",
    "requestedAt": "2023-01-03T00:30:00+00:00",
    "location": "AA",
    "dataStartAt": "2023-01-03T00:00:00+00:00",
    "dataEndAt": "2023-01-03T04:00:00+00:00",
    "windowSize": 60,
    "optimalDataPoints": [
      {"location": "AA", "timestamp": "2023-01-03T00:00:00+00:00", "duration": 60, "value": 101.0}],
    "forecastData": [
      {"location": "AA", "timestamp": "2023-01-03T00:00:00+00:00", "duration": 60, "value": 101.0},
      {"location": "AA", "timestamp": "2023-01-03T01:00:00+00:00", "duration": 60, "value": 102.0},
      {"location": "AA", "timestamp": "2023-01-03T02:00:00+00:00", "duration": 60, "value": 103.0},
      {"location": "AA", "timestamp": "2023-01-03T03:00:00+00:00", "duration": 60, "value": 104.0}],
    "forecastMethod": "learned"
  }])");
  EXPECT_EQ(json::parse(r.body), expected);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].second, "AA=learned");
}

TEST(ForecastServe, WindowSizeAveragesAndBoundsFilter) {
  ForecastService svc = tiny_service(stub_forecaster(100));
  const ForecastReply r = svc.current({{"location", "AA"},
                                       {"location", "BB"},
                                       {"windowSize", "120"},
                                       {"dataStartAt", "2023-01-03T01:00:00Z"}},
                                      0);
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = json::parse(r.body);
  ASSERT_EQ(body.size(), 2u);
  // Windows of two hours starting 01:00 and 02:00: means 102.5 and 103.5 (BB: 10 lower).
  const json& aa = body[0]["forecastData"];
  ASSERT_EQ(aa.size(), 2u);
  EXPECT_EQ(aa[0]["timestamp"], "2023-01-03T01:00:00+00:00");
  EXPECT_DOUBLE_EQ(aa[0]["value"].get<double>(), 102.5);
  EXPECT_DOUBLE_EQ(aa[1]["value"].get<double>(), 103.5);
  EXPECT_EQ(aa[0]["duration"], 120);
  EXPECT_EQ(body[0]["windowSize"], 120);
  EXPECT_EQ(body[1]["location"], "BB");
  EXPECT_DOUBLE_EQ(body[1]["optimalDataPoints"][0]["value"].get<double>(), 92.5);
}

TEST(ForecastServe, BadRequestsGet400WithAJsonError) {
  ForecastService svc = tiny_service(stub_forecaster(100));
  for (const ForecastService::Params& p : std::vector<ForecastService::Params>{
           {},
           {{"location", "ZZ"}},
           {{"location", "AA"}, {"windowSize", "90"}},
           {{"location", "AA"}, {"windowSize", "x"}},
           {{"location", "AA"}, {"windowSize", "6000"}},
           {{"location", "AA"}, {"dataStartAt", "yesterday"}},
           {{"location", "AA"}, {"dataStartAt", "2023-01-02T00:00:00Z"}},
           {{"location", "AA"},
            {"dataStartAt", "2023-01-03T03:00:00Z"},
            {"dataEndAt", "2023-01-03T01:00:00Z"}},
       }) {
    const ForecastReply r = svc.current(p, 0);
    EXPECT_EQ(r.status, 400) << r.body;
    const json body = json::parse(r.body);
    EXPECT_TRUE(body["error"].is_string());
    EXPECT_EQ(body["status"], 400);
  }
  const ForecastReply unknown = svc.current({{"location", "ZZ"}}, 0);
  EXPECT_NE(unknown.body.find("unknown location 'ZZ' (known: AA, BB)"), std::string::npos);
  EXPECT_EQ(svc.best({{"location", "AA"}, {"location", "nowhere"}}, 0).status, 400);
  EXPECT_EQ(svc.best({{"location", "AA"},
                      {"time", "2023-01-03T02:00:00Z"},
                      {"toTime", "2023-01-03T01:00:00Z"}},
                     0)
                .status,
            400);
}

TEST(ForecastServe, BestByLocationsObservedThenForecast) {
  ForecastService svc = tiny_service(stub_forecaster(100));
  // Default window: the latest complete hour (2023-01-02 23:00, 100 at AA and 105 at BB).
  ForecastReply r = svc.best({{"location", "AA"}, {"location", "BB"}}, 0);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json::parse(R"([{"location": "AA",
      "time": "2023-01-02T23:00:00+00:00", "rating": 100.0, "duration": "01:00:00"}])"));
  // Over the next three hours: forecast (BB's 91 at 00:00 is the lowest).
  r = svc.best({{"location", "AA"},
                {"location", "BB"},
                {"time", "2023-01-03T00:00:00Z"},
                {"toTime", "2023-01-03T03:00:00Z"}},
               0);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json::parse(R"([{"location": "BB",
      "time": "2023-01-03T00:00:00+00:00", "rating": 91.0, "duration": "01:00:00"}])"));
  // A window without data: 204, as the SDK.
  EXPECT_EQ(svc.best({{"location", "AA"}, {"time", "2030-01-01T00:00:00Z"}}, 0).status, 204);
}

TEST(ForecastServe, CachedPerIssueHour) {
  int calls = 0;
  Forecaster counting = [&calls, inner = stub_forecaster(100)](const forecast::Series& s, int64_t t,
                                                               int h) {
    ++calls;
    return inner(s, t, h);
  };
  ForecastService svc = tiny_service(counting);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(svc.current({{"location", "AA"}}, i * 60).status, 200);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(svc.current({{"location", "AA"}}, 3600).status, 200);  // the next hour
  EXPECT_EQ(calls, 2);
}

TEST(ForecastServe, NoLookAhead) {
  EXPECT_TRUE(check_no_look_ahead(kT0, kT0).ok());
  EXPECT_TRUE(check_no_look_ahead(kT0 - 3600, kT0).ok());
  const Status s = check_no_look_ahead(kT0 + 1, kT0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("look-ahead"), std::string::npos);
  EXPECT_NE(s.message().find("--until 2023-01-01"), std::string::npos);
}

TEST(ForecastServe, SeasonalNaiveNeedsADayOfHistory) {
  forecast::Series s = tiny_series("AA");
  auto early = seasonal_naive_forecaster()(s, kT0 + 10 * 3600, 4);
  EXPECT_FALSE(early.ok());
  auto f = seasonal_naive_forecaster()(s, kT0 + 48 * 3600, 3);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.value().method, "seasonal-naive");
  EXPECT_EQ(f.value().values, (std::vector<double>{100, 100, 100}));
}

// The learned forecaster: the model where it may and can forecast, seasonal-naive (saying why)
// before the model's training end and where the history is too short for the model.
TEST(ForecastServe, LearnedForecasterFallsBackToSeasonalNaive) {
  forecast::Series s;
  s.name = "AA";
  s.start_s = kT0;
  for (int i = 0; i < 24 * 40; ++i) {
    s.values.push_back(200 + 50 * std::sin(i * 2 * M_PI / 24) + (i / 24) % 7);
  }
  forecast::TrainOptions t;
  t.trees.trees = 10;
  t.until_s = kT0 + 30 * forecast::kDayS;
  t.kind = "carbon";
  const forecast::ZoneSeries zs{&s, nullptr};
  auto model = forecast::LearnedModel::train(std::span<const forecast::ZoneSeries>(&zs, 1), t);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Forecaster f =
      learned_forecaster(std::make_shared<const forecast::LearnedModel>(std::move(model.value())));

  auto learned = f(s, kT0 + 31 * forecast::kDayS, 96);
  ASSERT_TRUE(learned.ok()) << learned.status().message();
  EXPECT_EQ(learned.value().method, "learned");
  EXPECT_EQ(learned.value().values.size(), 96u);
  EXPECT_TRUE(learned.value().note.empty());

  auto early = f(s, kT0 + 20 * forecast::kDayS, 4);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early.value().method, "seasonal-naive");
  EXPECT_NE(early.value().note.find("trained on data until 2023-01-31"), std::string::npos)
      << early.value().note;

  forecast::Series young = s;  // 100 hours from the training's end: too little for the model
  young.start_s = kT0 + 30 * forecast::kDayS;
  young.values.resize(100);
  auto short_history = f(young, young.start_s + 50 * 3600, 4);
  ASSERT_TRUE(short_history.ok()) << short_history.status().message();
  EXPECT_EQ(short_history.value().method, "seasonal-naive");
  EXPECT_FALSE(short_history.value().note.empty());
  EXPECT_EQ(short_history.value().values[0], young.values[50 - 24]);
}

// Issued at 2023-01-03 00:00: 101, 102, 103, 104 for hours 48..51 whose truth is 100, 200, 50,
// 100. At 03:00 hours 48..50 are complete: errors 1, 98, 53 -> MAE 50.667, MAPE (1 + 49 + 106)
// / 3 = 52 %.
TEST(ForecastServe, MetricsScoreForecastsAsTheTruthArrives) {
  ForecastService svc = tiny_service(stub_forecaster(100));
  ASSERT_EQ(svc.current({{"location", "AA"}}, 0).status, 200);
  svc.observe_request("/emissions/forecasts/current", 200, 0.002);
  std::string m = svc.metrics_text(0);
  EXPECT_NE(m.find("greensched_forecast_error_points_total{zone=\"AA\",horizon=\"1-24\"} 0"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("greensched_forecast_requests_total{route=\"/emissions/forecasts/current\","
                   "code=\"200\"} 1"),
            std::string::npos)
      << m;
  m = svc.metrics_text(2 * 3600 + 1800);  // signal 03:00
  EXPECT_NE(m.find("greensched_forecast_error_points_total{zone=\"AA\",horizon=\"1-24\"} 3"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("greensched_forecast_error_mape_percent{zone=\"AA\",horizon=\"1-24\"} 52\n"),
            std::string::npos)
      << m;
  const std::string mae = "greensched_forecast_error_mae{zone=\"AA\",horizon=\"1-24\"} ";
  const auto at = m.find(mae);
  ASSERT_NE(at, std::string::npos);
  EXPECT_NEAR(std::stod(m.substr(at + mae.size())), 152.0 / 3.0, 1e-9);
  EXPECT_NE(m.find("greensched_forecast_pending_issues{zone=\"AA\"} 1"), std::string::npos);
  // At 04:00 the last hour (truth 100, forecast 104) is scored and the issue is let go.
  m = svc.metrics_text(3 * 3600 + 1800);
  EXPECT_NE(m.find("greensched_forecast_error_mape_percent{zone=\"AA\",horizon=\"1-24\"} 40\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("greensched_forecast_pending_issues{zone=\"AA\"} 0"), std::string::npos);
}

}  // namespace
}  // namespace greensched::dispatch
