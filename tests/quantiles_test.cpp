// The project's one quantile rule (trace/quantiles.hpp), the nearest rank: hand-computed
// values on small samples.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "greensched/trace/quantiles.hpp"

namespace greensched::trace {
namespace {

// 1, 2, ..., n.
std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(Quantile, EmptySampleIsZero) {
  EXPECT_EQ(quantile_sorted({}, 0.5), 0.0);
  EXPECT_EQ(quantile_sorted({}, 0.99), 0.0);
  EXPECT_EQ(quantile({}, 0.99), 0.0);
  EXPECT_EQ(describe({}).n, 0U);
  EXPECT_EQ(describe({}).p99, 0.0);
}

TEST(Quantile, OneValueIsEveryQuantile) {
  const std::vector<double> v{7.5};
  for (double p : {0.0, 0.01, 0.5, 0.99, 1.0}) EXPECT_EQ(quantile_sorted(v, p), 7.5) << p;
}

TEST(Quantile, HundredValues) {
  // Rank ceil(p 100): the p99 is the 99th value, 99; the median the 50th, 50 (no averaging).
  const std::vector<double> v = one_to(100);
  EXPECT_EQ(quantile_sorted(v, 0.99), 99.0);
  EXPECT_EQ(quantile_sorted(v, 0.5), 50.0);
  EXPECT_EQ(quantile_sorted(v, 0.9), 90.0);
  EXPECT_EQ(quantile_sorted(v, 0.07), 7.0);  // 0.07 x 100 is 7.000000000000001 in doubles
  EXPECT_EQ(quantile_sorted(v, 0.01), 1.0);
  EXPECT_EQ(quantile_sorted(v, 0.0), 1.0);
  EXPECT_EQ(quantile_sorted(v, 1.0), 100.0);
  EXPECT_EQ(quantile_sorted(v, 0.995), 100.0);  // ceil(99.5)
}

TEST(Quantile, HundredAndOneValues) {
  // ceil(0.99 x 101) = ceil(99.99) = 100; ceil(0.5 x 101) = 51, the middle value.
  const std::vector<double> v = one_to(101);
  EXPECT_EQ(quantile_sorted(v, 0.99), 100.0);
  EXPECT_EQ(quantile_sorted(v, 0.5), 51.0);
  EXPECT_EQ(quantile_sorted(v, 0.25), 26.0);  // ceil(25.25)
  EXPECT_EQ(quantile_sorted(v, 1.0), 101.0);
}

TEST(Quantile, TiesAndUnsortedInput) {
  // Sorted: 1 2 2 2 3. Ranks: p 0.2 -> 1, 0.21 -> 2, 0.5 -> 3, 0.8 -> 4, 0.81 -> 5.
  const std::vector<double> v{2, 3, 1, 2, 2};
  EXPECT_EQ(quantile(v, 0.2), 1.0);
  EXPECT_EQ(quantile(v, 0.21), 2.0);
  EXPECT_EQ(quantile(v, 0.5), 2.0);
  EXPECT_EQ(quantile(v, 0.8), 2.0);
  EXPECT_EQ(quantile(v, 0.81), 3.0);
  // Out-of-range p is clamped.
  EXPECT_EQ(quantile(v, -1.0), 1.0);
  EXPECT_EQ(quantile(v, 2.0), 3.0);
}

TEST(Quantile, DescribeUsesTheSameRule) {
  const Distribution d = describe(one_to(101));
  EXPECT_EQ(d.n, 101U);
  EXPECT_EQ(d.mean, 51.0);
  EXPECT_EQ(d.min, 1.0);
  EXPECT_EQ(d.p10, 11.0);  // ceil(10.1)
  EXPECT_EQ(d.p25, 26.0);
  EXPECT_EQ(d.p50, 51.0);
  EXPECT_EQ(d.p75, 76.0);  // ceil(75.75)
  EXPECT_EQ(d.p90, 91.0);  // ceil(90.9)
  EXPECT_EQ(d.p99, 100.0);
  EXPECT_EQ(d.max, 101.0);
}

}  // namespace
}  // namespace greensched::trace
