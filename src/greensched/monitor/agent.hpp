// The node agent behind `greensched monitor`: samples the node every interval on its own
// thread, serves the latest reading as Prometheus text on GET /metrics (and as JSON on GET
// /sample), and/or appends each reading as a JSON line to a file. Missing sources are noted
// once and skipped; only a bad listen address or an unwritable file stops it from starting.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "greensched/core/status.hpp"
#include "greensched/monitor/node_sample.hpp"
#include "greensched/monitor/sampler.hpp"

namespace httplib {
class Server;
}

namespace greensched::monitor {

struct MonitorOptions {
  double interval_s = 1.0;
  std::string listen;  // HOST:PORT ("[::1]:9400" for IPv6); port 0 picks a free one; empty: none
  std::string jsonl;   // file to append a JSON line per reading to; "-" for stdout; empty: none
  int64_t count = -1;  // stop after this many readings; < 0: run until stopped
  SamplerOptions sampler;
};

// "host:port" -> (host, port); the port must be 0-65535.
Result<std::pair<std::string, int>> parse_listen_address(const std::string& address);

// User + system CPU seconds of this process so far (getrusage).
double process_cpu_seconds();

class MonitorAgent {
 public:
  MonitorAgent(MonitorOptions options, NoteSink note);
  ~MonitorAgent();
  MonitorAgent(const MonitorAgent&) = delete;
  MonitorAgent& operator=(const MonitorAgent&) = delete;

  // Opens the sources, the JSON Lines file and the listening socket, then starts sampling.
  Status start();
  // The bound port, or -1 when not listening.
  int port() const { return port_; }
  // Stops sampling and serving; idempotent.
  void stop();
  // True once `count` readings were taken or stop() was called.
  bool finished() const;
  // Waits until finished() or the timeout passes; returns finished().
  bool wait_for(double seconds);

  uint64_t samples() const;
  std::optional<NodeSample> latest() const;
  // What GET /metrics returns now.
  std::string metrics() const;

 private:
  void loop();

  MonitorOptions options_;
  NoteSink note_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<httplib::Server> server_;
  std::thread server_thread_;
  std::thread sample_thread_;
  std::FILE* jsonl_ = nullptr;
  bool own_jsonl_ = false;
  int port_ = -1;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool finished_ = false;
  uint64_t samples_ = 0;
  std::optional<NodeSample> latest_;
  SourceStatus sources_;
};

}  // namespace greensched::monitor
