// The dispatch service's decision latency (POST /v1/dispatch's work, in process): the built-in
// openb cluster's 1213 nodes dealt round-robin to 3 or 10 worker clusters with hourly carbon
// that differs by cluster, `green` deciding for 1-GPU best-effort workloads with 4 h of slack,
// each a new workload two signal minutes after the last (so commitments come and go). With
// the second argument 1, one of the clusters is blackholed: its API server accepts connections
// and never answers; its reads time out in the background (1 s deadline) and decisions go on
// without it. Counters: p50, p99 and max of the decisions, in ms.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/dispatch/dispatch_service.hpp"
#include "greensched/trace/builtin_workload.hpp"

namespace greensched {
namespace {

using nlohmann::json;

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size() - 1)))];
}

// A TCP listener that completes connections in its backlog and never answers.
struct Blackhole {
  int fd = -1;
  int port = 0;
  Blackhole() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd, 64) != 0) {
      return;
    }
    socklen_t len = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
  }
  ~Blackhole() {
    if (fd >= 0) ::close(fd);
  }
};

json workload(int i) {
  json container = {
      {"name", "main"},
      {"resources", {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "1"}}}}}};
  return {{"workload",
           {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
            {"kind", "Workload"},
            {"metadata",
             {{"name", fmt::format("w-{:05}", i)},
              {"namespace", "bench"},
              {"uid", fmt::format("uid-{:05}", i)},
              {"annotations",
               {{"greensched.io/qos", "BE"},
                {"greensched.io/slack", "4h"},
                {"greensched.io/duration", "2h"},
                {"greensched.io/data-gb", "20"}}}}},
            {"spec",
             {{"podSets",
               json::array(
                   {{{"name", "workers"},
                     {"count", 1},
                     {"template", {{"spec", {{"containers", json::array({container})}}}}}}})}}}}}};
}

void BM_DispatchDecision(benchmark::State& state) {
  const int sites = static_cast<int>(state.range(0));
  const bool blackholed = state.range(1) != 0;
  const trace::Workload w = trace::builtin_openb_workload();
  dispatch::DispatchConfig config;
  config.fleet.models = w.models;
  for (int s = 0; s < sites; ++s) {
    multi::SiteSpec site;
    site.name = fmt::format("cluster-{}", s);
    for (std::size_t n = s; n < w.nodes.size(); n += sites) site.nodes.push_back(w.nodes[n]);
    std::vector<double> ci;
    for (int h = 0; h < 24 * 30; ++h) ci.push_back(250 + 150 * std::sin((h + 5 * s) * 0.31));
    site.carbon = multi::TimeSeries(config.fleet.start_s, 3600, ci);
    site.pue = 1.1 + 0.02 * s;
    config.fleet.sites.push_back(std::move(site));
  }
  config.agent = "green";
  config.clock = dispatch::SignalClock(config.fleet.start_s + 3600, 1, 0);
  Blackhole hole;
  char token_path[] = "/tmp/greensched-bench-token-XXXXXX";
  const int token_fd = ::mkstemp(token_path);
  if (token_fd >= 0) {
    (void)!::write(token_fd, "t0ken\n", 6);
    ::close(token_fd);
  }
  if (blackholed) {
    config.sources.resize(sites);
    serve::KubeApiOptions api;
    api.server = fmt::format("http://127.0.0.1:{}", hole.port);
    api.token_file = token_path;
    config.sources[sites - 1] = dispatch::make_kube_source(api);
  }
  auto service = dispatch::DispatchService::create(std::move(config), 0);
  if (!service.ok()) {
    state.SkipWithError(service.error().c_str());
    return;
  }
  std::vector<std::string> bodies;
  for (int i = 0; i < 2000; ++i) bodies.push_back(workload(i).dump());
  std::vector<double> ms;
  int i = 0;
  for (auto _ : state) {
    const std::string& body = bodies[i % bodies.size()];
    const auto t0 = std::chrono::steady_clock::now();
    const dispatch::DispatchReply reply = service.value()->dispatch(body, 120 * (i + 1));
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (reply.status != 200) {
      state.SkipWithError(reply.body.dump().c_str());
      break;
    }
    ++i;
  }
  state.counters["p50_ms"] = quantile(ms, 0.5);
  state.counters["p99_ms"] = quantile(ms, 0.99);
  state.counters["max_ms"] = quantile(ms, 1.0);
  service.value().reset();
  ::unlink(token_path);
}
BENCHMARK(BM_DispatchDecision)
    ->Args({3, 0})
    ->Args({10, 0})
    ->Args({10, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1000);

}  // namespace
}  // namespace greensched
