// The scheduler extender's filter and prioritize on large clusters, timed as kube-scheduler
// would see them without the network: each call parses the ExtenderArgs text (NodeNames, as
// with nodeCacheCapable: true), decides, and writes the reply text, exactly as the HTTP
// handlers of `greensched serve` do. The cluster is openb's GPU node list scaled to N nodes
// (every node type in its share of the list; N = k x 1213 is k whole copies), part-filled
// with pods drawn from the default pod list so that the nodes are in many different states,
// as in a busy cluster; without the openb files the built-in workload (the same node types
// and pod shapes) is used and the label says so. Each iteration is one pod: filter over all
// N nodes, then prioritize over the nodes that passed. Counters give the per-call p50 and p99
// of filter, of prioritize and of the two together, in milliseconds of wall-clock time, and
// of the two together in CPU time of the calling thread (both_cpu_*).
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/rng.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/serve/args_reader.hpp"
#include "greensched/serve/cluster_state.hpp"
#include "greensched/serve/extender.hpp"
#include "greensched/serve/extender_protocol.hpp"
#include "greensched/serve/journal.hpp"
#include "greensched/serve/pod_request.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/workload.hpp"

namespace {

using namespace greensched;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kSeed = 42;
constexpr double kFillShare = 0.6;  // share of the cluster's GPUs allocated before timing
constexpr int kDistinctPods = 512;  // request bodies cycled through by the timed loop

std::string data_dir() {
  if (const char* env = std::getenv("GREENSCHED_DATA")) return env;
  if (const char* env = std::getenv("GREENSCHED_SHARED_DATA")) return env;
  return GREENSCHED_SHARED_DATA;
}

bool have_openb(const std::string& nodes, const std::string& pods) {
  return std::filesystem::exists(nodes) && std::filesystem::exists(pods);
}

// `want` nodes with every node type (model, GPUs, CPU, memory) in its share of `base`, by
// largest remainder (ties to the type met first); copy c names its nodes NAME-xc. The same
// rule as scripts/scale-bench.sh, so the two build the same clusters.
std::vector<NodeSpec> scale_nodes(const std::vector<NodeSpec>& base, std::size_t want) {
  using Type = std::tuple<GpuModelId, int, int64_t, int64_t>;
  auto type_of = [](const NodeSpec& n) {
    return Type{n.model, n.gpu_count, n.cpu_milli, n.memory_mib};
  };
  std::vector<Type> order;
  std::map<Type, std::size_t> count;
  for (const NodeSpec& n : base) {
    if (count[type_of(n)]++ == 0) order.push_back(type_of(n));
  }
  std::map<Type, std::size_t> left;
  std::map<Type, int64_t> remainder;
  std::size_t given = 0;
  for (const Type& t : order) {
    left[t] = count[t] * want / base.size();
    remainder[t] = static_cast<int64_t>(count[t] * want % base.size());
    given += left[t];
  }
  while (given < want) {
    const Type* best = &order.front();
    for (const Type& t : order) {
      if (remainder[t] > remainder[*best]) best = &t;
    }
    ++left[*best];
    remainder[*best] = -1;
    ++given;
  }
  std::vector<NodeSpec> out;
  out.reserve(want);
  for (int copy = 1; out.size() < want; ++copy) {
    for (const NodeSpec& n : base) {
      std::size_t& room = left[type_of(n)];
      if (room == 0) continue;
      --room;
      NodeSpec s = n;
      s.name = fmt::format("{}-x{}", n.name, copy);
      out.push_back(std::move(s));
    }
  }
  return out;
}

serve::PodRequest request_of(const PodSpec& pod, const std::string& name) {
  serve::PodRequest r;
  r.ref = serve::PodRef{"bench", name, "uid-" + name};
  r.cpu_milli = pod.cpu_milli;
  r.memory_mib = pod.memory_mib;
  r.num_gpu = pod.needs_gpu() ? pod.num_gpu : 0;
  r.gpu_milli = pod.needs_gpu() ? pod.gpu_milli : 0;
  return r;
}

std::string args_text(const json& pod, const std::vector<std::string>& names) {
  return json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
}

// Binds pods drawn from the list to random nodes (on the first GPUs that take them) until
// kFillShare of the GPUs are allocated; a pod that fits none of 8 random nodes is skipped.
void fill(serve::ClusterState& state, const std::vector<NodeSpec>& nodes,
          const std::vector<PodSpec>& pods, Rng& rng) {
  int64_t total = 0;
  for (const NodeSpec& n : nodes) total += int64_t{n.gpu_count} * kGpuMilli;
  const auto goal = static_cast<int64_t>(kFillShare * static_cast<double>(total));
  int64_t allocated = 0;
  for (int64_t i = 0; allocated < goal && i < 20 * total / kGpuMilli; ++i) {
    const PodSpec& pod = pods[rng.uniform(pods.size())];
    if (!pod.needs_gpu() || pod.gpu_spec != 0) continue;
    const serve::PodRequest request = request_of(pod, fmt::format("fill-{}", i));
    for (int attempt = 0; attempt < 8; ++attempt) {
      const NodeSpec& node = nodes[rng.uniform(nodes.size())];
      bool bound = false;
      const uint32_t all = (uint32_t{1} << node.gpu_count) - 1;
      for (uint32_t gpus = 1; gpus <= all && !bound; ++gpus) {
        if (std::popcount(gpus) != pod.num_gpu) continue;
        bound = state.bind(request, node.name, static_cast<GpuMask>(gpus)).ok();
      }
      if (bound) {
        allocated += pod.total_gpu_milli();
        break;
      }
    }
  }
}

struct Bench {
  std::string error;
  std::string label;
  std::string journal_dir;
  std::unique_ptr<serve::Extender> extender;
  std::vector<json> pods;  // request pods
  std::vector<std::string> filter_bodies;
  ~Bench() {
    extender.reset();
    std::error_code ec;
    if (!journal_dir.empty()) std::filesystem::remove_all(journal_dir, ec);
  }
};

std::unique_ptr<Bench> make_bench(std::size_t node_count) {
  auto b = std::make_unique<Bench>();
  const std::string nodes_csv = data_dir() + "/openb/openb_node_list_gpu_node.csv";
  const std::string pods_csv = data_dir() + "/openb/openb_pod_list_default.csv";
  trace::Workload w;
  if (have_openb(nodes_csv, pods_csv)) {
    auto loaded = trace::load_openb_workload(nodes_csv, pods_csv);
    if (!loaded.ok()) {
      b->error = loaded.error();
      return b;
    }
    w = std::move(loaded.value());
    b->label = fmt::format("{} openb-shaped nodes, 60 % of GPUs allocated", node_count);
  } else {
    w = trace::builtin_openb_workload();
    b->label = fmt::format("{} nodes of the built-in workload (openb data not found), 60 % full",
                           node_count);
  }
  std::vector<NodeSpec> nodes = scale_nodes(w.nodes, node_count);
  serve::StateOptions options;
  options.policy = "fgd";
  options.target = frag::build_target_workload(w.pods);
  auto state = serve::ClusterState::create(w.models, nodes, options);
  if (!state.ok()) {
    b->error = state.error();
    return b;
  }
  Rng rng(kSeed);
  fill(*state.value(), nodes, w.pods, rng);
  std::string dir = (std::filesystem::temp_directory_path() / "greensched-bench-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) {
    b->error = "mkdtemp failed";
    return b;
  }
  b->journal_dir = dir;
  auto journal = serve::Journal::open(dir + "/state");
  if (!journal.ok()) {
    b->error = journal.error();
    return b;
  }
  // One client that never binds: nothing is assumed, so every prioritize scores the same state.
  serve::ExtenderOptions extender_options;
  extender_options.assume_ttl_ms = 0;
  b->extender = std::make_unique<serve::Extender>(std::move(state.value()),
                                                  std::move(journal.value()), extender_options);
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (const NodeSpec& n : nodes) names.push_back(n.name);
  for (int i = 0; i < kDistinctPods; ++i) {
    const PodSpec& pod = w.pods[rng.uniform(w.pods.size())];
    const std::string name = fmt::format("pod-{:04}", i);
    b->pods.push_back(serve::pending_pod_object(pod, {"bench", name, "uid-" + name}, w.models));
    b->filter_bodies.push_back(args_text(b->pods.back(), names));
  }
  return b;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size() - 1)))];
}

