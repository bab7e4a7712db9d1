// The dispatch service over HTTP (cpp-httplib): POST /v1/dispatch, GET /v1/clusters,
// GET /healthz (200 while at least one cluster can be read, else 503) and GET /metrics
// (Prometheus text). Bodies over max_body_bytes get 413; bad requests 400 with {"error"}.
// The wall clock is the system clock.
//
// `security` (serve/listener_security.hpp) makes it HTTPS, asks clients for a bearer token
// and/or a certificate signed by a CA (401 with {"error"} without them; GET /healthz stays
// open, /metrics does not), and start() refuses a non-loopback address without TLS and
// authentication unless `insecure` is set.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "greensched/core/status.hpp"
#include "greensched/dispatch/dispatch_service.hpp"
#include "greensched/serve/listener_security.hpp"

namespace httplib {
class Server;
}

namespace greensched::dispatch {

class DispatchServer {
 public:
  explicit DispatchServer(DispatchService& service, serve::ListenerSecurity security = {},
                          std::size_t max_body_bytes = std::size_t{4} << 20);
  ~DispatchServer();
  DispatchServer(const DispatchServer&) = delete;
  DispatchServer& operator=(const DispatchServer&) = delete;

  // Builds the server for `security`, binds host:port (0: any free port) and serves on a
  // background thread; returns the port. An error for bad TLS or token files, or an address
  // the exposure rule refuses.
  Result<int> start(const std::string& host, int port);
  void stop();

 private:
  void routes();

  DispatchService& service_;
  serve::ListenerSecurity security_;
  std::size_t max_body_bytes_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

int64_t wall_clock_s();
int64_t wall_clock_ms();

// Adds `start_after_ms` to a dispatch reply: how long, from `now_ms` on the service's clock,
// until its `earliest_start`. `start_after_s` counts whole seconds from the truncated now, so a
// dispatcher that waited it out would release a deferred workload up to a second late.
void with_start_after_ms(nlohmann::json& reply, int64_t now_ms);

}  // namespace greensched::dispatch
