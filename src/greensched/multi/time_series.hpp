// A regularly sampled signal over time: grid carbon intensity (gCO2/kWh) or electricity price
// (per kWh). Sample i holds for [start + i * step, start + (i + 1) * step). Times are seconds
// since the Unix epoch, UTC. Outside its span a series repeats itself (cyclically), so a
// year of data can drive a replay that starts anywhere in it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/core/utc_time.hpp"

namespace greensched::multi {

class TimeSeries {
 public:
  TimeSeries() = default;
  // step_s > 0, values non-empty.
  TimeSeries(int64_t start_s, int64_t step_s, std::vector<double> values);

  int64_t start_s() const { return start_s_; }
  int64_t step_s() const { return step_s_; }
  int64_t end_s() const { return start_s_ + step_s_ * static_cast<int64_t>(values_.size()); }
  const std::vector<double>& values() const { return values_; }
  bool empty() const { return values_.empty(); }

  // The sample in force at time t (cyclic outside the span).
  double at(int64_t t) const;
  // Index of the sample in force at t, without wrapping (may be < 0 or >= size).
  int64_t index_of(int64_t t) const;
  // Integral of the signal over [from, to) in value x seconds (0 when to <= from).
  double integral(int64_t from, int64_t to) const;
  // Time-weighted mean over [from, to) (the value at `from` when to <= from).
  double mean(int64_t from, int64_t to) const;

 private:
  int64_t start_s_ = 0;
  int64_t step_s_ = 3600;
  std::vector<double> values_;
  double cycle_total_ = 0;  // sum of values_, for integrals over whole cycles
};

// UTC times are parsed and printed by core/utc_time.hpp (parse_utc_time, format_utc_time).

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

// A synthetic carbon-intensity year with the shape of real ones: a base level, a daily cycle
// (solar dip around local noon of depth `solar_dip`, as a fraction), a weekly ripple, and
// multi-day weather swings (`wind_swing`, as a fraction) from a seeded random walk; hourly
// samples from `start_s` for `days` days, never below 0.
struct SyntheticCarbon {
  double mean_g_per_kwh = 300;
  double solar_dip = 0.2;
  double wind_swing = 0.25;
  int utc_offset_hours = 0;  // local noon = 12 - offset in UTC
  uint64_t seed = 1;
};
TimeSeries synthetic_carbon(const SyntheticCarbon& shape, int64_t start_s, int days = 365);

}  // namespace greensched::multi
