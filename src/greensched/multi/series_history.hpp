// What of a time series lies before a time: the past a forecast or controller may read. A
// TimeSeries repeats itself outside its span, but before its first sample nothing is known:
// a cyclic read there would show the series' last samples, the future of a window at its start.
#pragma once

#include <cstdint>

#include "greensched/core/utc_time.hpp"
#include "greensched/multi/time_series.hpp"

namespace greensched::multi {

// Seconds of data before t: t - start from the start on (the span and the repetitions after
// it, which a replay goes through); before the start, the time since the start of the
// repetition holding t. 0 for the empty series.
inline int64_t history_s(const TimeSeries& s, int64_t t) {
  if (s.empty()) return 0;
  return t >= s.start_s() ? t - s.start_s() : floor_mod(t - s.start_s(), s.end_s() - s.start_s());
}

}  // namespace greensched::multi
