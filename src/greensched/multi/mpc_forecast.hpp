// The forecasts of import price and carbon intensity the mpc site controller plans on
// (energy/dispatch_lp.hpp):
//   seasonal-naive  the controller's own: the mean of the same hour over the past
//                   --mpc-forecast-days days.
//   learned         gradient-boosted trees (forecast/learned.hpp), one model per series kind
//                   shared by the fleet's sites, trained when the run starts on the sites' own
//                   series before the window (or loaded from files, refused when their
//                   training reaches into the window). Trained on squared error in the
//                   series' unit (the expected value a linear cost needs), every 24 h of
//                   issue, 200 trees of depth 6, with the zone guard (kMpcValidationDays) and
//                   the site's holiday calendar (SiteSpec::holidays). Past-only features: no
//                   weather and no day-ahead prices, so the model suits every information mode;
//                   prices a day-ahead market has published still replace the forecast
//                   (mpc_day_ahead).
// No look-ahead: a model is used only when it was trained on samples that end at or before
// the window's start, and at hour t it reads only samples complete at t.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/forecast/learned.hpp"
#include "greensched/forecast/series.hpp"
#include "greensched/multi/fleet.hpp"

namespace greensched::multi {

enum class MpcForecastKind { kSeasonalNaive, kLearned };

Result<MpcForecastKind> parse_mpc_forecast(std::string_view text);  // seasonal-naive|learned
std::string_view mpc_forecast_name(MpcForecastKind kind);

// Training needs this many days of issues (each with forecast::kMinHistoryH hours of history
// before it) before the window; with fewer the model is not trained and the mpc keeps the
// seasonal-naive forecast for that series.
inline constexpr int kMinTrainingIssueDays = 14;
// The zone guard of the models (forecast::TrainOptions::validation_days): each site keeps the
// share of the trees' correction to seasonal-naive that erred least (MAE) over the last 28 days
// before the window, judged by a model trained without them.
inline constexpr int kMpcValidationDays = 28;

// A kind of series ("carbon", "price") left without a learned model, and why: the caller
// says which forecast it keeps instead.
struct MissingModel {
  std::string kind;
  std::string why;
};

// The learned models of one window, and each site's series as the models read them.
struct MpcForecastModels {
  int64_t window_start_s = 0;                    // the first hour a forecast is issued for
  std::optional<forecast::LearnedModel> carbon;  // absent: seasonal-naive carbon
  std::optional<forecast::LearnedModel> price;   // absent: seasonal-naive prices
  std::vector<forecast::Series> carbon_series;   // per fleet site
  std::vector<forecast::Series> price_series;    // per fleet site; empty values: no price
  std::vector<MissingModel> missing;             // the kinds without a model
};

// Each site's carbon and price series as forecast::Series named after the site (local time
// from its energy block's UTC offset). Prices only where the site has an hourly price series.
void fleet_forecast_series(const Fleet& fleet, std::vector<forecast::Series>& carbon,
                           std::vector<forecast::Series>& price);

// Trains the carbon and price models on the fleet's series, reading only samples that end at
// or before `window_start_s`. A kind with too little history (kMinTrainingIssueDays) is left
// out, with a note.
// Horizons 1 .. max_horizon_h (at most forecast::kMaxHorizonH); the mpc keeps the
// seasonal-naive forecast beyond.
Result<MpcForecastModels> train_mpc_forecasts(const Fleet& fleet, int64_t window_start_s,
                                              int max_horizon_h = 24,
                                              const forecast::TreeParams& trees = {});

// Loads `dir`/carbon.ubj and `dir`/price.ubj (a missing file: that series stays
// seasonal-naive, with a note); refuses a model trained on data at or after `window_start_s`.
Result<MpcForecastModels> load_mpc_forecasts(const Fleet& fleet, int64_t window_start_s,
                                             const std::string& dir);

// The no-look-ahead guard: ok when `model` read no sample ending after `window_start_s`.
Status check_trained_before(const forecast::LearnedModel& model, int64_t window_start_s,
                            std::string_view what);

}  // namespace greensched::multi
