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
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
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
#include "greensched/serve/service.hpp"
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
  // Each client binds to the node prioritize scored highest, which prioritize assumed: the
  // other clients' filters see that room taken before the bind lands.
  auto extender = std::make_unique<Extender>(std::move(state.value()), std::move(journal.value()),
                                             ExtenderOptions{});
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

// The journal in `inputs.state_dir` replayed by a fresh extender: exactly the pods `live`
// lists, every acknowledged bind on its node and GPUs, and no GPU, CPU or memory allocated
// twice, counted from the pods' own figures (not by core::Cluster, which would refuse it).
void check_journal(const trace::Workload& w, const ServiceInputs& inputs,
                   const std::map<std::string, Acked>& acked, const json& live) {
  StartupReport report;
  auto replayed = open_extender(inputs, &report);
  ASSERT_TRUE(replayed.ok()) << replayed.error();
  EXPECT_TRUE(report.warnings.empty()) << report.warnings.front();
  const json pods = replayed.value()->pods();
  EXPECT_EQ(pods, live);
  std::map<std::string, json> by_key;
  for (const json& p : pods) {
    by_key[p["namespace"].get<std::string>() + "/" + p["name"].get<std::string>()] = p;
  }
  EXPECT_EQ(by_key.size(), acked.size());
  for (const auto& [key, a] : acked) {
    auto it = by_key.find(key);
    ASSERT_NE(it, by_key.end()) << key << " acknowledged but not in the journal";
    EXPECT_EQ(it->second["node"], a.node) << key;
    EXPECT_EQ(it->second["gpu_indices"], a.gpu_index) << key;
  }
  std::map<std::pair<std::string, std::string>, int64_t> gpu_used;
  std::map<std::string, std::pair<int64_t, int64_t>> cpu_mem;
  for (const auto& [key, p] : by_key) {
    const std::string node = p["node"];
    const std::string indices = p["gpu_indices"];
    std::size_t from = 0;
    while (!indices.empty() && from <= indices.size()) {
      const std::size_t dash = std::min(indices.find('-', from), indices.size());
      gpu_used[{node, indices.substr(from, dash - from)}] += p["gpu_milli"].get<int64_t>();
      from = dash + 1;
    }
    cpu_mem[node].first += p["cpu_milli"].get<int64_t>();
    cpu_mem[node].second += p["memory_mib"].get<int64_t>();
  }
  for (const auto& [gpu, used] : gpu_used) {
    EXPECT_LE(used, kGpuMilli) << gpu.first << " GPU " << gpu.second;
  }
  for (const NodeSpec& n : w.nodes) {
    EXPECT_LE(cpu_mem[n.name].first, n.cpu_milli) << n.name;
    EXPECT_LE(cpu_mem[n.name].second, n.memory_mib) << n.name;
  }
}

