// The dispatch service over HTTP (cpp-httplib): POST /v1/dispatch, GET /v1/clusters,
// GET /healthz (200 while at least one cluster can be read, else 503) and GET /metrics
// (Prometheus text). Bodies over max_body_bytes get 413; bad requests 400 with {"error"}.
// The wall clock is the system clock.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "greensched/core/status.hpp"
#include "greensched/dispatch/dispatch_service.hpp"

namespace httplib {
class Server;
}

namespace greensched::dispatch {

class DispatchServer {
 public:
  DispatchServer(DispatchService& service, std::size_t max_body_bytes = std::size_t{4} << 20);
  ~DispatchServer();
  DispatchServer(const DispatchServer&) = delete;
  DispatchServer& operator=(const DispatchServer&) = delete;

  // Binds host:port (0: any free port) and serves on a background thread; returns the port.
  Result<int> start(const std::string& host, int port);
  void stop();

 private:
  DispatchService& service_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

int64_t wall_clock_s();

}  // namespace greensched::dispatch
