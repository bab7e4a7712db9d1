// greensched forecast serve: greensched's own carbon forecasts over the Carbon Aware SDK WebAPI,
// so that `dispatch` (carbon_forecast, format carbon-aware-sdk) and any other SDK client can
// plan on them.
//   GET /emissions/forecasts/current?location=Z[&location=Z2][&dataStartAt=&dataEndAt=
//       &windowSize=]   one forecast per location, issued at the start of the current hour of
//                       the signal clock (SignalClock: live, or a replay of the series)
//   GET /emissions/bylocations/best?location=A&location=B[&time=&toTime=]
//                       the lowest-emission hour(s) among the locations over the window:
//                       observed where the hour is complete, forecast where it is not
//   GET /healthz, GET /metrics (Prometheus text: requests, latency, and the error of the
//       forecasts issued so far against the truth as it arrives)
// Bad parameters and unknown locations get 400 with {"error", "title", "status", "detail"}.
//
// A zone's forecast is computed once per issue hour and cached. The forecaster (learned model,
// seasonal-naive where the model cannot forecast) only reads samples complete at the issue
// time; a learned model is only used at issue times at or after its trained_until_s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "greensched/core/prometheus_histogram.hpp"
#include "greensched/core/status.hpp"
#include "greensched/dispatch/signal_source.hpp"
#include "greensched/forecast/learned.hpp"
#include "greensched/forecast/series.hpp"
#include "greensched/serve/listener_security.hpp"

namespace httplib {
class Server;
}

namespace greensched::dispatch {

// One zone's forecast issued at `issue_s` (on the hour): values[h - 1] is the hour starting at
// issue_s + (h - 1) x 3600.
struct IssuedForecast {
  int64_t issue_s = 0;
  std::vector<double> values;
  std::string method;  // "learned" or "seasonal-naive"
  std::string note;    // why the fallback was taken (empty for learned)
};

// (series, issue_s, horizon_h) -> the forecast issued at issue_s for horizons 1..horizon_h.
using Forecaster =
    std::function<Result<IssuedForecast>(const forecast::Series&, int64_t issue_s, int horizon_h)>;

// The learned model where it can forecast (issue time at or after its training's end, enough
// history), else seasonal-naive with the reason in `note`; an error when neither can.
Forecaster learned_forecaster(std::shared_ptr<const forecast::LearnedModel> model);
// Seasonal-naive only (an error with fewer than 24 complete samples).
Forecaster seasonal_naive_forecaster();

// The no-look-ahead rule: refused when the model read data at or after the first signal time
// it would forecast at.
Status check_no_look_ahead(int64_t trained_until_s, int64_t signal_start_s);

struct ForecastReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

struct ForecastServiceOptions {
  int horizon_h = 96;
  std::size_t max_pending_issues = 240;  // per zone, kept for scoring against the truth
};

class ForecastService {
 public:
  using Params = std::multimap<std::string, std::string>;

  ForecastService(std::map<std::string, forecast::Series> zones, Forecaster forecaster,
                  SignalClock clock, ForecastServiceOptions options = {});

  // The two WebAPI routes at wall time `wall_s`.
  ForecastReply current(const Params& params, int64_t wall_s);
  ForecastReply best(const Params& params, int64_t wall_s);
  std::string metrics_text(int64_t wall_s);
  void observe_request(const std::string& route, int status, double seconds);

  // The forecast of `zone` issued at the hour of signal time `signal_s` (cached per hour).
  Result<std::shared_ptr<const IssuedForecast>> issued(const std::string& zone, int64_t signal_s);
  int64_t signal_s(int64_t wall_s) const { return clock_.signal_s(wall_s); }
  const std::map<std::string, forecast::Series>& zones() const { return zones_; }

 private:
  struct Score {
    double abs_sum = 0, pct_sum = 0;
    uint64_t abs_n = 0, pct_n = 0;
  };
  struct Pending {
    std::shared_ptr<const IssuedForecast> forecast;
    int scored = 0;  // horizons 1..scored are scored
  };
  struct ZoneState {
    std::shared_ptr<const IssuedForecast> cached;
    std::vector<Pending> pending;  // oldest first
    Score score[2];                // horizons 1-24, 25-96
    std::map<std::string, uint64_t> issued_by_method;
    uint64_t dropped = 0;
  };
  void settle(const std::string& zone, ZoneState& state, int64_t signal_s);  // mu_ held
  ForecastReply bad_request(const std::string& detail) const;
  // A 400 reply when no location is given or one is not served.
  std::optional<ForecastReply> check_locations(const std::vector<std::string>& locations) const;

  std::map<std::string, forecast::Series> zones_;
  Forecaster forecaster_;
  SignalClock clock_;
  ForecastServiceOptions options_;
  std::mutex mu_;
  std::map<std::string, ZoneState> state_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, PrometheusHistogram> latency_;
};

// The service over HTTP: read and write deadlines on every request (`timeout_s`), security as
// serve's and dispatch's listeners (loopback unless TLS and a token or client CA, or insecure).
class ForecastServer {
 public:
  ForecastServer(ForecastService& service, serve::ListenerSecurity security = {},
                 double timeout_s = 5);
  ~ForecastServer();
  ForecastServer(const ForecastServer&) = delete;
  ForecastServer& operator=(const ForecastServer&) = delete;
  Result<int> start(const std::string& host, int port);
  void stop();

 private:
  ForecastService& service_;
  serve::ListenerSecurity security_;
  double timeout_s_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace greensched::dispatch
