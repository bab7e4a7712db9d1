// Quantiles of samples by linear interpolation between order statistics (the "type 7" rule of
// R and NumPy): q(p) = x[floor(h)] + (h - floor(h)) (x[floor(h)+1] - x[floor(h)]), h = p (n-1).
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace greensched::trace {

// `sorted` must be in ascending order and non-empty; p in [0, 1].
inline double quantile_sorted(std::span<const double> sorted, double p) {
  const double h = std::clamp(p, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// The 99th percentile by nearest rank, element ceil(0.99 n) - 1 (in integers, so that
// 0.99 x 100 is not 98.99...): the rule of queueing-delay figures. `sorted` non-empty.
inline double p99_nearest_rank(std::span<const double> sorted) {
  return sorted[(sorted.size() * 99 + 99) / 100 - 1];
}

// Summary of a sample: count, mean and the usual quantiles. Empty when n == 0.
struct Distribution {
  std::size_t n = 0;
  double mean = 0, min = 0, p10 = 0, p25 = 0, p50 = 0, p75 = 0, p90 = 0, p99 = 0, max = 0;
};

inline Distribution describe(std::vector<double> values) {
  Distribution d;
  d.n = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  d.min = values.front();
  d.max = values.back();
  d.p10 = quantile_sorted(values, 0.10);
  d.p25 = quantile_sorted(values, 0.25);
  d.p50 = quantile_sorted(values, 0.50);
  d.p75 = quantile_sorted(values, 0.75);
  d.p90 = quantile_sorted(values, 0.90);
  d.p99 = quantile_sorted(values, 0.99);
  return d;
}

}  // namespace greensched::trace
