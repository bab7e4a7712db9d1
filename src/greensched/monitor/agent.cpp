#include "greensched/monitor/agent.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <httplib.h>

#include "greensched/core/http_listener.hpp"
#include "greensched/monitor/prometheus.hpp"
#include "greensched/monitor/sample_json.hpp"

namespace greensched::monitor {

Result<std::pair<std::string, int>> parse_listen_address(const std::string& address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    return Error{fmt::format("--listen '{}': expected HOST:PORT", address)};
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  int port = -1;
  const char* b = address.data() + colon + 1;
  const char* e = address.data() + address.size();
  const auto [ptr, ec] = std::from_chars(b, e, port);
  if (ec != std::errc() || ptr != e || port < 0 || port > 65535) {
    return Error{fmt::format("--listen '{}': port must be 0-65535", address)};
  }
  return std::pair{host, port};
}

double process_cpu_seconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0.0;
  const auto secs = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

MonitorAgent::MonitorAgent(MonitorOptions options, NoteSink note)
    : options_(std::move(options)), note_(std::move(note)) {}

MonitorAgent::~MonitorAgent() {
  stop();
  if (jsonl_ && own_jsonl_) std::fclose(jsonl_);
}

Status MonitorAgent::start() {
  if (!(options_.interval_s > 0)) return Error{"--interval must be positive"};
  std::optional<std::pair<std::string, int>> listen;
  if (!options_.listen.empty()) {
    auto parsed = parse_listen_address(options_.listen);
    if (!parsed.ok()) return Error{parsed.error()};
    listen = parsed.value();
  }
  if (!options_.jsonl.empty()) {
    if (options_.jsonl == "-") {
      jsonl_ = stdout;
    } else {
      jsonl_ = std::fopen(options_.jsonl.c_str(), "a");
      if (!jsonl_) {
        return Error{
            fmt::format("{}: cannot open for appending: {}", options_.jsonl, std::strerror(errno))};
      }
      own_jsonl_ = true;
    }
  }
  if (listen) {
    server_ = std::make_unique<httplib::Server>();
    // Two workers are plenty for a scraper or two, and idle workers cost no CPU.
    server_->new_task_queue = [] { return new httplib::ThreadPool(2); };
    server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics(), "text/plain; version=0.0.4; charset=utf-8");
    });
    server_->Get("/sample", [this](const httplib::Request&, httplib::Response& res) {
      auto s = latest();
      res.set_content(s ? sample_to_json(*s).dump() : std::string("null"), "application/json");
    });
    server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("greensched monitor: GET /metrics (Prometheus), GET /sample (JSON)\n",
                      "text/plain");
    });
  }
  sampler_ = std::make_unique<Sampler>(options_.sampler, note_);
  if (server_) {
    const auto& [host, port] = *listen;
    auto bound = start_http(*server_, server_thread_, host, port);
    if (!bound.ok()) {
      server_.reset();
      sampler_.reset();
      return Error{
          fmt::format("--listen {}: cannot bind (address in use or not local?)", options_.listen)};
    }
    port_ = bound.value();
  }
  sample_thread_ = std::thread([this] { loop(); });
  return Status::Ok();
}

void MonitorAgent::loop() {
  using clock = std::chrono::steady_clock;
  const auto step = std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double>(options_.interval_s));
  auto next = clock::now();
  while (true) {
    next += step;
    {
      std::unique_lock lock(mutex_);
      if (cv_.wait_until(lock, next, [this] { return stopping_; })) break;
    }
    NodeSample s = sampler_->sample();
    if (jsonl_) {
      const std::string line = sample_to_json(s).dump() + "\n";
      std::fputs(line.c_str(), jsonl_);
      std::fflush(jsonl_);
    }
    const auto now = clock::now();
    if (next < now - step) next = now;  // fell behind (machine suspended?): do not burst
    std::lock_guard lock(mutex_);
    sources_ = sampler_->sources();
    latest_ = std::move(s);
    ++samples_;
    if (options_.count >= 0 && samples_ >= static_cast<uint64_t>(options_.count)) break;
  }
  std::lock_guard lock(mutex_);
  finished_ = true;
  cv_.notify_all();
}

void MonitorAgent::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (sample_thread_.joinable()) sample_thread_.join();
  stop_http(server_.get(), server_thread_);
  std::lock_guard lock(mutex_);
  finished_ = true;
}

bool MonitorAgent::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

bool MonitorAgent::wait_for(double seconds) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return finished_; });
}

uint64_t MonitorAgent::samples() const {
  std::lock_guard lock(mutex_);
  return samples_;
}

std::optional<NodeSample> MonitorAgent::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

std::string MonitorAgent::metrics() const {
  AgentStats stats;
  stats.interval_s = options_.interval_s;
  stats.cpu_seconds = process_cpu_seconds();
  std::lock_guard lock(mutex_);
  stats.samples = samples_;
  stats.sources = sources_;
  return prometheus_text(latest_ ? &*latest_ : nullptr, stats);
}

}  // namespace greensched::monitor
