#include "greensched/energy/weather.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/json_fields.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/energy/hourly_series.hpp"

namespace greensched::energy {
namespace {

using nlohmann::json;

constexpr double kMsPerKmh = 1000.0 / 3600.0;

struct Range {
  double lo;
  double hi;
};

// A finite number inside [lo, hi] at `key` of `object`.
Result<double> number_at(const std::string& path, const json& object, std::string_view key,
                         Range range) {
  const auto it = object.find(key);
  if (it == object.end()) return Error{fmt::format("{}: {}: missing", path, key)};
  if (!it->is_number()) {
    return Error{fmt::format("{}: {}: is {}, expected a number", path, key, it->type_name())};
  }
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < range.lo || v > range.hi) {
    return Error{fmt::format("{}: {}: {} is outside [{}, {}]", path, key, v, range.lo, range.hi)};
  }
  return v;
}

// The array `hourly.<key>` of `n` numbers inside the range, each scaled by `scale`.
Result<std::vector<double>> hourly_numbers(const std::string& path, const json& hourly,
                                           std::string_view key, std::size_t n, Range range,
                                           double scale) {
  const auto it = hourly.find(key);
  if (it == hourly.end()) return Error{fmt::format("{}: hourly.{}: missing", path, key)};
  if (!it->is_array()) {
    return Error{
        fmt::format("{}: hourly.{}: is {}, expected an array", path, key, it->type_name())};
  }
  if (it->size() != n) {
    return Error{
        fmt::format("{}: hourly.{}: has {} values, hourly.time has {}", path, key, it->size(), n)};
  }
  std::vector<double> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const json& v = (*it)[i];
    if (!v.is_number()) {
      return Error{
          fmt::format("{}: hourly.{}[{}]: is {}, expected a number", path, key, i, v.type_name())};
    }
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < range.lo || x > range.hi) {
      return Error{fmt::format("{}: hourly.{}[{}]: {} is outside [{}, {}]", path, key, i, x,
                               range.lo, range.hi)};
    }
    out.push_back(x * scale);
  }
  return out;
}

}  // namespace

std::string weather_file(const std::string& data_dir, const std::string& zone) {
  return fmt::format("{}/energy/weather2023/{}_2023.json", data_dir, zone);
}

Result<Weather> read_weather(const std::string& path) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  return parse_weather(text.value(), path);
}

Result<Weather> parse_weather(std::string_view text, const std::string& path) {
  const json doc = parse_json_or_discarded(text);
  if (doc.is_discarded()) return Error{fmt::format("{}: not valid JSON", path)};
  if (!doc.is_object()) {
    return Error{fmt::format("{}: top level is {}, expected an object", path, doc.type_name())};
  }

  Weather w;
  const auto lat = number_at(path, doc, "latitude", {-90, 90});
  if (!lat.ok()) return Error{lat.error()};
  const auto lon = number_at(path, doc, "longitude", {-180, 180});
  if (!lon.ok()) return Error{lon.error()};
  const auto elevation = number_at(path, doc, "elevation", {-500, 9000});
  if (!elevation.ok()) return Error{elevation.error()};
  w.latitude_deg = lat.value();
  w.longitude_deg = lon.value();
  w.elevation_m = elevation.value();

  const auto offset = doc.find("utc_offset_seconds");
  if (offset == doc.end()) return Error{fmt::format("{}: utc_offset_seconds: missing", path)};
  if (!offset->is_number_integer()) {
    return Error{fmt::format("{}: utc_offset_seconds: is {}, expected an integer", path,
                             offset->type_name())};
  }
  // An unsigned value too large for int64 would wrap; anything above the range is refused.
  const bool huge = offset->is_number_unsigned() && offset->get<uint64_t>() > 14 * 3600;
  w.utc_offset_seconds = huge ? 14 * 3600 + 1 : offset->get<int64_t>();
  if (w.utc_offset_seconds < -14 * 3600 || w.utc_offset_seconds > 14 * 3600) {
    return Error{fmt::format("{}: utc_offset_seconds: {} is outside [-50400, 50400]", path,
                             w.utc_offset_seconds)};
  }

  const auto hourly = doc.find("hourly");
  if (hourly == doc.end()) return Error{fmt::format("{}: hourly: missing", path)};
  if (!hourly->is_object()) {
    return Error{fmt::format("{}: hourly: is {}, expected an object", path, hourly->type_name())};
  }
  const auto times = hourly->find("time");
  if (times == hourly->end()) return Error{fmt::format("{}: hourly.time: missing", path)};
  if (!times->is_array() || times->empty()) {
    return Error{fmt::format("{}: hourly.time: is {}, expected a non-empty array", path,
                             times->is_array() ? "an empty array" : times->type_name())};
  }
  // The wind conversion assumes km/h; refuse a file that says otherwise.
  if (const auto units = doc.find("hourly_units"); units != doc.end() && units->is_object()) {
    const auto wind_unit = units->find("windspeed_10m");
    if (wind_unit != units->end() && (!wind_unit->is_string() || *wind_unit != "km/h")) {
      return Error{fmt::format("{}: hourly_units.windspeed_10m: is {}, expected \"km/h\"", path,
                               wind_unit->dump())};
    }
  }
  const std::size_t n = times->size();
  for (std::size_t i = 0; i < n; ++i) {
    const json& v = (*times)[i];
    if (!v.is_string()) {
      return Error{
          fmt::format("{}: hourly.time[{}]: is {}, expected a string", path, i, v.type_name())};
    }
    const auto& stamp = v.get_ref<const std::string&>();
    const auto local = parse_offset_time(stamp);
    if (!local.ok()) return Error{fmt::format("{}: hourly.time[{}]: {}", path, i, local.error())};
    const int64_t utc = local.value() - w.utc_offset_seconds;
    if (i == 0) {
      w.start_s = utc;
    } else if (utc != w.start_s + kSecondsPerHour * static_cast<int64_t>(i)) {
      return Error{fmt::format(
          "{}: hourly.time[{}]: '{}' is not {} h after hourly.time[0] (expected a uniform "
          "hourly grid)",
          path, i, stamp, i)};
    }
  }

  // Ranges are physical limits with a margin (the record lows and highs on Earth), so only
  // corrupt values are refused.
  auto temperature = hourly_numbers(path, *hourly, "temperature_2m", n, {-95, 65}, 1.0);
  if (!temperature.ok()) return Error{temperature.error()};
  auto humidity = hourly_numbers(path, *hourly, "relative_humidity_2m", n, {0, 100}, 1.0);
  if (!humidity.ok()) return Error{humidity.error()};
  auto cloud = hourly_numbers(path, *hourly, "cloudcover", n, {0, 100}, 1.0);
  if (!cloud.ok()) return Error{cloud.error()};
  auto wind = hourly_numbers(path, *hourly, "windspeed_10m", n, {0, 450}, kMsPerKmh);
  if (!wind.ok()) return Error{wind.error()};
  w.temperature_c = std::move(temperature.value());
  w.relative_humidity_pct = std::move(humidity.value());
  w.cloud_cover_pct = std::move(cloud.value());
  w.wind_speed_10m_ms = std::move(wind.value());
  return w;
}

}  // namespace greensched::energy
