// An hourly series to forecast: sample i holds for [start_s + i * 3600, start_s + (i + 1) *
// 3600), UTC. The forecast layer takes plain values so that every reader above it (carbon,
// prices, generation from weather) can hand it what it read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::forecast {

inline constexpr int64_t kHourS = 3600;
inline constexpr int64_t kDayS = 86400;

struct Series {
  std::string name;  // the zone or site, for messages
  // UTC epoch second of sample 0: on the hour, or at a fixed offset past it (a weather file
  // stamped in local time at UTC+5:30 starts at :30)
  int64_t start_s = 0;
  int64_t step_s = kHourS;   // only hourly series are forecast
  int64_t utc_offset_s = 0;  // local time = UTC + this (hour-of-day and day-of-week features)
  std::vector<double> values;
  // The zone's public holidays as local day numbers (days since 1970-01-01 of local time),
  // sorted (holidays.hpp), and the days the calendar covers, [holidays_from_day,
  // holidays_to_day); none covered (the default): no calendar, and the holiday features are
  // missing values.
  std::vector<int32_t> holidays;
  int32_t holidays_from_day = 0, holidays_to_day = 0;

  std::size_t size() const { return values.size(); }
  int64_t time_of(std::size_t i) const { return start_s + static_cast<int64_t>(i) * step_s; }
  int64_t end_s() const { return time_of(values.size()); }
};

// The number of samples complete at `now`: sample j is complete when its hour has ended,
// start_s + (j + 1) * step_s <= now. Samples [0, known_count) are the past at `now`.
std::size_t known_count(const Series& series, int64_t now);

// The sample a horizon of h hours (h >= 1) targets when issued at `now`: known_count + h - 1,
// so horizon 1 is the first hour not complete at `now` (the hour starting at `now` when `now`
// is on the hour).
inline std::size_t target_index(std::size_t known, int h) {
  return known + static_cast<std::size_t>(h) - 1;
}

// Hourly (step 3600 s), at least one value, every value finite. Errors name
// the series and the first bad sample.
Status validate_series(const Series& series);

}  // namespace greensched::forecast
