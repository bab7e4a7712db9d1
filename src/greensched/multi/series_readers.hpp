// Readers of carbon-intensity and price series into TimeSeries. Times are UTC stamps as
// core/utc_time.hpp's parse_utc_time reads them, or epoch seconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "greensched/core/status.hpp"
#include "greensched/multi/time_series.hpp"

namespace greensched::multi {

// Readers; every error is "path:line: reason". All resample to `step_s` (hourly by default)
// by time-weighted means: a sample holds until the next sample's time (at most
// max(step_s, median input step); a longer interval is a hole), the last one for the median
// input step; output k covers [start + k * step_s, ...) with start the first time floored to
// step_s, and is the mean over the covered part of it. An output step with no data at all is
// an error naming the gap. Rows must be in strictly increasing time; values must be >= 0.
//   emaps: Electricity Maps hourly export (Datetime (UTC), ..., Carbon Intensity gCO2eq/kWh
//          (direct), ... (LCA), ...); `column` is "direct" (default) or "lca".
//   lwa:   Let's Wait Awhile series (Time,Carbon Intensity), 15/30-minute steps, naive times
//          taken as UTC.
//   plain: two columns, a UTC time (as parse_utc_time accepts) or epoch seconds, and a value.
Result<TimeSeries> read_emaps_csv(const std::string& path, const std::string& column = "direct",
                                  int64_t step_s = 3600);
Result<TimeSeries> read_lwa_csv(const std::string& path, int64_t step_s = 3600);
Result<TimeSeries> read_plain_csv(const std::string& path, int64_t step_s = 3600);
// Dispatches on `format` ("emaps", "lwa", "plain"); `column` must be empty except for emaps.
Result<TimeSeries> read_series(const std::string& path, const std::string& format,
                               const std::string& column = {}, int64_t step_s = 3600);
// The same readers on text already in memory; `source` names it in errors.
Result<TimeSeries> parse_emaps_csv(std::string_view text, const std::string& source,
                                   const std::string& column = "direct", int64_t step_s = 3600);
Result<TimeSeries> parse_lwa_csv(std::string_view text, const std::string& source,
                                 int64_t step_s = 3600);
Result<TimeSeries> parse_plain_csv(std::string_view text, const std::string& source,
                                   int64_t step_s = 3600);
Result<TimeSeries> parse_series_text(std::string_view text, const std::string& source,
                                     const std::string& format, const std::string& column = {},
                                     int64_t step_s = 3600);

}  // namespace greensched::multi
