// On-site photovoltaic output from the sun's position, cloud cover and air temperature.
// Each step is a published model, chosen because it needs only what the weather files give:
//   sun position    NOAA General Solar Position (Spencer 1971 Fourier series for declination
//                   and the equation of time);
//   clear-sky GHI   Haurwitz (1945): GHI = 1098 cos z exp(-0.057 / cos z) W/m^2;
//   cloud cover     Kasten & Czeplak (1980): GHI = GHI_clear (1 - 0.75 N^3.4), N in [0, 1];
//   cell heat       NOCT model: T_cell = T_air + (NOCT - 20) / 800 * G;
//   module output   P = P_peak * G / 1000 * (1 + gamma (T_cell - 25)) * (1 - losses).
// The panel is horizontal (plane-of-array irradiance = GHI): no tilt, no diffuse split.
#pragma once

#include <cstdint>

namespace greensched::energy {

struct SunPosition {
  double declination_deg = 0;
  double equation_of_time_min = 0;
  double hour_angle_deg = 0;  // 0 at solar noon, negative in the morning
  double zenith_deg = 0;      // 0 overhead, > 90 below the horizon
  double cos_zenith = 0;
};

// At latitude / longitude (degrees, north and east positive) at a UTC time.
SunPosition sun_position(double latitude_deg, double longitude_deg, int64_t utc_s);

// Haurwitz clear-sky global horizontal irradiance, W/m^2; 0 when the sun is down.
double clear_sky_ghi_haurwitz(double cos_zenith);

// Kasten-Czeplak cloud attenuation; cloud_fraction is clamped to [0, 1].
double cloudy_ghi_kasten_czeplak(double clear_sky_ghi, double cloud_fraction);

// NOCT cell temperature, degrees C, for irradiance in W/m^2.
double cell_temperature_c(double ambient_c, double irradiance_w_m2, double noct_c);

struct PvSite {
  double latitude_deg = 0;
  double longitude_deg = 0;
  double peak_kw = 0;                // DC rating at 1000 W/m^2 and 25 C cell temperature
  double system_losses = 0.14;       // wiring, inverter, soiling (PVWatts default 14 %)
  double temp_coeff_per_c = -0.004;  // power change per degree C above 25 (crystalline Si)
  double noct_c = 45.0;              // nominal operating cell temperature
};

// Output in kW at a UTC instant with cloud cover in % and air temperature in C.
double pv_output_kw(const PvSite& site, int64_t utc_s, double cloud_cover_pct, double ambient_c);

// Energy in kWh over the hour starting at hour_start_s, weather held for the hour: the mean
// of six instants at the middles of its 10-minute slices, so sunrise and sunset hours are
// not all-or-nothing.
double pv_energy_kwh(const PvSite& site, int64_t hour_start_s, double cloud_cover_pct,
                     double ambient_c);

}  // namespace greensched::energy
