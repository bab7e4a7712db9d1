#include "greensched/energy/cooling.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace greensched::energy {

Status validate(const CoolingModel& m) {
  if (!(m.min_pue >= 1 && m.min_pue <= m.base_pue && m.base_pue <= m.max_pue &&
        std::isfinite(m.max_pue))) {
    return Error{fmt::format("cooling: need 1 <= min_pue ({}) <= base_pue ({}) <= max_pue ({})",
                             m.min_pue, m.base_pue, m.max_pue)};
  }
  if (!(m.pue_per_c >= 0 && m.pue_per_humidity_pct >= 0 && std::isfinite(m.pue_per_c) &&
        std::isfinite(m.pue_per_humidity_pct) && std::isfinite(m.free_cooling_below_c) &&
        std::isfinite(m.humid_above_pct))) {
    return Error{
        fmt::format("cooling: slopes pue_per_c {} and pue_per_humidity_pct {} must be "
                    "finite and >= 0, thresholds finite",
                    m.pue_per_c, m.pue_per_humidity_pct)};
  }
  if (!(m.fallback_pue >= m.min_pue && m.fallback_pue <= m.max_pue)) {
    return Error{fmt::format("cooling: fallback_pue {} is outside [{}, {}]", m.fallback_pue,
                             m.min_pue, m.max_pue)};
  }
  return Status::Ok();
}

double pue(const CoolingModel& m, double temperature_c, double relative_humidity_pct) {
  if (!std::isfinite(temperature_c) || !std::isfinite(relative_humidity_pct)) {
    return m.fallback_pue;
  }
  const double heat = std::max(0.0, temperature_c - m.free_cooling_below_c) * m.pue_per_c;
  const double humid =
      std::max(0.0, relative_humidity_pct - m.humid_above_pct) * m.pue_per_humidity_pct;
  return std::clamp(m.base_pue + heat + humid, m.min_pue, m.max_pue);
}

}  // namespace greensched::energy
