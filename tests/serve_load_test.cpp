// Load on loopback: filter + prioritize + bind for 10,000 pods against the 1213-node openb
// cluster from 8 concurrent connections, each a small httplib client in its own thread, as
// kube-scheduler would call the extender (NodeNames: nodeCacheCapable true). Checks that no request
// fails, that replaying the journal into a fresh state gives exactly the acknowledged binds, that
// no GPU, CPU or memory is double-allocated, and reports decision latencies and throughput.
//
// The client threads run at a lower CPU priority (nice 10 by default): in a cluster
// kube-scheduler runs on other cores, and on a 2-core machine an equal-priority load generator
// would preempt the server and its latency would measure the generator rather than the
// extender. GREENSCHED_LOAD_CLIENT_NICE=0 measures with equal priority.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "greensched/frag/target_workload.hpp"
#include "greensched/serve/gpu_index.hpp"
#include "greensched/serve/pod_request.hpp"
#include "greensched/trace/workload.hpp"
#include "serve_test_support.hpp"
#include "test_data.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kDefaultPods = 10000;

// GREENSCHED_LOAD_CONNECTIONS / GREENSCHED_LOAD_PODS / GREENSCHED_LOAD_CLIENT_NICE /
// GREENSCHED_LOAD_MAX_P99_MS change the defaults (8, 10000, 10, 25) for experiments.
int env_int(const char* name, int fallback, int lowest = 1) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) >= lowest ? std::atoi(v) : fallback;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size() - 1)))];
}

std::string pod_body(const PodSpec& pod, int i, const GpuModelRegistry& models) {
  return serve::pending_pod_object(
             pod, {"load", fmt::format("load-{:05}", i), fmt::format("uid-{:05}", i)}, models)
      .dump();
}

// The client reads replies the way the server writes them ({"Nodes":null,"NodeNames":[...],
// ..., "Error":""} and [{"Host":"n","Score":s},...]) without a JSON parser, so that 8 clients
// sharing 2 cores with the server spend little CPU on 100 kB replies; anything unexpected
// falls back to the parser.
std::optional<std::vector<std::string>> quick_names(const std::string& reply) {
  constexpr std::string_view kHead = R"({"Nodes":null,"NodeNames":[)";
  if (!reply.starts_with(kHead) || !reply.ends_with(R"("Error":""})")) return std::nullopt;
  std::vector<std::string> names;
  std::size_t i = kHead.size();
  while (i < reply.size() && reply[i] == '"') {
    const std::size_t end = reply.find('"', i + 1);
    if (end == std::string::npos) return std::nullopt;
    names.emplace_back(reply, i + 1, end - i - 1);
    i = end + 1;
    if (i < reply.size() && reply[i] == ',') ++i;
  }
  if (i >= reply.size() || reply[i] != ']') return std::nullopt;
  return names;
}

std::optional<std::string> quick_best(const std::string& reply, std::size_t expected) {
  constexpr std::string_view kHost = R"({"Host":")";
  constexpr std::string_view kScore = R"(","Score":)";
  std::string best;
  long best_score = -1;
  std::size_t count = 0;
  std::size_t i = 1;
  while (reply.compare(i, kHost.size(), kHost) == 0) {
    const std::size_t name = i + kHost.size();
    const std::size_t end = reply.find(kScore, name);
    if (end == std::string::npos) return std::nullopt;
    const long score = std::strtol(reply.c_str() + end + kScore.size(), nullptr, 10);
    if (score > best_score) {
      best_score = score;
      best.assign(reply, name, end - name);
    }
    ++count;
    i = reply.find('}', end) + 2;
  }
  if (count != expected || best_score < 0) return std::nullopt;
  return best;
}

struct Acked {
  std::string node;
  std::string gpu_index;
};

