// Carbon (and price) signals of live clusters. A site's series comes from the fleet file (our
// CSV series, replayed on the service's clock, forecast from the past as in `multi`), or from
// an HTTP forecast service, read again every refresh:
//   carbon-aware-sdk   the Carbon Aware SDK WebAPI, GET <url> of
//                      /emissions/forecasts/current?location=<loc>: a JSON array of forecasts,
//                      each with forecastData [{timestamp, duration (minutes), value}];
//   electricity-maps   Electricity Maps, GET <url> of /v3/carbon-intensity/forecast?zone=<z>:
//                      {forecast: [{datetime, carbonIntensity}]}.
// A forecast becomes a series at the spacing of its points (gaps hold the value before). The
// clock maps wall time to signal time: signal = start + speed x (wall - wall at start), so a
// test can pass an hour of signal in seconds (speed 3600 at start 2023-01-02); without a start
// the signal time is the wall time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/multi/time_series.hpp"

namespace greensched::dispatch {

Result<multi::TimeSeries> parse_carbon_aware_forecast(const nlohmann::json& body);
Result<multi::TimeSeries> parse_electricity_maps_forecast(const nlohmann::json& body);

enum class ForecastFormat { kCarbonAwareSdk, kElectricityMaps };
Result<ForecastFormat> parse_forecast_format(std::string_view text);

// GET `url` (http:// or https://) and parse it in `format`, `timeout` for the connection and
// for each read; errors name the URL.
Result<multi::TimeSeries> fetch_forecast(
    const std::string& url, ForecastFormat format,
    std::chrono::milliseconds timeout = std::chrono::seconds(10));

class SignalClock {
 public:
  // No start: signal time is wall time.
  SignalClock() = default;
  SignalClock(int64_t signal_start_s, double speed, int64_t wall_start_s)
      : start_(signal_start_s), speed_(speed), wall_start_(wall_start_s) {}
  int64_t signal_s(int64_t wall_s) const;
  // The wall time at which the signal reaches `signal_s` (now when it has).
  int64_t wall_s(int64_t signal_s) const;
  double speed() const { return start_ ? speed_ : 1.0; }

 private:
  std::optional<int64_t> start_;
  double speed_ = 1.0;
  int64_t wall_start_ = 0;
};

}  // namespace greensched::dispatch
