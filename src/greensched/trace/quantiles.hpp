// Quantiles of samples, one rule for the whole project: the nearest rank. The p-quantile of
// n values sorted in ascending order is the value of rank ceil(p n) (ranks 1..n; rank 1 for
// p = 0): the smallest value with at least a share p of the sample at or below it. It is
// always a value that occurred (a delay some job had) and needs no interpolation; it is the
// usual rule for queueing-delay percentiles. For the exact rank, p is rounded to millionths
// first (0.99 x 100 is then 99, not 98.99...). An empty sample has every quantile 0, the
// figure reports show where no job ran.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace greensched::trace {

// `sorted` in ascending order; p is clamped to [0, 1].
inline double quantile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0.0;
  constexpr uint64_t kParts = 1'000'000;
  const auto parts = static_cast<uint64_t>(std::llround(std::clamp(p, 0.0, 1.0) * kParts));
  const uint64_t rank = std::max<uint64_t>((sorted.size() * parts + kParts - 1) / kParts, 1);
  return sorted[rank - 1];
}

// The same rule on values in any order.
inline double quantile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, p);
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
