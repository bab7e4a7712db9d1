// Forecasts of a signal (carbon intensity, price) made at time `now` for a time `t`. A
// forecaster that is not an oracle uses only samples that were complete at `now`: changing
// the series after `now` never changes its answers.
#pragma once

#include <cstdint>
#include <memory>

#include "greensched/multi/time_series.hpp"

namespace greensched::multi {

class Forecaster {
 public:
  virtual ~Forecaster() = default;
  // Expected value at time t >= now.
  virtual double at(const TimeSeries& series, int64_t now, int64_t t) const = 0;
  // Expected mean over [from, to), from >= now, in steps of the series.
  virtual double mean(const TimeSeries& series, int64_t now, int64_t from, int64_t to) const;
  // Whether its forecasts at `now` of every hour of a coming day rest on what they should
  // (a day of the series' past for a forecaster of the same hour on past days); where not,
  // they repeat a few samples, and a plan over days ahead should not lean on them. Default:
  // true (a forecaster that needs no past).
  virtual bool knows_a_day(const TimeSeries& series, int64_t now) const;
};

// Sample j (holding [start + j * step, start + (j + 1) * step)) is known at `now` when
// j >= 0 and its interval has ended: start + (j + 1) * step <= now. For t:
//  - the sample holding t when it is known (t in the past);
//  - else the mean of the samples at t - k * 86400, k = 1, 2, ..., that are known, the first
//    `days` of them (days < 1 counts as 1); the step holding `now` is not known yet, so t
//    within it is forecast by this mean too;
//  - else (the first day of a series) the latest known sample;
//  - else (nothing complete yet) the first sample of the series: the one case that reads a
//    sample not known at `now`.
// It knows a day once `now` lies a day or more after the series' start.
std::unique_ptr<Forecaster> make_same_hour_forecaster(int days = 7);
// Sees the future: the actual series. An upper bound for agents, never a real forecaster.
std::unique_ptr<Forecaster> make_oracle_forecaster();

}  // namespace greensched::multi
