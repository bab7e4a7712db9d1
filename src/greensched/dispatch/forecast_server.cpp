#include "greensched/dispatch/forecast_server.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "greensched/core/http_listener.hpp"
#include "greensched/core/prometheus_text.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/dispatch/dispatch_server.hpp"
#include "greensched/forecast/baselines.hpp"

namespace greensched::dispatch {

using nlohmann::json;

namespace {

constexpr std::array<double, 10> kForecastLatencyBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                           0.025,  0.05,  0.1,    0.25,  1.0};
constexpr const char* kBucketNames[2] = {"1-24", "25-96"};

// "2023-01-02T00:00:00+00:00", as the SDK writes its stamps.
std::string sdk_time(int64_t t) {
  std::string s = format_utc_time(t);
  if (s.size() > 10 && s[10] == ' ') s[10] = 'T';
  return s + "+00:00";
}

// An SDK stamp: fractions of a second dropped, "Z" or an offset.
Result<int64_t> parse_sdk_time(std::string text) {
  if (auto dot = text.find('.'); dot != std::string::npos) {
    std::size_t end = dot + 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    text.erase(dot, end - dot);
  }
  // A '+' in a query string may arrive as a space.
  if (text.size() > 19 && text[19] == ' ') text[19] = '+';
  return parse_offset_time(text);
}

std::vector<std::string> values_of(const ForecastService::Params& params, const std::string& key) {
  std::vector<std::string> out;
  auto [lo, hi] = params.equal_range(key);
  for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  return out;
}

// At most one value of `key`: nullopt-like empty string when absent; error when repeated.
Result<std::string> one_value(const ForecastService::Params& params, const std::string& key) {
  const auto v = values_of(params, key);
  if (v.size() > 1) return Error{fmt::format("{} is given {} times; give it once", key, v.size())};
  return v.empty() ? std::string() : v.front();
}

Result<std::optional<int64_t>> time_param(const ForecastService::Params& params,
                                          const std::string& key) {
  auto text = one_value(params, key);
  if (!text.ok()) return text.status().error();
  if (text.value().empty()) return std::optional<int64_t>();
  auto t = parse_sdk_time(text.value());
  if (!t.ok()) return Error{fmt::format("{} '{}': {}", key, text.value(), t.error())};
  return std::optional<int64_t>(t.value());
}

json sdk_point(const std::string& location, int64_t t, int duration_min, double value) {
  return {{"location", location},
          {"timestamp", sdk_time(t)},
          {"duration", duration_min},
          {"value", value}};
}

}  // namespace

Forecaster seasonal_naive_forecaster() {
  return [](const forecast::Series& s, int64_t issue_s, int horizon_h) -> Result<IssuedForecast> {
    std::vector<int> horizons(static_cast<std::size_t>(horizon_h));
    for (int h = 1; h <= horizon_h; ++h) horizons[static_cast<std::size_t>(h - 1)] = h;
    IssuedForecast f;
    f.issue_s = issue_s;
    f.method = "seasonal-naive";
    f.values = forecast::seasonal_naive(s, issue_s, horizons);
    for (double v : f.values) {
      if (!std::isfinite(v)) {
        return Error{
            fmt::format("{}: no forecast at {}: fewer than 24 hours of the series are complete",
                        s.name, sdk_time(issue_s))};
      }
    }
    return f;
  };
}

Forecaster learned_forecaster(std::shared_ptr<const forecast::LearnedModel> model) {
  Forecaster naive = seasonal_naive_forecaster();
  return [model, naive](const forecast::Series& s, int64_t issue_s,
                        int horizon_h) -> Result<IssuedForecast> {
    std::string why;
    if (issue_s < model->trained_until_s()) {
      why = fmt::format("the model was trained on data until {} (after the issue time)",
                        sdk_time(model->trained_until_s()));
    } else if (horizon_h > model->max_horizon_h()) {
      why = fmt::format("the model forecasts {} h at most", model->max_horizon_h());
    } else {
      std::vector<int> horizons(static_cast<std::size_t>(horizon_h));
      for (int h = 1; h <= horizon_h; ++h) horizons[static_cast<std::size_t>(h - 1)] = h;
      auto values = model->forecast({&s, nullptr}, issue_s, horizons);
      if (values.ok()) {
        return IssuedForecast{issue_s, std::move(values.value()), "learned", ""};
      }
      why = values.status().message();
    }
    auto f = naive(s, issue_s, horizon_h);
    if (!f.ok()) return f;
    f.value().note = why;
    return f;
  };
}

