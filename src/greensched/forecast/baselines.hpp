// The forecasters a learned one is measured against, on a Series at issue time `now` for
// horizons in hours (h >= 1 targets sample known_count(now) + h - 1). Only samples complete at
// `now` are read, except by the oracle.
//   seasonal-naive  the same hour of the latest day that is complete at `now`: sample
//                   i - 24 d with d = (h - 1) / 24 + 1, the one-day seasonal-naive forecast
//                   of the energy controllers' mpc (ControllerOptions::forecast_days = 1).
//   same-hour       the mean of the same hour over the `days` latest days complete at `now`
//                   (samples i - 24 (d + k), k = 0 .. days - 1): multi's same-hour forecaster
//                   (make_same_hour_forecaster, 7 days by default).
//   oracle          the actual sample: a bound, never a forecaster.
// Where a baseline has no past sample to read (fewer than 24 complete samples) its forecast
// is NaN; a target beyond the series is NaN for the oracle.
#pragma once

#include <span>
#include <vector>

#include "greensched/forecast/series.hpp"

namespace greensched::forecast {

std::vector<double> seasonal_naive(const Series& series, int64_t now,
                                   std::span<const int> horizons);
std::vector<double> same_hour(const Series& series, int64_t now, std::span<const int> horizons,
                              int days = 7);
std::vector<double> oracle(const Series& series, int64_t now, std::span<const int> horizons);

}  // namespace greensched::forecast
