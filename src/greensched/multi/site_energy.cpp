#include "greensched/multi/site_energy.hpp"

#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/energy/price_series.hpp"
#include "greensched/energy/solar.hpp"
#include "greensched/energy/wind.hpp"

namespace greensched::multi {

std::string resolve_data_path(const std::string& path, const std::string& data_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(data_dir) / path).string();
}

namespace {

using nlohmann::json;

// Refuses keys outside `known`, so a misspelt key is an error rather than a silent default.
Status known_keys(const json& obj, std::initializer_list<std::string_view> known,
                  const std::string& where) {
  for (const auto& [key, value] : obj.items()) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || key == k;
    if (!ok) return Error{fmt::format("{}.{}: unknown key", where, key)};
  }
  return Status::Ok();
}

// obj[key] as a finite number in [lo, hi], or `fallback` when absent.
Result<double> number_in(const json& obj, const char* key, const std::string& where,
                         double fallback, double lo, double hi) {
  const auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_number()) {
    return Error{fmt::format("{}.{}: is {}, expected a number", where, key, it->type_name())};
  }
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    return Error{fmt::format("{}.{}: {} is outside [{}, {}]", where, key, v, lo, hi)};
  }
  return v;
}

Result<std::string> path_of(const json& obj, const char* key, const std::string& where,
                            const std::string& data_dir) {
  const auto it = obj.find(key);
  if (it == obj.end()) return std::string();
  if (!it->is_string() || it->get<std::string>().empty()) {
    return Error{
        fmt::format("{}.{}: is {}, expected a non-empty path", where, key, it->type_name())};
  }
  return resolve_data_path(it->get<std::string>(), data_dir);
}

Result<energy::BatterySpec> parse_battery(const json& j, const std::string& where) {
  if (!j.is_object()) {
    return Error{fmt::format("{}: is {}, expected an object", where, j.type_name())};
  }
  if (Status s = known_keys(j, {"kwh", "kw", "efficiency", "soc_min", "soc_max"}, where); !s.ok()) {
    return Error{s.message()};
  }
  constexpr double kBig = 1e9;
  auto kwh = number_in(j, "kwh", where, 0, 0, kBig);
  auto kw = number_in(j, "kw", where, 0, 0, kBig);
  auto eff = number_in(j, "efficiency", where, 0.9, 1e-6, 1);
  auto lo = number_in(j, "soc_min", where, 0.1, 0, 1);
  auto hi = number_in(j, "soc_max", where, 0.9, 0, 1);
  for (const auto* r : {&kwh, &kw, &eff, &lo, &hi}) {
    if (!r->ok()) return Error{r->error()};
  }
  energy::BatterySpec b;
  b.capacity_kwh = kwh.value();
  b.max_charge_kw = b.max_discharge_kw = kw.value();
  b.round_trip_efficiency = eff.value();
  b.soc_min = lo.value();
  b.soc_max = hi.value();
  b.initial_soc = lo.value();
  if (Status s = energy::validate(b); !s.ok())
    return Error{fmt::format("{}: {}", where, s.message())};
  return b;
}

Result<energy::CoolingModel> parse_cooling(const json& j, const std::string& where) {
  energy::CoolingModel m;
  if (j.is_boolean()) return m;
  if (!j.is_object()) {
    return Error{fmt::format("{}: is {}, expected true or an object", where, j.type_name())};
  }
  struct Field {
    const char* key;
    double* value;
    double lo, hi;
  };
  const Field fields[] = {{"base_pue", &m.base_pue, 1, 5},
                          {"free_cooling_below_c", &m.free_cooling_below_c, -50, 60},
                          {"pue_per_c", &m.pue_per_c, 0, 1},
                          {"humid_above_pct", &m.humid_above_pct, 0, 100},
                          {"pue_per_humidity_pct", &m.pue_per_humidity_pct, 0, 1},
                          {"min_pue", &m.min_pue, 1, 5},
                          {"max_pue", &m.max_pue, 1, 5}};
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const Field& f : fields) ok = ok || key == f.key;
    if (!ok) return Error{fmt::format("{}.{}: unknown key", where, key)};
  }
  for (const Field& f : fields) {
    auto v = number_in(j, f.key, where, *f.value, f.lo, f.hi);
    if (!v.ok()) return Error{v.error()};
    *f.value = v.value();
  }
  m.fallback_pue = std::clamp(m.fallback_pue, m.min_pue, m.max_pue);
  if (Status s = energy::validate(m); !s.ok())
    return Error{fmt::format("{}: {}", where, s.message())};
  return m;
}

}  // namespace

