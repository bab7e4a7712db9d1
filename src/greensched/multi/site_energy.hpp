// A site's own energy assets, as the fleet file's optional `energy` block describes them:
// solar and wind sized in kW, a battery, a feed-in price for exported energy (or curtailment),
// and a weather-driven cooling PUE. From the site's weather file they become hourly series of
// on-site generation (kWh per hour) and PUE, on a UTC grid that repeats outside its span
// like every TimeSeries, so a year of weather drives a replay that starts anywhere in it.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "greensched/core/status.hpp"
#include "greensched/energy/battery.hpp"
#include "greensched/energy/cooling.hpp"
#include "greensched/energy/weather.hpp"
#include "greensched/multi/time_series.hpp"

namespace greensched::multi {

// A fleet file's path: relative ones are under `data_dir`, absolute ones as given.
std::string resolve_data_path(const std::string& path, const std::string& data_dir);

struct SiteEnergy {
  double pv_kw = 0;             // peak DC rating of a horizontal array (energy/solar.hpp)
  double wind_kw = 0;           // rated power of the turbines (energy/wind.hpp, generic curve)
  energy::BatterySpec battery;  // capacity 0: no battery
  bool allow_export = false;    // false: surplus is curtailed
  double export_price_usd_per_kwh = 0;
  std::optional<energy::CoolingModel> cooling;  // PUE from the weather instead of `pue`
  std::string weather_source;
  int64_t utc_offset_s = 0;  // the site's local time = UTC + this (from its weather file)
  TimeSeries pv_kwh;         // per hour; empty without weather
  TimeSeries pv_clear_kwh;   // per hour under a clear sky (the same hours); for forecasts
  TimeSeries wind_kwh;       // per hour; empty without weather
  TimeSeries wind_speed_ms;  // per hour, at 10 m (the weather's); for forecasts
  TimeSeries pue;            // per hour; empty without cooling

  // On-site generation in the hour holding epoch second t, kWh.
  double generation_kwh(int64_t t) const {
    return (pv_kwh.empty() ? 0.0 : pv_kwh.at(t)) + (wind_kwh.empty() ? 0.0 : wind_kwh.at(t));
  }
};

// Hourly generation and PUE from a site's weather (its latitude and longitude place the sun).
void derive_hourly_series(SiteEnergy& site, const energy::Weather& weather);

// Reads a site's `energy` block (`where` is "fleet.json: sites[i].energy"):
//   pv_kw, wind_kw        numbers >= 0 (default 0)
//   battery               {kwh, kw, efficiency, soc_min, soc_max}: kw limits both directions;
//                         efficiency is round-trip (default 0.9); SOC window default 0.1-0.9
//   weather               Open-Meteo JSON (energy::read_weather), needed for pv, wind, cooling
//   price                 hourly USD/MWh CSV (energy::read_price_series), negatives kept; it
//                         becomes the site's price series (then the site has no other `price`)
//   export_price          USD/kWh paid for exported energy; absent: surplus is curtailed
//   cooling               true (energy/cooling.hpp defaults) or {base_pue, free_cooling_below_c,
//                         pue_per_c, humid_above_pct, pue_per_humidity_pct, min_pue, max_pue}
// Relative paths are resolved against data_dir. `price` is set when the block has one.
Result<SiteEnergy> parse_site_energy(const nlohmann::json& block, const std::string& where,
                                     const std::string& data_dir, std::optional<TimeSeries>& price);

}  // namespace greensched::multi
