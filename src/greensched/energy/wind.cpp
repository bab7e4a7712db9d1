#include "greensched/energy/wind.hpp"

#include <cmath>

namespace greensched::energy {

double hub_speed_ms(double speed_10m_ms, double height_m, double shear_exponent) {
  if (!std::isfinite(speed_10m_ms) || speed_10m_ms <= 0 || !(height_m > 0)) return 0.0;
  return speed_10m_ms * std::pow(height_m / 10.0, shear_exponent);
}

double turbine_power_kw(const WindTurbine& t, double v) {
  if (!std::isfinite(v) || v < t.cut_in_ms || v >= t.cut_out_ms) return 0.0;
  if (v >= t.rated_ms) return t.rated_kw;
  const double in3 = t.cut_in_ms * t.cut_in_ms * t.cut_in_ms;
  const double rated3 = t.rated_ms * t.rated_ms * t.rated_ms;
  if (rated3 <= in3) return t.rated_kw;
  return t.rated_kw * (v * v * v - in3) / (rated3 - in3);
}

double wind_output_kw(const WindTurbine& t, double speed_10m_ms) {
  return turbine_power_kw(t, hub_speed_ms(speed_10m_ms, t.hub_height_m, t.shear_exponent));
}

}  // namespace greensched::energy
