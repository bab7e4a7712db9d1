// On-site wind output from the 10 m wind speed of the weather files.
//   Hub height: power law v_hub = v_10 (h / 10)^alpha (Hellmann's exponent; alpha = 1/7 for
//   open terrain, Peterson & Hennessey 1978, J. Appl. Meteor. 17:390-394).
//   Turbine: a generic power curve, 0 below cut-in and at or above cut-out, rated power from
//   the rated speed to cut-out, and between cut-in and rated the cubic
//   P = P_rated (v^3 - v_in^3) / (v_rated^3 - v_in^3), which follows the v^3 law of the power
//   in the wind and joins both ends continuously.
#pragma once

namespace greensched::energy {

struct WindTurbine {
  double rated_kw = 2000;
  double cut_in_ms = 3;
  double rated_ms = 12;
  double cut_out_ms = 25;
  double hub_height_m = 80;
  double shear_exponent = 1.0 / 7.0;
};

// Wind speed at height_m from the speed at 10 m (m/s); 0 for negative or non-finite input.
double hub_speed_ms(double speed_10m_ms, double height_m, double shear_exponent);

// The power curve at a hub-height speed, kW.
double turbine_power_kw(const WindTurbine& turbine, double hub_speed_ms);

// Output in kW from the 10 m speed (scaled to the turbine's hub height).
double wind_output_kw(const WindTurbine& turbine, double speed_10m_ms);

}  // namespace greensched::energy
