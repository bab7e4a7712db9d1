// The summary the report draws over repeated runs (seeds): mean, lowest and highest value.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace greensched::report {

struct Stat {
  double mean = std::numeric_limits<double>::quiet_NaN();
  double lo = std::numeric_limits<double>::quiet_NaN();
  double hi = std::numeric_limits<double>::quiet_NaN();
  std::size_t n = 0;  // finite values counted
};

// Over the finite values only (NaN marks a missing value); all NaN when there are none.
Stat stat_of(const std::vector<double>& values);

}  // namespace greensched::report
