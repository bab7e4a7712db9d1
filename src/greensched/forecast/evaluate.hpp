// Honest evaluation of forecasters by rolling origin. Each day of the window a forecast is
// issued at 00:00 UTC (or at each of EvalOptions::issue_hours) for the next H hours (H each of
// the horizons asked for) by every forecaster: learned (learned.hpp), seasonal-naive, same-hour
// (baselines.hpp) and oracle. The learned model is retrained on an expanding window every
// `retrain_days` days, from the window's first day on: the model used on a day was trained only on
// samples that ended at or before its retraining point, which is never after the day's 00:00
// (checked for every forecast; a violation is an internal error).
//
// Errors per zone, horizon and forecaster, over every issue whose H hours lie in the data:
//   mae                mean |forecast - actual| over the H hours of every issue;
//   mape_pct           100 x mean |forecast - actual| / |actual| over the same hours, leaving
//                      out hours whose |actual| is below 1 % of the zone's mean |actual| over
//                      the window (night-time solar, a zero price); mape_hours counts the rest;
//   sel_mape_pct       the saving-weighted error: the hours are cut into days of 24 (hours
//                      1-24, 25-48, ...); in each, the k hours with the lowest forecast (ties:
//                      the earlier hour) are those a scheduler would choose, and this is the
//                      MAPE over the chosen hours only;
//   missed_saving_pct  over the same days, 100 x sum(mean actual of the chosen hours - mean of
//                      the k lowest actual hours) / sum(mean actual of the day - mean of the k
//                      lowest actual hours): the share of the saving that running in the k
//                      best hours offers that the forecast missed (0 for the oracle).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/forecast/learned.hpp"
#include "greensched/forecast/series.hpp"

namespace greensched::forecast {

inline constexpr std::array<const char*, 4> kModelNames = {"learned", "seasonal-naive", "same-hour",
                                                           "oracle"};
inline constexpr std::size_t kModels = kModelNames.size();

struct Metrics {
  double mae = 0;
  double mape_pct = 0;
  double sel_mape_pct = 0;
  double missed_saving_pct = 0;
  std::size_t hours = 0;       // forecast hours scored
  std::size_t mape_hours = 0;  // of those, in the MAPE
};

// Sums of errors over issues, for one zone, horizon and forecaster.
class ErrorSums {
 public:
  // `mape_floor`: hours with |actual| below it are left out of the MAPEs; k: chosen hours a day.
  ErrorSums(double mape_floor, int k_lowest) : floor_(mape_floor), k_(k_lowest) {}
  // One issue's forecasts and actuals, hour 1 first (same length).
  void add(std::span<const double> forecast, std::span<const double> actual);
  Metrics finish() const;

 private:
  double floor_;
  int k_;
  double abs_sum_ = 0, ape_sum_ = 0, sel_ape_sum_ = 0, missed_ = 0, possible_ = 0;
  std::size_t hours_ = 0, ape_hours_ = 0, sel_hours_ = 0;
};

struct EvalZone {
  Series series;
  Exogenous exog;  // empty: none
  // Prices published ahead (a day-ahead market): samples starting before known_until(now) are
  // known at `now` and every forecaster but the oracle takes them as they are. Unset: none.
  std::function<int64_t(int64_t now)> known_until;
};

struct EvalOptions {
  int64_t start_s = 0;  // 00:00 UTC of the first issue day
  int days = 1;
  std::vector<int> horizons = {24, 96};
  int retrain_days = 7;
  int k_lowest = 4;
  // The UTC hours of each day at which forecasts are issued (0-23, ascending, no repeats):
  // {0} scores day-ahead forecasts as a daily plan reads them; every hour, as a controller
  // that plans again each hour (the mpc, the dispatch agents) reads them.
  std::vector<int> issue_hours = {0};
  TrainOptions train;  // until_s is set per retraining point
  int jobs = 1;        // retrainings run in parallel on this many threads (0: all cores)
};

struct RetrainRecord {
  int64_t at_s = 0;             // the retraining point (00:00 UTC of a window day)
  int64_t trained_until_s = 0;  // the model's end of data
  std::size_t rows = 0;
  double seconds = 0;  // wall time of the training
  // Per zone (in the order given), the weight of the trees' correction the zone guard chose
  // (TrainOptions::validation_days; every weight 1 where it did not run).
  std::vector<double> weights;
  bool guarded = false;
};

struct IssueRecord {
  std::size_t zone = 0;
  int64_t issue_s = 0;
  int64_t model_trained_until_s = 0;
};

struct EvalResult {
  // metrics[zone][horizon][model], the horizons as asked, models as kModelNames.
  std::vector<std::vector<std::array<Metrics, kModels>>> metrics;
  std::vector<RetrainRecord> retrains;
  std::vector<IssueRecord> issues;  // every learned forecast made
};

Result<EvalResult> evaluate(std::span<const EvalZone> zones, const EvalOptions& options);

}  // namespace greensched::forecast
