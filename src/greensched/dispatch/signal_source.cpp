#include "greensched/dispatch/signal_source.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "greensched/core/utc_time.hpp"

namespace greensched::dispatch {

using nlohmann::json;

namespace {

// "2023-01-01T00:00:00.000Z" and "+00:00" offsets: fractions of a second dropped.
Result<int64_t> parse_stamp(std::string text) {
  if (auto dot = text.find('.'); dot != std::string::npos) {
    std::size_t end = dot + 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    text.erase(dot, end - dot);
  }
  return parse_offset_time(text);
}

// Points (time, value) to a regular series at the smallest spacing between them.
Result<multi::TimeSeries> to_series(std::map<int64_t, double> points, int64_t step_hint,
                                    std::string_view what) {
  if (points.empty()) return Error{fmt::format("{}: no forecast points", what)};
  int64_t step = step_hint;
  for (auto it = points.begin(); std::next(it) != points.end(); ++it) {
    const int64_t gap = std::next(it)->first - it->first;
    if (step <= 0 || gap < step) step = gap;
  }
  if (step <= 0) step = 3600;
  const int64_t first = points.begin()->first;
  const int64_t last = points.rbegin()->first;
  if ((last - first) / step > 1000000) return Error{fmt::format("{}: too many points", what)};
  std::vector<double> values;
  auto it = points.begin();
  double held = it->second;
  for (int64_t t = first; t <= last; t += step) {
    while (it != points.end() && it->first <= t) {
      held = it->second;
      ++it;
    }
    values.push_back(held);
  }
  return multi::TimeSeries(first, step, std::move(values));
}

bool finite_number(const json& v) {
  return v.is_number() && std::isfinite(v.get<double>());
}

}  // namespace

Result<multi::TimeSeries> parse_carbon_aware_forecast(const json& body) {
  const json* forecast = &body;
  if (body.is_array()) {
    if (body.empty()) return Error{"Carbon Aware SDK forecast: an empty array"};
    forecast = &body.front();
  }
  if (!forecast->is_object() || !forecast->contains("forecastData") ||
      !(*forecast)["forecastData"].is_array()) {
    return Error{"Carbon Aware SDK forecast: no forecastData array"};
  }
  std::map<int64_t, double> points;
  int64_t step = 0;
  const json& data = (*forecast)["forecastData"];
  for (std::size_t i = 0; i < data.size(); ++i) {
    const json& p = data[i];
    const std::string where = fmt::format("Carbon Aware SDK forecast: forecastData[{}]", i);
    if (!p.is_object() || !p.contains("timestamp") || !p["timestamp"].is_string() ||
        !p.contains("value") || !finite_number(p["value"])) {
      return Error{fmt::format("{}: needs a timestamp and a numeric value", where)};
    }
    auto t = parse_stamp(p["timestamp"].get<std::string>());
    if (!t.ok()) return Error{fmt::format("{}.timestamp: {}", where, t.error())};
    points[t.value()] = p["value"].get<double>();
    if (p.contains("duration") && finite_number(p["duration"]) && p["duration"].get<double>() > 0) {
      step = static_cast<int64_t>(p["duration"].get<double>() * 60);
    }
  }
  return to_series(std::move(points), step, "Carbon Aware SDK forecast");
}

Result<multi::TimeSeries> parse_electricity_maps_forecast(const json& body) {
  if (!body.is_object() || !body.contains("forecast") || !body["forecast"].is_array()) {
    return Error{"Electricity Maps forecast: no forecast array"};
  }
  std::map<int64_t, double> points;
  const json& data = body["forecast"];
  for (std::size_t i = 0; i < data.size(); ++i) {
    const json& p = data[i];
    const std::string where = fmt::format("Electricity Maps forecast: forecast[{}]", i);
    if (!p.is_object() || !p.contains("datetime") || !p["datetime"].is_string() ||
        !p.contains("carbonIntensity") || !finite_number(p["carbonIntensity"])) {
      return Error{fmt::format("{}: needs a datetime and a numeric carbonIntensity", where)};
    }
    auto t = parse_stamp(p["datetime"].get<std::string>());
    if (!t.ok()) return Error{fmt::format("{}.datetime: {}", where, t.error())};
    points[t.value()] = p["carbonIntensity"].get<double>();
  }
  return to_series(std::move(points), 0, "Electricity Maps forecast");
}

Result<ForecastFormat> parse_forecast_format(std::string_view text) {
  if (text == "carbon-aware-sdk") return ForecastFormat::kCarbonAwareSdk;
  if (text == "electricity-maps") return ForecastFormat::kElectricityMaps;
  return Error{
      fmt::format("unknown forecast format '{}' (carbon-aware-sdk, electricity-maps)", text)};
}

Result<multi::TimeSeries> fetch_forecast(const std::string& url, ForecastFormat format,
                                         std::chrono::milliseconds timeout) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return Error{fmt::format("{}: not an http(s) URL", url)};
  const std::size_t path = url.find('/', scheme + 3);
  const std::string host = url.substr(0, path);
  const std::string target = path == std::string::npos ? "/" : url.substr(path);
  httplib::Client client(host);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  auto res = client.Get(target.c_str());
  if (!res) return Error{fmt::format("GET {}: {}", url, httplib::to_string(res.error()))};
  if (res->status != 200) return Error{fmt::format("GET {}: HTTP {}", url, res->status)};
  const json body = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return Error{fmt::format("GET {}: the reply is not JSON", url)};
  auto series = format == ForecastFormat::kCarbonAwareSdk ? parse_carbon_aware_forecast(body)
                                                          : parse_electricity_maps_forecast(body);
  if (!series.ok()) return Error{fmt::format("GET {}: {}", url, series.error())};
  return series;
}

int64_t SignalClock::signal_s(int64_t wall_s) const {
  if (!start_) return wall_s;
  return *start_ +
         static_cast<int64_t>(std::floor(speed_ * static_cast<double>(wall_s - wall_start_)));
}

int64_t SignalClock::wall_s(int64_t signal_s) const {
  if (!start_) return signal_s;
  return wall_start_ +
         static_cast<int64_t>(std::ceil(static_cast<double>(signal_s - *start_) / speed_));
}

}  // namespace greensched::dispatch
