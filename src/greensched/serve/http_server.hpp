// The extender's HTTP server (cpp-httplib): the kube-scheduler extender verbs at
// <prefix>filter, <prefix>prioritize and <prefix>bind, greensched's <prefix>release and
// <prefix>resync (POST), the bound pods at GET <prefix>pods and <prefix>pods/<ns>/<name>, a
// defragmentation plan at GET <prefix>v1/defrag?budget=N[&exclude=ns/name,...], GET /healthz (200
// once the state is rebuilt and the journal is healthy, else 503) and GET /metrics (Prometheus
// text).
//
// Requests run on httplib's thread pool (`threads` workers; a keep-alive connection holds a
// worker while it stays open, so keep threads above the number of clients). Bodies over
// `max_body_bytes` get 413; a client that stalls mid-request is dropped after
// `read_timeout_seconds`; malformed JSON or missing fields get 400 with an Error message. The
// server answers 503 until an Extender is attached, so it can listen while the journal replays.
//
// `security` (listener_security.hpp) makes it HTTPS, asks clients for a certificate signed by a
// CA and/or a bearer token (GET /healthz stays open), and start() refuses a non-loopback
// address without them unless `insecure` is set.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "greensched/core/status.hpp"
#include "greensched/serve/extender.hpp"
#include "greensched/serve/listener_security.hpp"
#include "greensched/serve/metrics.hpp"

namespace httplib {
class Server;
}

namespace greensched::serve {

struct ServerOptions {
  std::string prefix = "/";
  std::size_t max_body_bytes = std::size_t{32} << 20;  // full NodeLists are large
  int threads = 64;
  double read_timeout_seconds = 5;
  double write_timeout_seconds = 5;
  int keep_alive_seconds = 5;
  ListenerSecurity security;  // TLS, client certificates, bearer token (not in the JSON config)
};

class ExtenderServer {
 public:
  explicit ExtenderServer(ServerOptions options);
  ~ExtenderServer();
  ExtenderServer(const ExtenderServer&) = delete;
  ExtenderServer& operator=(const ExtenderServer&) = delete;

  // Serves `extender` from now on (it must outlive the server or be detached with nullptr).
  void attach(Extender* extender) { extender_.store(extender); }

  // Builds the server for options.security, binds host:port (port 0: any free port) and
  // serves on a background thread; returns the port. An error for bad TLS or token files, or
  // an address the exposure rule refuses.
  Result<int> start(const std::string& host, int port);
  // Stops serving and joins the thread.
  void stop();

  Metrics& metrics() { return metrics_; }
  const std::string& prefix() const { return prefix_; }

 private:
  void configure();
  void routes();

  ServerOptions options_;
  std::string prefix_;
  std::unique_ptr<httplib::Server> server_;
  std::atomic<Extender*> extender_{nullptr};
  Metrics metrics_;
  std::thread thread_;
};

// "/" + p + "/" without doubled slashes: "gs" -> "/gs/", "/" -> "/".
std::string normalise_prefix(std::string_view prefix);

}  // namespace greensched::serve