Status check_no_look_ahead(int64_t trained_until_s, int64_t signal_start_s) {
  if (trained_until_s > signal_start_s) {
    return Error{fmt::format(
        "the model was trained on data until {}, after the signal clock's start {}: its "
        "forecasts would have seen the hours they forecast (look-ahead). Train one that ends "
        "at or before the start: greensched forecast train --series carbon --until {} --out DIR",
        format_utc_time(trained_until_s), format_utc_time(signal_start_s),
        format_utc_time(signal_start_s).substr(0, 10))};
  }
  return Status::Ok();
}

ForecastService::ForecastService(std::map<std::string, forecast::Series> zones,
                                 Forecaster forecaster, SignalClock clock,
                                 ForecastServiceOptions options)
    : zones_(std::move(zones)),
      forecaster_(std::move(forecaster)),
      clock_(clock),
      options_(options) {
  for (const auto& [name, series] : zones_) state_[name];
}

std::optional<ForecastReply> ForecastService::check_locations(
    const std::vector<std::string>& locations) const {
  if (locations.empty()) return bad_request("location is required (location=ZONE, repeatable)");
  for (const std::string& loc : locations) {
    if (!zones_.contains(loc)) {
      std::string known;
      for (const auto& [name, s] : zones_) known += (known.empty() ? "" : ", ") + name;
      return bad_request(fmt::format("unknown location '{}' (known: {})", loc, known));
    }
  }
  return std::nullopt;
}

ForecastReply ForecastService::bad_request(const std::string& detail) const {
  ForecastReply r;
  r.status = 400;
  r.body =
      json{{"error", detail}, {"title", "Bad Request"}, {"status", 400}, {"detail", detail}}.dump();
  return r;
}

Result<std::shared_ptr<const IssuedForecast>> ForecastService::issued(const std::string& zone,
                                                                      int64_t signal_s) {
  const auto series = zones_.find(zone);
  if (series == zones_.end()) return Error{fmt::format("unknown location '{}'", zone)};
  const int64_t issue = floor_hour(signal_s);
  std::lock_guard lock(mu_);
  ZoneState& st = state_[zone];
  if (st.cached && st.cached->issue_s == issue) return st.cached;
  auto f = forecaster_(series->second, issue, options_.horizon_h);
  if (!f.ok()) return f.status().error();
  auto made = std::make_shared<const IssuedForecast>(std::move(f.value()));
  st.cached = made;
  ++st.issued_by_method[made->method];
  st.pending.push_back({made, 0});
  while (st.pending.size() > options_.max_pending_issues) {
    st.pending.erase(st.pending.begin());
    ++st.dropped;
  }
  settle(zone, st, signal_s);
  return made;
}

void ForecastService::settle(const std::string& zone, ZoneState& st, int64_t signal_s) {
  const forecast::Series& s = zones_.at(zone);
  const std::size_t known = forecast::known_count(s, signal_s);
  for (Pending& p : st.pending) {
    const int n = static_cast<int>(p.forecast->values.size());
    while (p.scored < n) {
      const int h = p.scored + 1;
      const int64_t target = p.forecast->issue_s + static_cast<int64_t>(h - 1) * forecast::kHourS;
      if (target < s.start_s) {
        ++p.scored;
        continue;
      }
      const auto i = static_cast<std::size_t>((target - s.start_s) / forecast::kHourS);
      if (i >= known) break;  // its hour is not complete yet (or beyond the series)
      const double truth = s.values[i];
      const double err = std::abs(p.forecast->values[static_cast<std::size_t>(h - 1)] - truth);
      Score& sc = st.score[h <= 24 ? 0 : 1];
      sc.abs_sum += err;
      ++sc.abs_n;
      if (std::abs(truth) > 1e-9) {
        sc.pct_sum += 100.0 * err / std::abs(truth);
        ++sc.pct_n;
      }
      ++p.scored;
    }
  }
  // Done: every horizon scored, or its remaining targets lie past the series' end.
  std::erase_if(st.pending, [&](const Pending& p) {
    const int n = static_cast<int>(p.forecast->values.size());
    if (p.scored >= n) return true;
    const int64_t next = p.forecast->issue_s + static_cast<int64_t>(p.scored) * forecast::kHourS;
    return next >= s.end_s() && known >= s.size();
  });
}

