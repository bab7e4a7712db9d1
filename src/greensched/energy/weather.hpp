// Hourly weather at one point, 2023 (../shared/data/energy/weather2023/<ZONE>_2023.json,
// Open-Meteo historical API output). It drives on-site solar (cloud cover, temperature),
// wind (wind speed) and cooling overhead (temperature, humidity).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::energy {

struct Weather {
  double latitude_deg = 0;
  double longitude_deg = 0;  // east positive
  double elevation_m = 0;
  // The file's stamps are local at this fixed offset (no daylight-saving jumps):
  // UTC = local - utc_offset_seconds.
  int64_t utc_offset_seconds = 0;
  int64_t start_s = 0;  // UTC epoch seconds of hour 0; hour i starts at start_s + 3600 i
  std::vector<double> temperature_c;          // temperature_2m
  std::vector<double> relative_humidity_pct;  // relative_humidity_2m
  std::vector<double> cloud_cover_pct;        // cloudcover
  std::vector<double> wind_speed_10m_ms;      // windspeed_10m, converted from km/h to m/s

  std::size_t hours() const { return temperature_c.size(); }
  int64_t time_of(std::size_t hour) const { return start_s + 3600 * static_cast<int64_t>(hour); }
};

// Checks every key's JSON type before use, the time grid (uniform hourly, strictly
// increasing), equal lengths and plausible ranges; a null value is refused, never dropped.
// Errors read "path: key: reason" (with [index] for hourly values).
Result<Weather> read_weather(const std::string& path);
// The same from the file's text; errors name `path`.
Result<Weather> parse_weather(std::string_view text, const std::string& path);

// <data_dir>/energy/weather2023/<zone>_2023.json
std::string weather_file(const std::string& data_dir, const std::string& zone);

}  // namespace greensched::energy