// 32 concurrent clients, as several schedulers (or one under a burst) would call the extender:
// 16 bind their pods (filter, prioritize, bind); 8 filter pods that never bind (as when a later
// plugin rejects them); 8 filter and prioritize pods that never bind (their assumptions expire
// or are dropped when the pod is filtered again). A prober asks /healthz every 5 ms all along.
// Then the extender restarts, and 32 clients bind at once the pods they had prioritized before
// it (a bind storm): each bind is refused (the pod was not seen since the restart), and the
// retry from filter binds it. Checks: no request fails at the HTTP level; no request of the
// non-binding clients takes over 1 s; /healthz answers throughout; every acknowledged bind is
// in the journal and no GPU share is allocated twice.
TEST(ServeLoad, ThirtyTwoClientsBindingOrNotAndABindStormAfterARestart) {
  const int kClients = 32;
  const int kBinders = 16;
  const int kBindPods = env_int("GREENSCHED_LOAD_MIXED_PODS", 3000);
  const int client_nice = std::min(env_int("GREENSCHED_LOAD_CLIENT_NICE", 10, 0), 19);
  const std::string nodes_csv = ::greensched::testing::openb_path("openb_node_list_gpu_node.csv");
  const std::string pods_csv = ::greensched::testing::openb_path("openb_pod_list_default.csv");
  GREENSCHED_REQUIRE_SHARED_FILE(nodes_csv);
  GREENSCHED_REQUIRE_SHARED_FILE(pods_csv);
  auto loaded = trace::load_openb_workload(nodes_csv, pods_csv);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  const trace::Workload w = std::move(loaded.value());
  testing::TempDir dir;
  ServiceInputs inputs;
  inputs.nodes_csv = nodes_csv;
  inputs.state_dir = dir.path() + "/state";
  inputs.config.policy = "fgd";
  inputs.config.target_pods = pods_csv;
  auto opened = open_extender(inputs);
  ASSERT_TRUE(opened.ok()) << opened.error();
  std::unique_ptr<Extender> extender = std::move(opened.value());
  ExtenderServer server(inputs.config.server);
  server.attach(extender.get());
  auto port = server.start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.error();

  json names = json::array();
  for (const NodeSpec& n : w.nodes) names.push_back(n.name);
  const std::string names_json = names.dump();
  Rng rng(7);
  auto pod_text = [&](const std::string& ns, const std::string& name) {
    return serve::pending_pod_object(w.pods[rng.uniform(w.pods.size())], {ns, name, "uid-" + name},
                                     w.models)
        .dump();
  };
  std::vector<std::string> bind_pods(kBindPods);
  for (int i = 0; i < kBindPods; ++i) bind_pods[i] = pod_text("load", fmt::format("b-{:05}", i));
  constexpr int kNamesPerIdler = 16;  // pods a non-binding client cycles through
  std::vector<std::string> idle_pods((kClients - kBinders) * kNamesPerIdler);
  for (std::size_t i = 0; i < idle_pods.size(); ++i) {
    idle_pods[i] = pod_text("idle", fmt::format("i-{:04}", i));
  }
  constexpr int kStormPerClient = 8;
  std::vector<std::string> storm_pods(kClients * kStormPerClient);
  for (std::size_t i = 0; i < storm_pods.size(); ++i) {
    storm_pods[i] = pod_text("storm", fmt::format("s-{:04}", i));
  }

  std::mutex mu;
  std::map<std::string, Acked> acked;  // "ns/name" -> node and GPUs acknowledged
  std::vector<std::string> errors;
  std::vector<double> rtt_bound, rtt_idle, rtt_storm, rtt_health;
  int unschedulable = 0;
  int storm_refused = 0;
  std::atomic<bool> binders_done{false};
  std::atomic<bool> stop_probe{false};

  // One client's filter / prioritize / bind on the wire; replies as text (nullopt: failed,
  // with the reason in `errs`).
  struct Wire {
    httplib::Client client;
    std::vector<std::string>& errs;
    Wire(int port, std::vector<std::string>& e) : client("127.0.0.1", port), errs(e) {
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(60, 0);
    }
    std::optional<std::string> post(const char* path, const std::string& body,
                                    std::vector<double>& rtt) {
      const auto t0 = Clock::now();
      auto res = client.Post(path, body, "application/json");
      rtt.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      if (!res || res->status != 200) {
        errs.push_back(fmt::format("{}: {}", path,
                                   res ? fmt::format("HTTP {} {}", res->status, res->body)
                                       : httplib::to_string(res.error())));
        return std::nullopt;
      }
      return res->body;
    }
  };
  auto args = [&](const std::string& pod, const std::string& node_names) {
    return "{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + node_names + "}";
  };
  // Filter then prioritize; the best node, "" when none passes, nullopt on a failure.
  auto choose = [&](Wire& wire, const std::string& pod,
                    std::vector<double>& rtt) -> std::optional<std::string> {
    auto filter = wire.post("/filter", args(pod, names_json), rtt);
    if (!filter) return std::nullopt;
    std::optional<std::vector<std::string>> passed = quick_names(*filter);
    if (!passed) passed = json::parse(*filter)["NodeNames"].get<std::vector<std::string>>();
    if (passed->empty()) return std::string();
    auto scores = wire.post("/prioritize", args(pod, json(*passed).dump()), rtt);
    if (!scores) return std::nullopt;
    auto best = quick_best(*scores, passed->size());
    if (!best) {
      wire.errs.push_back("prioritize: bad reply " + scores->substr(0, 200));
      return std::nullopt;
    }
    return best;
  };
  // Binds until acknowledged (a conflict or a forgotten pod retries from filter); returns the
  // refusals seen.
  auto bind_pod = [&](Wire& wire, const std::string& ns, const std::string& name,
                      const std::string& pod, std::optional<std::string> node,
                      std::map<std::string, Acked>& mine, std::vector<double>& rtt, int* unplaced) {
    int refused = 0;
    for (int attempt = 0; attempt < 100; ++attempt) {
      if (!node) node = choose(wire, pod, rtt);
      if (!node) return refused;
      if (node->empty()) {
        ++*unplaced;
        return refused;
      }
      const json binding = {
          {"PodName", name}, {"PodNamespace", ns}, {"PodUID", "uid-" + name}, {"Node", *node}};
      auto reply = wire.post("/bind", binding.dump(), rtt);
      if (!reply) return refused;
      const json bound = json::parse(*reply, nullptr, false);
      const std::string error = bound.is_object() ? bound.value("Error", "?") : "unreadable";
      if (error.empty()) {
        mine[ns + "/" + name] =
            Acked{*node, bound["Annotations"].value("alibabacloud.com/gpu-index", std::string())};
        return refused;
      }
      ++refused;
      node.reset();  // kube-scheduler retries the pod from filter
    }
    wire.errs.push_back(fmt::format("{}/{}: not bound after 100 attempts", ns, name));
    return refused;
  };

  std::thread prober([&] {
    Wire wire(port.value(), errors);
    std::vector<double> mine;
    std::vector<std::string> my_errors;
    while (!stop_probe.load()) {
      const auto t0 = Clock::now();
      auto res = wire.client.Get("/healthz");
      mine.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      if (!res) my_errors.push_back("/healthz: " + httplib::to_string(res.error()));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::lock_guard lock(mu);
    rtt_health.insert(rtt_health.end(), mine.begin(), mine.end());
    errors.insert(errors.end(), my_errors.begin(), my_errors.end());
  });
  auto run_clients = [&](const std::function<void(int, Wire&, std::map<std::string, Acked>&,
                                                  std::vector<double>&, int*)>& body,
                         std::vector<double>& binders_sink, std::vector<double>& others_sink) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kClients; ++t) {
      threads.emplace_back([&, t] {
        (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), client_nice);
        std::vector<std::string> my_errors;
        Wire wire(port.value(), my_errors);
        std::map<std::string, Acked> mine;
        std::vector<double> rtt;
        int unplaced = 0;
        body(t, wire, mine, rtt, &unplaced);
        std::lock_guard lock(mu);
        acked.merge(mine);
        errors.insert(errors.end(), my_errors.begin(), my_errors.end());
        unschedulable += unplaced;
        std::vector<double>& sink = t < kBinders ? binders_sink : others_sink;
        sink.insert(sink.end(), rtt.begin(), rtt.end());
      });
    }
    for (auto& th : threads) th.join();
  };

  // Phase 1: binding and non-binding clients side by side; then each client prioritizes its
  // storm pods without binding them.
  const auto start = Clock::now();
  std::atomic<int> binders_left{kBinders};
  run_clients(
      [&](int t, Wire& wire, std::map<std::string, Acked>& mine, std::vector<double>& rtt,
          int* unplaced) {
        if (t < kBinders) {
          for (int i = t; i < kBindPods; i += kBinders) {
            bind_pod(wire, "load", fmt::format("b-{:05}", i), bind_pods[i], std::nullopt, mine, rtt,
                     unplaced);
          }
          if (binders_left.fetch_sub(1) == 1) binders_done.store(true);
        } else {
          const int idler = t - kBinders;
          for (int k = 0; !binders_done.load(); ++k) {
            const std::string& pod = idle_pods[idler * kNamesPerIdler + k % kNamesPerIdler];
            if (idler % 2 == 0) {
              wire.post("/filter", args(pod, names_json), rtt);
            } else {
              choose(wire, pod, rtt);  // prioritized, never bound
            }
          }
        }
      },
      rtt_bound, rtt_idle);
  const double phase1 = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<std::string> storm_nodes(storm_pods.size());
  run_clients(
      [&](int t, Wire& wire, std::map<std::string, Acked>&, std::vector<double>& rtt, int*) {
        for (int k = 0; k < kStormPerClient; ++k) {
          const int i = t * kStormPerClient + k;
          storm_nodes[i] = choose(wire, storm_pods[i], rtt).value_or("");
        }
      },
      rtt_storm, rtt_storm);
  const json before_restart = extender->pods();

  // Phase 2: restart (the journal replayed into a new extender), then the bind storm.
  server.attach(nullptr);
  extender.reset();
  auto reopened_extender = open_extender(inputs);
  ASSERT_TRUE(reopened_extender.ok()) << reopened_extender.error();
  extender = std::move(reopened_extender.value());
  EXPECT_EQ(extender->pods(), before_restart);
  server.attach(extender.get());
  rtt_storm.clear();
  run_clients(
      [&](int t, Wire& wire, std::map<std::string, Acked>& mine, std::vector<double>& rtt,
          int* unplaced) {
        int refused = 0;
        for (int k = 0; k < kStormPerClient; ++k) {
          const int i = t * kStormPerClient + k;
          if (storm_nodes[i].empty()) continue;
          refused += bind_pod(wire, "storm", fmt::format("s-{:04}", i), storm_pods[i],
                              storm_nodes[i], mine, rtt, unplaced);
        }
        std::lock_guard lock(mu);
        storm_refused += refused;
      },
      rtt_storm, rtt_storm);
  stop_probe.store(true);
  prober.join();

  const Metrics& m = server.metrics();
  int storm_bound = 0;
  for (const auto& [key, a] : acked) storm_bound += key.starts_with("storm/") ? 1 : 0;
  int storm_sent = 0;
  for (const std::string& n : storm_nodes) storm_sent += n.empty() ? 0 : 1;
  std::printf(
      "serve load, 32 clients: %d pods bound by 16 clients in %.2f s beside 16 that never bind, "
      "%d unschedulable; storm after restart: %d binds sent, %d refused then retried, %d "
      "bound; %zu errors\n",
      static_cast<int>(acked.size()) - storm_bound, phase1, unschedulable, storm_sent,
      storm_refused, storm_bound, errors.size());
  std::printf(
      "  client round trip p50/p99/max ms: binding %.2f/%.2f/%.2f  non-binding "
      "%.2f/%.2f/%.2f  /healthz %.2f/%.2f/%.2f\n",
      quantile(rtt_bound, 0.5) * 1e3, quantile(rtt_bound, 0.99) * 1e3,
      quantile(rtt_bound, 1.0) * 1e3, quantile(rtt_idle, 0.5) * 1e3, quantile(rtt_idle, 0.99) * 1e3,
      quantile(rtt_idle, 1.0) * 1e3, quantile(rtt_health, 0.5) * 1e3,
      quantile(rtt_health, 0.99) * 1e3, quantile(rtt_health, 1.0) * 1e3);
  for (const char* verb : {"filter", "prioritize", "bind"}) {
    std::printf("  %-10s server p50 %.3f ms  p99 %.3f ms\n", verb,
                m.latency_quantile(verb, 0.5) * 1e3, m.latency_quantile(verb, 0.99) * 1e3);
  }
  const StateGauges g = extender->gauges();
  std::printf("  assumptions after the storm: %lld held, %llu misses, %llu expired\n",
              static_cast<long long>(g.assumed), static_cast<unsigned long long>(g.assume_misses),
              static_cast<unsigned long long>(g.assume_expired));
  for (std::size_t i = 0; i < std::min<std::size_t>(errors.size(), 5); ++i) {
    std::printf("  error: %s\n", errors[i].c_str());
  }
  EXPECT_TRUE(errors.empty());
  EXPECT_GT(static_cast<int>(acked.size()) - storm_bound, kBindPods / 2);
  EXPECT_GT(storm_sent, 0);
  // Every storm bind is refused at least once (its pod was not seen since the restart; a
  // retry may also meet a room another client took first) and then bound.
  EXPECT_GE(storm_refused, storm_sent);
  EXPECT_EQ(storm_bound, storm_sent);
  // What the extender itself decides never waits: no request of the non-binding clients over
  // 1 s, /healthz p99 and the decision verbs' p99 within 50 ms (docs/PERFORMANCE.md). A bind
  // waits for its journal commit, an fsync, which a busy disk stretches: its bound is looser
  // (GREENSCHED_LOAD_MAX_*_MS change them, e.g. for sanitizer builds).
  const double decision_p99 = env_int("GREENSCHED_LOAD_MAX_DECISION_P99_MS", 50) / 1e3;
  EXPECT_LT(quantile(rtt_idle, 1.0), 1.0);
  EXPECT_LT(quantile(rtt_health, 0.99), env_int("GREENSCHED_LOAD_MAX_HEALTH_P99_MS", 50) / 1e3);
  EXPECT_LT(m.latency_quantile("filter", 0.99), decision_p99);
  EXPECT_LT(m.latency_quantile("prioritize", 0.99), decision_p99);
  EXPECT_LT(quantile(rtt_bound, 0.99), env_int("GREENSCHED_LOAD_MAX_BIND_P99_MS", 2000) / 1e3);

  const json live = extender->pods();
  server.stop();
  server.attach(nullptr);
  extender.reset();
  check_journal(w, inputs, acked, live);
}

}  // namespace
}  // namespace greensched::serve