ForecastReply ForecastService::current(const Params& params, int64_t wall_s) {
  const int64_t now = clock_.signal_s(wall_s);
  const auto locations = values_of(params, "location");
  if (auto bad = check_locations(locations)) return *bad;
  auto start = time_param(params, "dataStartAt");
  if (!start.ok()) return bad_request(start.status().message());
  auto end = time_param(params, "dataEndAt");
  if (!end.ok()) return bad_request(end.status().message());
  auto window_text = one_value(params, "windowSize");
  if (!window_text.ok()) return bad_request(window_text.status().message());
  int window_min = 60;
  if (!window_text.value().empty()) {
    const std::string& w = window_text.value();
    char* stop = nullptr;
    const long v = std::strtol(w.c_str(), &stop, 10);
    if (stop == w.c_str() || *stop != '\0' || v < 60 || v % 60 != 0 ||
        v > 60L * options_.horizon_h) {
      return bad_request(fmt::format(
          "windowSize '{}': minutes, a multiple of 60 from 60 to {} (the forecast is hourly)", w,
          60 * options_.horizon_h));
    }
    window_min = static_cast<int>(v);
  }

  json out = json::array();
  std::string methods;
  for (const std::string& loc : locations) {
    auto f = issued(loc, now);
    if (!f.ok()) {
      ForecastReply r;
      r.status = 503;
      r.body = json{{"error", f.status().message()},
                    {"title", "Service Unavailable"},
                    {"status", 503},
                    {"detail", f.status().message()}}
                   .dump();
      return r;
    }
    const IssuedForecast& fc = *f.value();
    const int64_t first = fc.issue_s;
    const int64_t last_end = fc.issue_s + static_cast<int64_t>(fc.values.size()) * forecast::kHourS;
    const int64_t from = start.value().value_or(first);
    const int64_t to = end.value().value_or(last_end);
    if (from < first || from > last_end || to < first || to > last_end) {
      return bad_request(
          fmt::format("dataStartAt and dataEndAt must lie within the forecast, {} to {}",
                      sdk_time(first), sdk_time(last_end)));
    }
    if (to < from) return bad_request("dataEndAt is before dataStartAt");
    const std::size_t k = static_cast<std::size_t>(window_min / 60);
    json data = json::array();
    json optimal = json::array();
    double best = std::numeric_limits<double>::infinity();
    std::size_t i0 = static_cast<std::size_t>((floor_hour(from) - first) / forecast::kHourS);
    for (std::size_t i = i0; i + k <= fc.values.size(); ++i) {
      const int64_t t = first + static_cast<int64_t>(i) * forecast::kHourS;
      if (t + static_cast<int64_t>(window_min) * 60 > to) break;
      double sum = 0;
      for (std::size_t j = i; j < i + k; ++j) sum += fc.values[j];
      const double mean = sum / static_cast<double>(k);
      data.push_back(sdk_point(loc, t, window_min, mean));
      if (mean < best) {
        best = mean;
        optimal = json::array({data.back()});
      }
    }
    json one = {{"generatedAt", sdk_time(fc.issue_s)},
                {"requestedAt", sdk_time(now)},
                {"location", loc},
                {"dataStartAt", sdk_time(from)},
                {"dataEndAt", sdk_time(to)},
                {"windowSize", window_min},
                {"optimalDataPoints", std::move(optimal)},
                {"forecastData", std::move(data)},
                {"forecastMethod", fc.method}};
    if (!fc.note.empty()) one["forecastNote"] = fc.note;
    out.push_back(std::move(one));
    methods += fmt::format("{}{}={}", methods.empty() ? "" : ", ", loc, fc.method);
  }
  ForecastReply r;
  r.body = out.dump();
  r.headers.emplace_back("X-Greensched-Forecast-Method", methods);
  return r;
}