void derive_hourly_series(SiteEnergy& site, const energy::Weather& w) {
  if (w.hours() == 0) return;
  std::vector<double> pv(w.hours()), pv_clear(w.hours()), wind(w.hours()), pue(w.hours());
  const energy::PvSite array{w.latitude_deg, w.longitude_deg, site.pv_kw};
  energy::WindTurbine turbine;
  turbine.rated_kw = site.wind_kw;
  for (std::size_t h = 0; h < w.hours(); ++h) {
    pv[h] = site.pv_kw > 0 ? energy::pv_energy_kwh(array, w.time_of(h), w.cloud_cover_pct[h],
                                                   w.temperature_c[h])
                           : 0.0;
    pv_clear[h] =
        site.pv_kw > 0 ? energy::pv_energy_kwh(array, w.time_of(h), 0.0, w.temperature_c[h]) : 0.0;
    wind[h] = site.wind_kw > 0 ? energy::wind_output_kw(turbine, w.wind_speed_10m_ms[h]) : 0.0;
    if (site.cooling) {
      pue[h] = energy::pue(*site.cooling, w.temperature_c[h], w.relative_humidity_pct[h]);
    }
  }
  site.pv_kwh = TimeSeries(w.start_s, 3600, std::move(pv));
  site.pv_clear_kwh = TimeSeries(w.start_s, 3600, std::move(pv_clear));
  site.wind_kwh = TimeSeries(w.start_s, 3600, std::move(wind));
  site.wind_speed_ms = TimeSeries(w.start_s, 3600, w.wind_speed_10m_ms);
  if (site.cooling) site.pue = TimeSeries(w.start_s, 3600, std::move(pue));
}

Result<SiteEnergy> parse_site_energy(const json& j, const std::string& where,
                                     const std::string& data_dir,
                                     std::optional<TimeSeries>& price) {
  if (!j.is_object()) {
    return Error{fmt::format("{}: is {}, expected an object", where, j.type_name())};
  }
  if (Status s = known_keys(
          j, {"pv_kw", "wind_kw", "battery", "weather", "price", "export_price", "cooling"}, where);
      !s.ok()) {
    return Error{s.message()};
  }
  SiteEnergy site;
  auto pv = number_in(j, "pv_kw", where, 0, 0, 1e9);
  auto wind = number_in(j, "wind_kw", where, 0, 0, 1e9);
  auto feed_in = number_in(j, "export_price", where, 0, -10, 10);
  for (const auto* r : {&pv, &wind, &feed_in}) {
    if (!r->ok()) return Error{r->error()};
  }
  site.pv_kw = pv.value();
  site.wind_kw = wind.value();
  site.allow_export = j.contains("export_price");
  site.export_price_usd_per_kwh = feed_in.value();
  if (j.contains("battery")) {
    auto b = parse_battery(j["battery"], where + ".battery");
    if (!b.ok()) return Error{b.error()};
    site.battery = b.value();
  }
  if (j.contains("cooling") && !(j["cooling"].is_boolean() && !j["cooling"].get<bool>())) {
    auto c = parse_cooling(j["cooling"], where + ".cooling");
    if (!c.ok()) return Error{c.error()};
    site.cooling = c.value();
  }
  auto weather_path = path_of(j, "weather", where, data_dir);
  if (!weather_path.ok()) return Error{weather_path.error()};
  if (weather_path.value().empty()) {
    if (site.pv_kw > 0 || site.wind_kw > 0 || site.cooling) {
      return Error{fmt::format("{}.weather: missing (pv_kw, wind_kw and cooling need it)", where)};
    }
  } else {
    auto w = energy::read_weather(weather_path.value());
    if (!w.ok()) return Error{fmt::format("{}.weather: {}", where, w.error())};
    site.weather_source = j["weather"].get<std::string>();
    site.utc_offset_s = w.value().utc_offset_seconds;
    derive_hourly_series(site, w.value());
  }
  auto price_path = path_of(j, "price", where, data_dir);
  if (!price_path.ok()) return Error{price_path.error()};
  if (!price_path.value().empty()) {
    if (price) return Error{fmt::format("{}.price: the site has a `price` already", where)};
    auto p = energy::read_price_series(price_path.value());
    if (!p.ok()) return Error{fmt::format("{}.price: {}", where, p.error())};
    price = TimeSeries(p.value().usd_per_kwh.start_s, p.value().usd_per_kwh.step_s,
                       p.value().usd_per_kwh.values);
  }
  return site;
}

}  // namespace greensched::multi
