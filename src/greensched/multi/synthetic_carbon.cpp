// A synthetic carbon-intensity series with the shape of real ones (time_series.hpp).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "greensched/core/rng.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/multi/synthetic_carbon.hpp"
#include "greensched/multi/time_series.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kDay = 86400;

}  // namespace

TimeSeries synthetic_carbon(const SyntheticCarbon& shape, int64_t start_s, int days) {
  const int hours = std::max(days, 0) * 24;
  constexpr double kPi = std::numbers::pi;
  // Solar bump: sin over local 06:00-18:00, peak at noon; its daily mean is 1/pi, so the base
  // is raised by 1 / (1 - dip / pi) to keep the time-average at mean_g_per_kwh.
  const auto daylight_bump = [&](double local_hour) {
    if (local_hour <= 6.0 || local_hour >= 18.0) return 0.0;
    return std::sin(kPi * (local_hour - 6.0) / 12.0);
  };
  const double base = shape.mean_g_per_kwh / std::max(1e-9, 1.0 - shape.solar_dip / kPi);

  // Weather: a mean-reverting (AR(1)) latent on knots every 6 h with a 2-day correlation time,
  // squashed into [-1, 1] by tanh and cosine-interpolated to hours.
  constexpr int kKnotHours = 6;
  const double phi = std::exp(-static_cast<double>(kKnotHours) / 48.0);
  const double innovation = std::sqrt(1.0 - phi * phi);
  Rng rng(shape.seed);
  const auto gaussian = [&] {  // Irwin-Hall: mean 0, variance 1
    double s = 0;
    for (int i = 0; i < 12; ++i) s += rng.uniform_real();
    return s - 6.0;
  };
  std::vector<double> knots(static_cast<std::size_t>(hours / kKnotHours + 2));
  double z = gaussian();
  for (double& k : knots) {
    k = std::tanh(0.9 * z);
    z = phi * z + innovation * gaussian();
  }

  std::vector<double> values(static_cast<std::size_t>(hours));
  for (int h = 0; h < hours; ++h) {
    const int64_t t = start_s + static_cast<int64_t>(h) * 3600;
    const int64_t local = t + static_cast<int64_t>(shape.utc_offset_hours) * 3600;
    const double local_hour = static_cast<double>(floor_mod(local, kDay)) / 3600.0 + 0.5;
    // Weekly ripple: highest mid-week, lowest around the weekend (1970-01-01 was a Thursday,
    // so Wednesday noon is 6.5 days after the epoch, modulo a week).
    const double week_pos =
        static_cast<double>(floor_mod(local - (6 * kDay + kDay / 2), 7 * kDay)) /
        static_cast<double>(7 * kDay);
    const double weekly = 1.0 + 0.04 * std::cos(2.0 * kPi * week_pos);
    const std::size_t k = static_cast<std::size_t>(h / kKnotHours);
    const double frac = static_cast<double>(h % kKnotHours) / kKnotHours;
    const double w = 0.5 - 0.5 * std::cos(kPi * frac);
    const double weather = knots[k] * (1.0 - w) + knots[k + 1] * w;
    const double v = base * (1.0 - shape.solar_dip * daylight_bump(local_hour)) * weekly *
                     (1.0 + shape.wind_swing * weather);
    values[static_cast<std::size_t>(h)] = std::max(0.0, v);
  }
  return TimeSeries(start_s, 3600, std::move(values));
}

}  // namespace greensched::multi