ForecastReply ForecastService::best(const Params& params, int64_t wall_s) {
  const int64_t now = clock_.signal_s(wall_s);
  const auto locations = values_of(params, "location");
  if (auto bad = check_locations(locations)) return *bad;
  auto from = time_param(params, "time");
  if (!from.ok()) return bad_request(from.status().message());
  auto to = time_param(params, "toTime");
  if (!to.ok()) return bad_request(to.status().message());
  // Default: the latest complete hour.
  const int64_t t0 = floor_hour(from.value().value_or(floor_hour(now) - forecast::kHourS));
  const int64_t t1 = to.value().value_or(t0 + forecast::kHourS);
  if (t1 <= t0) return bad_request("toTime must be after time");
  if ((t1 - t0) / forecast::kHourS > 24 * 366) return bad_request("the window is over a year");

  json all = json::array();
  double best = std::numeric_limits<double>::infinity();
  for (const std::string& loc : locations) {
    const forecast::Series& s = zones_.at(loc);
    const std::size_t known = forecast::known_count(s, now);
    std::shared_ptr<const IssuedForecast> fc;
    for (int64_t t = t0; t < t1; t += forecast::kHourS) {
      double v = std::nan("");
      if (t >= s.start_s && t + forecast::kHourS <= now) {
        const auto i = static_cast<std::size_t>((t - s.start_s) / forecast::kHourS);
        if (i < known) v = s.values[i];
      } else if (t + forecast::kHourS > now) {
        if (!fc) {
          auto f = issued(loc, now);
          if (!f.ok()) break;
          fc = f.value();
        }
        const int64_t h = (t - fc->issue_s) / forecast::kHourS;
        if (h >= 0 && h < static_cast<int64_t>(fc->values.size())) {
          v = fc->values[static_cast<std::size_t>(h)];
        }
      }
      if (!std::isfinite(v)) continue;
      if (v < best) {
        best = v;
        all = json::array();
      }
      if (v == best) {
        all.push_back(
            {{"location", loc}, {"time", sdk_time(t)}, {"rating", v}, {"duration", "01:00:00"}});
      }
    }
  }
  ForecastReply r;
  if (all.empty()) {
    r.status = 204;  // as the SDK: no data in the window
    return r;
  }
  r.body = all.dump();
  return r;
}

void ForecastService::observe_request(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
  auto it = latency_.find(route);
  if (it == latency_.end()) {
    it = latency_
             .emplace(route, PrometheusHistogram(std::vector<double>(kForecastLatencyBounds.begin(),
                                                                     kForecastLatencyBounds.end())))
             .first;
  }
  it->second.observe(seconds);
}

std::string ForecastService::metrics_text(int64_t wall_s) {
  const int64_t now = clock_.signal_s(wall_s);
  std::lock_guard lock(mu_);
  for (auto& [zone, st] : state_) settle(zone, st, now);
  std::string m;
  prometheus_header(m, "greensched_forecast_requests_total", "counter",
                    "Requests answered, by route and HTTP status.");
  for (const auto& [key, n] : requests_) {
    prometheus_sample(
        m, "greensched_forecast_requests_total",
        fmt::format("route=\"{}\",code=\"{}\"", prometheus_label(key.first), key.second),
        static_cast<double>(n));
  }
  prometheus_header(m, "greensched_forecast_request_seconds", "histogram",
                    "Time to answer a request, by route.");
  for (const auto& [route, h] : latency_) {
    h.render(m, "greensched_forecast_request_seconds",
             fmt::format("route=\"{}\"", prometheus_label(route)));
  }
  prometheus_header(m, "greensched_forecast_signal_time_seconds", "gauge",
                    "The service's signal time (epoch seconds): forecasts are issued at its hour.");
  prometheus_sample(m, "greensched_forecast_signal_time_seconds", "", static_cast<double>(now));
  prometheus_header(m, "greensched_forecast_issued_total", "counter",
                    "Forecasts issued (one per zone and issue hour), by method.");
  for (const auto& [zone, st] : state_) {
    for (const auto& [method, n] : st.issued_by_method) {
      prometheus_sample(m, "greensched_forecast_issued_total",
                        fmt::format("zone=\"{}\",method=\"{}\"", prometheus_label(zone), method),
                        static_cast<double>(n));
    }
  }
  prometheus_header(m, "greensched_forecast_error_mape_percent", "gauge",
                    "MAPE of the forecasts issued so far over the hours that have passed, by zone "
                    "and horizon bucket (hours of zero truth left out).");
  for (const auto& [zone, st] : state_) {
    for (int b = 0; b < 2; ++b) {
      const Score& sc = st.score[b];
      prometheus_sample(
          m, "greensched_forecast_error_mape_percent",
          fmt::format("zone=\"{}\",horizon=\"{}\"", prometheus_label(zone), kBucketNames[b]),
          sc.pct_n ? sc.pct_sum / static_cast<double>(sc.pct_n) : std::nan(""));
    }
  }
  prometheus_header(m, "greensched_forecast_error_mae", "gauge",
                    "MAE of the forecasts issued so far over the hours that have passed, by zone "
                    "and horizon bucket, in the series' unit (gCO2/kWh).");
  for (const auto& [zone, st] : state_) {
    for (int b = 0; b < 2; ++b) {
      const Score& sc = st.score[b];
      prometheus_sample(
          m, "greensched_forecast_error_mae",
          fmt::format("zone=\"{}\",horizon=\"{}\"", prometheus_label(zone), kBucketNames[b]),
          sc.abs_n ? sc.abs_sum / static_cast<double>(sc.abs_n) : std::nan(""));
    }
  }
  prometheus_header(m, "greensched_forecast_error_points_total", "counter",
                    "Forecast hours scored against the truth, by zone and horizon bucket.");
  for (const auto& [zone, st] : state_) {
    for (int b = 0; b < 2; ++b) {
      prometheus_sample(
          m, "greensched_forecast_error_points_total",
          fmt::format("zone=\"{}\",horizon=\"{}\"", prometheus_label(zone), kBucketNames[b]),
          static_cast<double>(st.score[b].abs_n));
    }
  }
  prometheus_header(m, "greensched_forecast_pending_issues", "gauge",
                    "Issued forecasts kept in memory until their hours pass, by zone.");
  for (const auto& [zone, st] : state_) {
    prometheus_sample(m, "greensched_forecast_pending_issues",
                      fmt::format("zone=\"{}\"", prometheus_label(zone)),
                      static_cast<double>(st.pending.size()));
  }
  prometheus_header(m, "greensched_forecast_dropped_issues_total", "counter",
                    "Issued forecasts dropped unscored to bound the memory, by zone.");
  for (const auto& [zone, st] : state_) {
    prometheus_sample(m, "greensched_forecast_dropped_issues_total",
                      fmt::format("zone=\"{}\"", prometheus_label(zone)),
                      static_cast<double>(st.dropped));
  }
  return m;
}

