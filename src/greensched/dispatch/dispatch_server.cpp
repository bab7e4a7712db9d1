#include "greensched/dispatch/dispatch_server.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <httplib.h>

#include "greensched/core/http_listener.hpp"
#include "greensched/core/utc_time.hpp"

namespace greensched::dispatch {

int64_t wall_clock_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void with_start_after_ms(nlohmann::json& reply, int64_t now_ms) {
  if (!reply.is_object()) return;
  const auto after = reply.find("start_after_s");
  const auto start = reply.find("earliest_start");
  if (after == reply.end() || !after->is_number_integer()) return;
  int64_t ms = 0;
  if (after->get<int64_t>() > 0 && start != reply.end() && start->is_string()) {
    if (auto t = parse_utc_time(start->get<std::string>()); t.ok()) {
      ms = std::max<int64_t>(0, t.value() * 1000 - now_ms);
    }
  }
  reply["start_after_ms"] = ms;
}

DispatchServer::DispatchServer(DispatchService& service, serve::ListenerSecurity security,
                               std::size_t max_body_bytes)
    : service_(service), security_(std::move(security)), max_body_bytes_(max_body_bytes) {}

void DispatchServer::routes() {
  server_->set_payload_max_length(max_body_bytes_);
  server_->Post("/v1/dispatch", [this](const httplib::Request& req, httplib::Response& res) {
    const int64_t now_ms = wall_clock_ms();
    DispatchReply reply = service_.dispatch(req.body, now_ms / 1000);
    with_start_after_ms(reply.body, now_ms);
    res.status = reply.status;
    res.set_content(reply.body.dump(), "application/json");
  });
  server_->Get("/v1/clusters", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(service_.clusters(wall_clock_s()).dump(), "application/json");
  });
  server_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    const nlohmann::json c = service_.clusters(wall_clock_s());
    bool any = false;
    for (const nlohmann::json& cluster : c["clusters"]) any = any || cluster.value("up", false);
    res.status = any ? 200 : 503;
    res.set_content(any ? "ok\n" : "no cluster can be read\n", "text/plain");
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(service_.metrics_text(), "text/plain; version=0.0.4");
  });
  server_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == 413) {
      res.set_content(R"({"error":"request body too large"})", "application/json");
    } else if (res.body.empty()) {
      res.set_content(fmt::format(R"({{"error":"HTTP {}"}})", res.status), "application/json");
    }
  });
}

DispatchServer::~DispatchServer() {
  stop();
}

Result<int> DispatchServer::start(const std::string& host, int port) {
  if (server_) return Error{"the dispatch server is already started", ErrorCode::kInternal};
  auto exposure = serve::check_exposure(host, security_);
  if (!exposure.ok()) return Error{exposure.error()};
  auto made = serve::make_listener(security_);  // 401s as {"error": ...}, /healthz open
  if (!made.ok()) return Error{made.error(), made.code()};
  server_ = std::move(made.value());
  routes();
  return start_http(*server_, thread_, host, port);
}

void DispatchServer::stop() {
  stop_http(server_.get(), thread_);
}

}  // namespace greensched::dispatch
