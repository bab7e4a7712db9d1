#include "greensched/monitor/linear_fit.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace greensched::monitor {

Result<LinearFit> fit_linear(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) return Error{"x and y differ in length"};
  const std::size_t n = x.size();
  if (n < 3) return Error{fmt::format("{} points; at least 3 are needed", n)};
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx / static_cast<double>(n) < 1e-6) {
    return Error{"the samples do not vary in x (utilisation); run a load to span it"};
  }
  LinearFit f;
  f.n = static_cast<int64_t>(n);
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  double ss_res = 0, abs_sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = y[i] - (f.intercept + f.slope * x[i]);
    ss_res += r * r;
    abs_sum += std::abs(r);
  }
  f.r2 = syy > 0 ? 1.0 - ss_res / syy : 1.0;
  f.mae = abs_sum / static_cast<double>(n);
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  f.x_min = *lo;
  f.x_max = *hi;
  return f;
}

}  // namespace greensched::monitor