// Wall-clock and CPU time (of this thread: the verbs run on the calling thread) in ms. On a
// machine shared with other work the CPU time is the steadier of the two.
struct Stamp {
  Clock::time_point wall = Clock::now();
  double cpu_ms = thread_cpu_ms();
  static double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
  }
  double wall_ms() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - wall).count();
  }
  double cpu_since() const { return thread_cpu_ms() - cpu_ms; }
};

// One iteration: filter over every node, then prioritize over the nodes that passed, each as
// the HTTP handler runs it (parse the body, decide, write the reply).
void BM_ExtenderFilterPrioritize(benchmark::State& state) {
  const auto node_count = static_cast<std::size_t>(state.range(0));
  const std::unique_ptr<Bench> b = make_bench(node_count);
  if (!b->error.empty()) {
    state.SkipWithError(b->error.c_str());
    return;
  }
  std::vector<double> filter_ms, prioritize_ms, both_ms, both_cpu_ms;
  int64_t passed = 0;
  // FNV-1a over every reply, printed when GREENSCHED_BENCH_REPLY_DIGEST is set: two builds that
  // print the same digest gave the same replies.
  uint64_t digest = 14695981039346656037ULL;
  auto hash = [&digest](const std::string& text) {
    for (const char c : text) digest = (digest ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
  };
  const bool want_digest = std::getenv("GREENSCHED_BENCH_REPLY_DIGEST") != nullptr;
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t p = i++ % b->filter_bodies.size();
    const Stamp t0;
    auto args = serve::read_extender_args(b->filter_bodies[p]);
    if (!args.ok()) {
      state.SkipWithError(args.error().c_str());
      break;
    }
    const serve::FilterResult result = b->extender->filter(args.value());
    std::string reply = serve::filter_result_text(result, args.value());
    benchmark::DoNotOptimize(reply.data());
    const double f = t0.wall_ms();
    const double f_cpu = t0.cpu_since();

    // kube-scheduler's part: the nodes that passed, as the next request (not timed).
    state.PauseTiming();
    std::vector<std::string> feasible;
    feasible.reserve(result.passed.size());
    for (std::size_t k : result.passed) feasible.push_back(args.value().node_names[k]);
    passed += static_cast<int64_t>(feasible.size());
    const std::string prioritize_body = args_text(b->pods[p], feasible);
    if (want_digest) hash(reply);
    state.ResumeTiming();

    const Stamp t1;
    auto pargs = serve::read_extender_args(prioritize_body);
    if (!pargs.ok()) {
      state.SkipWithError(pargs.error().c_str());
      break;
    }
    std::string scores = serve::priority_list_text(b->extender->prioritize(pargs.value()));
    benchmark::DoNotOptimize(scores.data());
    const double pr = t1.wall_ms();
    const double pr_cpu = t1.cpu_since();
    if (want_digest) {
      state.PauseTiming();
      hash(scores);
      state.ResumeTiming();
    }
    filter_ms.push_back(f);
    prioritize_ms.push_back(pr);
    both_ms.push_back(f + pr);
    both_cpu_ms.push_back(f_cpu + pr_cpu);
  }
  state.counters["filter_p50_ms"] = quantile(filter_ms, 0.5);
  state.counters["filter_p99_ms"] = quantile(filter_ms, 0.99);
  state.counters["prio_p50_ms"] = quantile(prioritize_ms, 0.5);
  state.counters["prio_p99_ms"] = quantile(prioritize_ms, 0.99);
  state.counters["both_p50_ms"] = quantile(both_ms, 0.5);
  state.counters["both_p99_ms"] = quantile(both_ms, 0.99);
  state.counters["both_cpu_p50_ms"] = quantile(both_cpu_ms, 0.5);
  state.counters["both_cpu_p99_ms"] = quantile(both_cpu_ms, 0.99);
  state.counters["passed_nodes"] =
      both_ms.empty() ? 0.0 : static_cast<double>(passed) / static_cast<double>(both_ms.size());
  state.SetLabel(b->label);
  if (want_digest) fmt::print(stderr, "replies of {} nodes: digest {:016x}\n", node_count, digest);
}
BENCHMARK(BM_ExtenderFilterPrioritize)
    ->Arg(1213)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1000);

}  // namespace
