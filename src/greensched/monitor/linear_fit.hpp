// Ordinary least squares of y on x (y = intercept + slope x) with its goodness of fit: the
// coefficient of determination R² and the mean absolute error of the fitted line.
#pragma once

#include <cstdint>
#include <span>

#include "greensched/core/status.hpp"

namespace greensched::monitor {

struct LinearFit {
  double intercept = 0;
  double slope = 0;
  double r2 = 0;   // 1 - SS_res / SS_tot (1 when y has no spread and the fit is exact)
  double mae = 0;  // mean |y - fitted|
  int64_t n = 0;
  double x_min = 0;
  double x_max = 0;
};

// Fails with fewer than 3 points or when x has (almost) no spread.
Result<LinearFit> fit_linear(std::span<const double> x, std::span<const double> y);

}  // namespace greensched::monitor
