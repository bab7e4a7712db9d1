#include "greensched/forecast/series.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "greensched/core/utc_time.hpp"

namespace greensched::forecast {

std::size_t known_count(const Series& series, int64_t now) {
  if (series.step_s <= 0 || now < series.start_s) return 0;
  const int64_t k = (now - series.start_s) / series.step_s;
  return static_cast<std::size_t>(std::min<int64_t>(k, static_cast<int64_t>(series.size())));
}

Status validate_series(const Series& s) {
  if (s.step_s != kHourS) {
    return Error{fmt::format("series {}: step {} s; only hourly series (3600 s) are forecast",
                             s.name, s.step_s)};
  }
  if (s.values.empty()) return Error{fmt::format("series {}: no values", s.name)};
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    if (!std::isfinite(s.values[i])) {
      return Error{fmt::format("series {}: value {} at {} is not finite", s.name, s.values[i],
                               format_utc_time(s.time_of(i)))};
    }
  }
  return Status::Ok();
}

}  // namespace greensched::forecast
