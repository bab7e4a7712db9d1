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
  // Names the samples: series built apart never share an id, copies do (a series never
  // changes after it is built), so a cache of something computed from a series can key on it.
  uint64_t id() const { return id_; }

  // The sample in force at time t (cyclic outside the span).
  double at(int64_t t) const;
  // Index of the sample in force at t, without wrapping (may be < 0 or >= size).
  int64_t index_of(int64_t t) const;
  // Seconds of data before t: what a forecast or controller at t may read as the past. From
  // the start on, t - start (the span and the repetitions after it, which a replay goes
  // through). Before the first sample nothing is known of the span, whose last samples a
  // cyclic read would show (the future of a window at the start): there, only the time since
  // the start of the repetition holding t. 0 for the empty series.
  int64_t history_s(int64_t t) const;
  // Integral of the signal over [from, to) in value x seconds (0 when to <= from).
  double integral(int64_t from, int64_t to) const;
  // Time-weighted mean over [from, to) (the value at `from` when to <= from).
  double mean(int64_t from, int64_t to) const;

 private:
  int64_t start_s_ = 0;
  int64_t step_s_ = 3600;
  std::vector<double> values_;
  double cycle_total_ = 0;  // sum of values_, for integrals over whole cycles
  uint64_t id_ = 0;         // 0: the empty series
};

}  // namespace greensched::multi