TEST(ServeLoad, TenThousandPodsFromEightConnections) {
  const int kConnections = env_int("GREENSCHED_LOAD_CONNECTIONS", 8);
  const int client_nice = std::min(env_int("GREENSCHED_LOAD_CLIENT_NICE", 10, 0), 19);
  const int kPods = env_int("GREENSCHED_LOAD_PODS", kDefaultPods);
  const std::string nodes_csv = ::greensched::testing::openb_path("openb_node_list_gpu_node.csv");
  const std::string pods_csv = ::greensched::testing::openb_path("openb_pod_list_default.csv");
  GREENSCHED_REQUIRE_SHARED_FILE(nodes_csv);
  GREENSCHED_REQUIRE_SHARED_FILE(pods_csv);
  auto loaded = trace::load_openb_workload(nodes_csv, pods_csv);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  trace::Workload w = std::move(loaded.value());
  ASSERT_EQ(w.nodes.size(), 1213u);

  StateOptions options;
  options.policy = "fgd";
  options.target = frag::build_target_workload(w.pods);
  auto state = ClusterState::create(w.models, w.nodes, options);
  ASSERT_TRUE(state.ok()) << state.error();
  testing::TempDir dir;
  const std::string journal_dir = dir.path() + "/state";
  auto journal = Journal::open(journal_dir);
  ASSERT_TRUE(journal.ok()) << journal.error();
  // Eight independent clients, not one kube-scheduler whose next filter follows its last
  // bind: no filter waits for another client's bind.
  ExtenderOptions extender_options;
  extender_options.bind_wait_ms = 0;
  auto extender = std::make_unique<Extender>(std::move(state.value()), std::move(journal.value()),
                                             extender_options);
  ServerOptions server_options;
  server_options.threads = 16;
  ExtenderServer server(server_options);
  server.attach(extender.get());
  auto port = server.start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.error();

  // Requests are built before the clock starts.
  json names = json::array();
  for (const NodeSpec& n : w.nodes) names.push_back(n.name);
  const std::string names_json = names.dump();
  Rng rng(42);
  std::vector<std::string> pods(kPods);
  for (int i = 0; i < kPods; ++i) {
    pods[i] = pod_body(w.pods[rng.uniform(w.pods.size())], i, w.models);
  }

  std::mutex mu;
  std::map<std::string, Acked> acked;
  int unschedulable = 0;
  int conflicts = 0;
  std::vector<std::string> errors;
  std::vector<double> rtt_filter, rtt_prioritize, rtt_bind;
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kConnections; ++t) {
    threads.emplace_back([&, t] {
      // Linux applies a nice value per thread; failure only changes the measurement.
      (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), client_nice);
      httplib::Client client("127.0.0.1", port.value());
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(60, 0);
      std::vector<double> my_filter, my_prioritize, my_bind;
      std::map<std::string, Acked> my_acked;
      int my_unschedulable = 0;
      int my_conflicts = 0;
      std::vector<std::string> my_errors;
      auto timed_post = [&](const char* path, const std::string& body,
                            std::vector<double>& rtt) -> std::optional<json> {
        const auto t0 = Clock::now();
        auto res = client.Post(path, body, "application/json");
        rtt.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        if (!res || res->status != 200) {
          my_errors.push_back(fmt::format("{}: {}", path,
                                          res ? fmt::format("HTTP {} {}", res->status, res->body)
                                              : httplib::to_string(res.error())));
          return std::nullopt;
        }
        return json(res->body);  // the reply text, read by quick_* or parsed by the caller
      };
      for (int i = t; i < kPods; i += kConnections) {
        const std::string name = fmt::format("load-{:05}", i);
        for (int attempt = 0;; ++attempt) {
          auto filter = timed_post(
              "/filter",
              "{\"Pod\":" + pods[i] + ",\"Nodes\":null,\"NodeNames\":" + names_json + "}",
              my_filter);
          if (!filter) break;
          const std::string& filter_text = filter->get_ref<const std::string&>();
          auto passed = quick_names(filter_text);
          if (!passed) {
            const json reply = json::parse(filter_text, nullptr, false);
            if (!reply.is_object() || reply.value("Error", "?") != "") {
              my_errors.push_back("filter Error: " + filter_text.substr(0, 200));
              break;
            }
            passed = reply["NodeNames"].get<std::vector<std::string>>();
          }
          if (passed->empty()) {
            ++my_unschedulable;
            break;
          }
          auto priorities = timed_post(
              "/prioritize",
              "{\"Pod\":" + pods[i] + ",\"Nodes\":null,\"NodeNames\":" + json(*passed).dump() + "}",
              my_prioritize);
          if (!priorities) break;
          const std::string& priority_text = priorities->get_ref<const std::string&>();
          std::optional<std::string> best = quick_best(priority_text, passed->size());
          if (!best) {
            const json list = json::parse(priority_text, nullptr, false);
            if (!list.is_array() || list.size() != passed->size()) {
              my_errors.push_back("prioritize: bad reply " + priority_text.substr(0, 200));
              break;
            }
            int64_t best_score = -1;
            for (const json& hp : list) {
              if (hp["Score"].get<int64_t>() > best_score) {
                best_score = hp["Score"].get<int64_t>();
                best = hp["Host"].get<std::string>();
              }
            }
          }
          const json binding = {{"PodName", name},
                                {"PodNamespace", "load"},
                                {"PodUID", fmt::format("uid-{:05}", i)},
                                {"Node", *best}};
          auto bound_text = timed_post("/bind", binding.dump(), my_bind);
          if (!bound_text) break;
          const json bound = json::parse(bound_text->get_ref<const std::string&>(), nullptr, false);
          const std::string error =
              bound.is_object() ? bound.value("Error", "no Error field") : "unreadable reply";
          if (error.empty()) {
            my_acked[name] = Acked{
                *best, bound["Annotations"].value("alibabacloud.com/gpu-index", std::string())};
            break;
          }
          if (error.starts_with("cannot bind") && attempt < 100) {
            ++my_conflicts;  // another connection took the room first: retry from filter
            continue;
          }
          my_errors.push_back("bind Error: " + error);
          break;
        }
      }
      std::lock_guard lock(mu);
      acked.merge(my_acked);
      unschedulable += my_unschedulable;
      conflicts += my_conflicts;
      errors.insert(errors.end(), my_errors.begin(), my_errors.end());
      rtt_filter.insert(rtt_filter.end(), my_filter.begin(), my_filter.end());
      rtt_prioritize.insert(rtt_prioritize.end(), my_prioritize.begin(), my_prioritize.end());
      rtt_bind.insert(rtt_bind.end(), my_bind.begin(), my_bind.end());
    });
  }
  for (auto& th : threads) th.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  const Metrics& m = server.metrics();
  std::printf(
      "serve load: %d pods, %zu bound, %d unschedulable, %d bind conflicts retried, %zu errors, "
      "%d connections (client nice %d), %.2f s, %.0f pods/s\n",
      kPods, acked.size(), unschedulable, conflicts, errors.size(), kConnections, client_nice,
      seconds, kPods / seconds);
  for (const char* verb : {"filter", "prioritize", "bind"}) {
    std::printf("  %-10s server p50 %.3f ms  p99 %.3f ms  (%zu requests)\n", verb,
                m.latency_quantile(verb, 0.5) * 1e3, m.latency_quantile(verb, 0.99) * 1e3,
                m.requests(verb));
  }
  std::printf(
      "  client round trip p50/p99 ms: filter %.3f/%.3f  prioritize %.3f/%.3f  bind "
      "%.3f/%.3f\n",
      quantile(rtt_filter, 0.5) * 1e3, quantile(rtt_filter, 0.99) * 1e3,
      quantile(rtt_prioritize, 0.5) * 1e3, quantile(rtt_prioritize, 0.99) * 1e3,
      quantile(rtt_bind, 0.5) * 1e3, quantile(rtt_bind, 0.99) * 1e3);
  const JournalStats js = extender->gauges().journal;
  std::printf("  journal: %llu entries in %llu commits\n",
              static_cast<unsigned long long>(js.events),
              static_cast<unsigned long long>(js.commits));
  for (std::size_t i = 0; i < std::min<std::size_t>(errors.size(), 5); ++i) {
    std::printf("  error: %s\n", errors[i].c_str());
  }
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(static_cast<int>(acked.size()) + unschedulable, kPods);
  EXPECT_GT(static_cast<int>(acked.size()), kPods / 2);
  // The target is 2 ms (docs/PERFORMANCE.md); the bound here leaves room for a busy machine
  // (GREENSCHED_LOAD_MAX_P99_MS raises it for sanitizer builds).
  EXPECT_LT(m.latency_quantile("prioritize", 0.99),
            env_int("GREENSCHED_LOAD_MAX_P99_MS", 25) / 1000.0);

  const json live = extender->pods();
  server.stop();
  server.attach(nullptr);
  extender.reset();  // closes the journal

  // Replay the journal into a fresh state: exactly the acknowledged binds.
  auto fresh = ClusterState::create(w.models, w.nodes, options);
  ASSERT_TRUE(fresh.ok());
  auto reopened = Journal::open(journal_dir);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  Status replayed = reopened.value()->replay(
      [&](const std::string& entry) { return fresh.value()->apply_entry(entry); });
  ASSERT_TRUE(replayed.ok()) << replayed.message();
  const auto& pods_after = fresh.value()->pods();
  ASSERT_EQ(pods_after.size(), acked.size());
  json replayed_list = json::array();
  for (const auto& [key, pod] : pods_after) replayed_list.push_back(ClusterState::pod_json(pod));
  EXPECT_EQ(replayed_list, live);
  for (const auto& [name, a] : acked) {
    const BoundPod* p = fresh.value()->find_pod("load/" + name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->node, a.node) << name;
    EXPECT_EQ(format_gpu_index(p->gpus), a.gpu_index) << name;
  }
  // No double allocation, counted independently of core::Cluster: per GPU, CPU and memory.
  std::map<std::pair<std::string, int>, int64_t> gpu_used;
  std::map<std::string, std::pair<int64_t, int64_t>> cpu_mem;
  for (const auto& [key, pod] : pods_after) {
    for (int g = 0; g < kMaxGpusPerNode; ++g) {
      if ((pod.gpus >> g) & 1U) gpu_used[{pod.node, g}] += pod.request.gpu_milli;
    }
    cpu_mem[pod.node].first += pod.request.cpu_milli;
    cpu_mem[pod.node].second += pod.request.memory_mib;
  }
  for (const auto& [gpu, used] : gpu_used) EXPECT_LE(used, kGpuMilli) << gpu.first;
  for (const NodeSpec& n : w.nodes) {
    EXPECT_LE(cpu_mem[n.name].first, n.cpu_milli) << n.name;
    EXPECT_LE(cpu_mem[n.name].second, n.memory_mib) << n.name;
  }
}

}  // namespace
}  // namespace greensched::serve
