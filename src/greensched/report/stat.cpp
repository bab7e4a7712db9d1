#include "greensched/report/stat.hpp"

#include <algorithm>
#include <cmath>

namespace greensched::report {

Stat stat_of(const std::vector<double>& values) {
  Stat s;
  double sum = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    sum += v;
    s.lo = s.n == 0 ? v : std::min(s.lo, v);
    s.hi = s.n == 0 ? v : std::max(s.hi, v);
    ++s.n;
  }
  if (s.n > 0) s.mean = sum / static_cast<double>(s.n);
  return s;
}

}  // namespace greensched::report
