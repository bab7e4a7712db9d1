// A learned forecaster: gradient-boosted trees (booster.hpp) on the zone-normalised features
// of features.hpp, one model per series kind shared by every zone it was trained on. It
// predicts the target divided by the trailing-week scale known at issue time and multiplies
// back, so it reads only samples complete at `now`: changing the series after `now` never
// changes a forecast.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/forecast/booster.hpp"
#include "greensched/forecast/features.hpp"
#include "greensched/forecast/series.hpp"

namespace greensched::forecast {

// One zone's training or forecast input: its series and, in the weather information mode, the
// exogenous columns (null: none).
struct ZoneSeries {
  const Series* series = nullptr;
  const Exogenous* exog = nullptr;
};

struct TrainOptions {
  TreeParams trees;
  // Training rows are issued every `issue_every_h` hours from the first with kMinHistoryH
  // complete samples, for horizons 1 .. max_horizon_h; only rows whose target sample ends
  // before `until_s` (and starts at or after `from_s`'s history) are used.
  int issue_every_h = 24;
  int max_horizon_h = 96;
  int64_t from_s = INT64_MIN;  // earliest sample read
  int64_t until_s = 0;         // training reads only samples that end at or before this
  std::string kind;            // "carbon", "price", ... recorded in the model file
  // Rows weigh 1 / (max(|target / scale|, 0.05) x max(naive_err168, 0.002)): the squared
  // error over |target| is the loss of a relative error, as the MAPE judges the forecasts, and
  // dividing by the week's seasonal-naive error (feature 15, a share of the scale) lets a calm
  // zone's small corrections count beside a volatile zone's large ones. False: every row 1.
  bool relative_loss = true;
  // The guard against a zone the trees serve worse than the seasonal-naive forecast they start
  // from: with validation_days > 0 a first model is trained on the samples that end before the
  // last validation_days days of the training data and forecasts those days (issued as the
  // training rows are); each zone's weight on the trees' correction is the one of
  // kCorrectionWeights whose forecasts, base + weight x (trees - base), err least there (MAPE
  // over hours whose |actual| is at least 1 % of the zone's mean |actual| with relative_loss,
  // else MAE; a tie keeps the smaller weight). The model then trains on all the data and
  // forecasts with those weights. Skipped (every weight 1) where the validation days hold more
  // rows than the days before them. 0: no guard.
  int validation_days = 0;
};

// The weights the guard chooses from: 0 is the seasonal-naive forecast, 1 the trees' own.
inline constexpr double kCorrectionWeights[] = {0.0, 0.25, 0.5, 0.75, 1.0};

class LearnedModel {
 public:
  LearnedModel() = default;
  LearnedModel(Booster booster, std::string kind, int64_t trained_until_s, int max_horizon_h,
               std::size_t exog_columns, std::size_t rows);

  // Trains on every zone's rows (TrainOptions). Every zone needs the same exogenous columns.
  static Result<LearnedModel> train(std::span<const ZoneSeries> zones, const TrainOptions& options);
  // A model file written by save; checks its feature version.
  static Result<LearnedModel> load(const std::string& path);
  Status save(const std::string& path) const;
  Result<std::string> bytes() const { return booster_.bytes(); }

  // The forecasts at `now` of the given horizons (1 .. max_horizon_h). Needs kMinHistoryH
  // samples complete at `now`, and the exogenous columns the model was trained with.
  Result<std::vector<double>> forecast(const ZoneSeries& zone, int64_t now,
                                       std::span<const int> horizons) const;

  const std::string& kind() const { return kind_; }
  // The end of the training data: no sample at or after it was read.
  int64_t trained_until_s() const { return trained_until_s_; }
  int max_horizon_h() const { return max_horizon_h_; }
  std::size_t exog_columns() const { return exog_columns_; }
  std::size_t training_rows() const { return rows_; }
  // The zones it was trained on, in order (their Series::name): feature 17 is the place in this
  // list; a series of another name forecasts with that feature missing.
  const std::vector<std::string>& zones() const { return zones_; }
  // Per zone of zones(): the weight of the trees' correction (TrainOptions::validation_days;
  // 1 each where the guard did not run). A zone it was not trained on weighs 1.
  const std::vector<double>& correction_weights() const { return weights_; }
  // Whether the guard chose the weights (false: it was off or skipped, every weight 1).
  bool guarded() const { return guarded_; }

 private:
  Booster booster_;
  std::string kind_;
  int64_t trained_until_s_ = 0;
  int max_horizon_h_ = 96;
  std::size_t exog_columns_ = 0;
  std::size_t rows_ = 0;
  std::vector<std::string> zones_;
  std::vector<double> weights_;
  bool guarded_ = false;
};

}  // namespace greensched::forecast