ForecastServer::ForecastServer(ForecastService& service, serve::ListenerSecurity security,
                               double timeout_s)
    : service_(service), security_(std::move(security)), timeout_s_(timeout_s) {}

ForecastServer::~ForecastServer() {
  stop();
}

Result<int> ForecastServer::start(const std::string& host, int port) {
  if (server_) return Error{"the forecast server is already started", ErrorCode::kInternal};
  auto exposure = serve::check_exposure(host, security_);
  if (!exposure.ok()) return Error{exposure.error()};
  auto made = serve::make_listener(security_);
  if (!made.ok()) return Error{made.error(), made.code()};
  server_ = std::move(made.value());
  const auto secs = static_cast<time_t>(timeout_s_);
  const auto usecs = static_cast<time_t>((timeout_s_ - static_cast<double>(secs)) * 1e6);
  server_->set_read_timeout(secs, usecs);
  server_->set_write_timeout(secs, usecs);
  server_->set_keep_alive_timeout(static_cast<time_t>(std::max(1.0, timeout_s_)));
  server_->set_payload_max_length(std::size_t{64} << 10);
  // Headers and body go out in two writes: without TCP_NODELAY the body waits for the
  // client's delayed ACK (40 ms on Linux) on a kept-alive connection.
  server_->set_tcp_nodelay(true);

  auto timed = [this](const std::string& route, auto&& answer) {
    return [this, route, answer](const httplib::Request& req, httplib::Response& res) {
      const auto t0 = std::chrono::steady_clock::now();
      ForecastReply r;
      try {
        r = answer(req);
      } catch (const std::exception& e) {
        r.status = 500;
        r.body = json{{"error", e.what()}}.dump();
      }
      res.status = r.status;
      for (const auto& [k, v] : r.headers) res.set_header(k, v);
      if (!r.body.empty()) res.set_content(r.body, r.content_type);
      service_.observe_request(
          route, r.status,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
  };
  server_->Get("/emissions/forecasts/current",
               timed("/emissions/forecasts/current", [this](const httplib::Request& req) {
                 return service_.current(req.params, wall_clock_s());
               }));
  server_->Get("/emissions/bylocations/best",
               timed("/emissions/bylocations/best", [this](const httplib::Request& req) {
                 return service_.best(req.params, wall_clock_s());
               }));
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(service_.metrics_text(wall_clock_s()), "text/plain; version=0.0.4");
  });
  server_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      res.set_content(fmt::format(R"({{"error":"HTTP {}"}})", res.status), "application/json");
    }
  });
  return start_http(*server_, thread_, host, port);
}

void ForecastServer::stop() {
  stop_http(server_.get(), thread_);
}

}  // namespace greensched::dispatch
