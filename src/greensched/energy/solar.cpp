#include "greensched/energy/solar.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>

namespace greensched::energy {
namespace {

constexpr double kDeg = std::numbers::pi / 180.0;

}  // namespace

SunPosition sun_position(double latitude_deg, double longitude_deg, int64_t utc_s) {
  using namespace std::chrono;
  const sys_seconds t{seconds{utc_s}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const double day_of_year =
      static_cast<double>((day - sys_days{ymd.year() / January / 1}).count() + 1);
  const double hour = static_cast<double>((t - day).count()) / 3600.0;
  const double days_in_year = ymd.year().is_leap() ? 366.0 : 365.0;

  // NOAA Global Monitoring Division, "General Solar Position Calculations" (Spencer 1971).
  const double g =
      2.0 * std::numbers::pi / days_in_year * (day_of_year - 1.0 + (hour - 12.0) / 24.0);
  const double eot_min = 229.18 * (0.000075 + 0.001868 * std::cos(g) - 0.032077 * std::sin(g) -
                                   0.014615 * std::cos(2 * g) - 0.040849 * std::sin(2 * g));
  const double decl = 0.006918 - 0.399912 * std::cos(g) + 0.070257 * std::sin(g) -
                      0.006758 * std::cos(2 * g) + 0.000907 * std::sin(2 * g) -
                      0.002697 * std::cos(3 * g) + 0.00148 * std::sin(3 * g);
  // True solar time in minutes: UTC clock time plus the equation of time plus 4 min per
  // degree of longitude east.
  const double true_solar_min = hour * 60.0 + eot_min + 4.0 * longitude_deg;
  const double hour_angle_deg = true_solar_min / 4.0 - 180.0;
  const double lat = latitude_deg * kDeg;
  const double cos_z =
      std::clamp(std::sin(lat) * std::sin(decl) +
                     std::cos(lat) * std::cos(decl) * std::cos(hour_angle_deg * kDeg),
                 -1.0, 1.0);
  SunPosition p;
  p.declination_deg = decl / kDeg;
  p.equation_of_time_min = eot_min;
  p.hour_angle_deg = std::remainder(hour_angle_deg, 360.0);
  p.cos_zenith = cos_z;
  p.zenith_deg = std::acos(cos_z) / kDeg;
  return p;
}

double clear_sky_ghi_haurwitz(double cos_zenith) {
  if (!(cos_zenith > 0)) return 0.0;
  return 1098.0 * cos_zenith * std::exp(-0.057 / cos_zenith);
}

double cloudy_ghi_kasten_czeplak(double clear_sky_ghi, double cloud_fraction) {
  const double n = std::isfinite(cloud_fraction) ? std::clamp(cloud_fraction, 0.0, 1.0) : 1.0;
  return clear_sky_ghi * (1.0 - 0.75 * std::pow(n, 3.4));
}

double cell_temperature_c(double ambient_c, double irradiance_w_m2, double noct_c) {
  // NOCT is measured at 800 W/m^2 and 20 C air; the rise is taken as proportional to
  // irradiance (Duffie & Beckman, Solar Engineering of Thermal Processes, ch. 23).
  return ambient_c + (noct_c - 20.0) / 800.0 * irradiance_w_m2;
}

double pv_output_kw(const PvSite& site, int64_t utc_s, double cloud_cover_pct, double ambient_c) {
  const SunPosition sun = sun_position(site.latitude_deg, site.longitude_deg, utc_s);
  const double ghi =
      cloudy_ghi_kasten_czeplak(clear_sky_ghi_haurwitz(sun.cos_zenith), cloud_cover_pct / 100.0);
  if (ghi <= 0) return 0.0;
  const double cell_c = cell_temperature_c(ambient_c, ghi, site.noct_c);
  const double thermal = 1.0 + site.temp_coeff_per_c * (cell_c - 25.0);
  const double kw = site.peak_kw * ghi / 1000.0 * thermal * (1.0 - site.system_losses);
  return std::isfinite(kw) ? std::max(0.0, kw) : 0.0;
}

double pv_energy_kwh(const PvSite& site, int64_t hour_start_s, double cloud_cover_pct,
                     double ambient_c) {
  constexpr int kSlices = 6;
  double sum = 0;
  for (int i = 0; i < kSlices; ++i) {
    const int64_t t = hour_start_s + (2 * i + 1) * 3600 / (2 * kSlices);
    sum += pv_output_kw(site, t, cloud_cover_pct, ambient_c);
  }
  return sum / kSlices;  // mean kW over one hour = kWh
}

}  // namespace greensched::energy
