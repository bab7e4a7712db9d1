// The features a learned forecast reads, for a series issued at `now` (known = known_count(now)
// samples complete) and a horizon of h hours (target sample i = known + h - 1). Every value
// but the calendar is divided by the scale: the mean absolute value of the last 168 complete
// samples (the trailing week known at issue time; 1 where that mean is below 1e-9, a series
// that is zero all week). The model predicts the target divided by the same scale, so one
// model serves zones of very different levels.
//    0 horizon_h        h
//    1 hour_local       hour of day of the target, local time (Series::utc_offset_s)
//    2 dow_local        day of week of the target, local time (0 = Monday)
//    3 last             sample known - 1 (the latest complete one)
//    4 lag2             sample known - 2
//    5 lag24            sample known - 24 (a day before the latest)
//    6 mean24           mean of the last 24 complete samples
//    7 std24            their standard deviation
//    8 day_back         the target's hour on the latest complete day: i - 24 d,
//                       d = (h - 1) / 24 + 1 (the seasonal-naive forecast)
//    9 day_back2        the same a day earlier: i - 24 (d + 1)
//   10 week_back        the target's hour a week earlier: i - 168 (complete for h <= 168)
//   11 same_hour7       the mean of i - 24 (d + k), k = 0 .. 6 (the same-hour forecast)
//   12 mean168          the signed mean of the last 168 samples (1 for a positive series)
//   13 trend24          mean24 minus the mean of the 24 samples before them
//   14 sd168            the standard deviation of the last 168 samples
//   15 naive_err168     the mean |x[j] - x[j - 24]| over the last 168 samples: how far the
//                       seasonal-naive forecast has been off this week (small for a flat zone)
//   16 anomaly6         the mean of the last 6 samples minus the mean of the same 6 hours a
//                       day earlier: how today differs from yesterday right now
//   17 zone             the zone's place in the model's list of training zones (by
//                       Series::name; NaN, missing to the trees, for a zone it was not trained
//                       on), so that one model can still learn a zone's own habits
//   18 holiday          1 when the target's local date is a public holiday of the zone, else 0
//                       (Series::holidays; NaN where the series has no calendar or the date
//                       lies outside it)
//   19 day_back_holiday the same for the date of day_back (i - 24 d): the day the
//                       seasonal-naive forecast repeats, which misleads after a holiday
//   20.. exogenous      each exogenous column's value at the target hour, as issued at `now`
//                       (a weather forecast); NaN beyond its lead (missing to the trees)
// Only samples with index < known are read: a feature row never depends on the series after
// `now`.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "greensched/forecast/series.hpp"

namespace greensched::forecast {

inline constexpr std::size_t kBaseFeatures = 20;
// The trees start from this feature (day_back: the seasonal-naive forecast) and learn the
// correction to it (XGBoost's base_margin), so a model never strays from the seasonal-naive
// forecast where its rows show no reason to.
inline constexpr std::size_t kBaseIndex = 8;
inline constexpr std::size_t kMinHistoryH = 168 + 48;  // samples a row needs before `now`
inline constexpr int kMaxHorizonH = 168;
// Bumped when the features change; a model file records the version it was trained on.
inline constexpr int kFeatureVersion = 2;  // 2: the holiday features

std::array<std::string, kBaseFeatures> base_feature_names();

// Columns known ahead of time at issue (a weather forecast), aligned with the series: column c
// value i is the forecast of sample i. `lead_h`: horizons beyond it see NaN.
struct Exogenous {
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  int lead_h = 48;
  std::size_t size() const { return columns.size(); }
};

// The trailing-week scale at `known` complete samples (see above).
double scale_at(const Series& series, std::size_t known);

// Appends the feature row of horizon h at `known` complete samples to `row` (kBaseFeatures +
// exog columns). Needs known >= kMinHistoryH and 1 <= h <= kMaxHorizonH; `scale` from scale_at.
// `zone_code`: feature 17.
void append_row(const Series& series, const Exogenous* exog, std::size_t known, int h, double scale,
                double zone_code, std::vector<float>& row);

}  // namespace greensched::forecast
