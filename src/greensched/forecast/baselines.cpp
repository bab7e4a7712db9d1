#include "greensched/forecast/baselines.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace greensched::forecast {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The first whole number of days back from target index i (horizon h) that lands on a complete
// sample: (h - 1) / 24 + 1.
int64_t first_day_back(int h) {
  return (h - 1) / 24 + 1;
}

}  // namespace

std::vector<double> seasonal_naive(const Series& s, int64_t now, std::span<const int> horizons) {
  const auto known = static_cast<int64_t>(known_count(s, now));
  std::vector<double> out;
  out.reserve(horizons.size());
  for (int h : horizons) {
    const int64_t i = known + h - 1;
    const int64_t j = i - 24 * first_day_back(h);
    out.push_back(h >= 1 && j >= 0 && j < known ? s.values[static_cast<std::size_t>(j)] : kNaN);
  }
  return out;
}

std::vector<double> same_hour(const Series& s, int64_t now, std::span<const int> horizons,
                              int days) {
  days = std::max(days, 1);
  const auto known = static_cast<int64_t>(known_count(s, now));
  std::vector<double> out;
  out.reserve(horizons.size());
  for (int h : horizons) {
    const int64_t i = known + h - 1;
    double sum = 0;
    int count = 0;
    for (int64_t d = first_day_back(h); count < days; ++d) {
      const int64_t j = i - 24 * d;
      if (j < 0 || h < 1) break;
      sum += s.values[static_cast<std::size_t>(j)];
      ++count;
    }
    out.push_back(count > 0 ? sum / count : kNaN);
  }
  return out;
}

std::vector<double> oracle(const Series& s, int64_t now, std::span<const int> horizons) {
  const auto known = static_cast<int64_t>(known_count(s, now));
  std::vector<double> out;
  out.reserve(horizons.size());
  for (int h : horizons) {
    const int64_t i = known + h - 1;
    out.push_back(h >= 1 && i < static_cast<int64_t>(s.size())
                      ? s.values[static_cast<std::size_t>(i)]
                      : kNaN);
  }
  return out;
}

}  // namespace greensched::forecast
