#pragma once

#include <cstdint>

#include "greensched/multi/time_series.hpp"

namespace greensched::multi {

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
