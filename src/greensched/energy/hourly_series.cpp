#include "greensched/energy/hourly_series.hpp"

namespace greensched::energy {

std::optional<double> HourlySeries::at(int64_t t) const {
  if (step_s <= 0 || t < start_s || t >= end_s()) return std::nullopt;
  return values[static_cast<std::size_t>((t - start_s) / step_s)];
}

}  // namespace greensched::energy
