// The extender's state and journal without HTTP: binds, releases, resyncs and added nodes are
// journalled so that replaying the journal (or a snapshot and its tail) rebuilds exactly the
// same state; concurrent binds share commits; a second server cannot open the same state.
#include <atomic>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "greensched/serve/decision_log.hpp"
#include "serve_test_support.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

std::unique_ptr<ClusterState> fresh_state(std::string policy = "fgd") {
  GpuModelRegistry models;
  StateOptions options;
  options.policy = std::move(policy);
  options.target = testing::two_shape_target();
  auto state = ClusterState::create(models, testing::contract_nodes(models), options);
  EXPECT_TRUE(state.ok()) << (state.ok() ? "" : state.error());
  return std::move(state.value());
}

// Everything observable about a state: pods with placements, and each node's free resources.
json fingerprint(const ClusterState& s) {
  json out = json::object();
  for (const auto& [key, pod] : s.pods()) out["pods"][key] = ClusterState::pod_json(pod);
  const Cluster& c = s.cluster();
  for (std::size_t n = 0; n < c.size(); ++n) {
    const NodeState& st = c.state(static_cast<NodeIndex>(n));
    json gpus = json::array();
    for (int g = 0; g < c.spec(static_cast<NodeIndex>(n)).gpu_count; ++g) {
      gpus.push_back(st.gpu_free_milli[g]);
    }
    out["nodes"][c.spec(static_cast<NodeIndex>(n)).name] = {
        {"cpu", st.cpu_free_milli}, {"mem", st.memory_free_mib}, {"gpus", gpus}, {"pods", st.pods}};
  }
  out["frag"] = s.fragmentation_gpu_milli();
  out["watts"] = s.power_watts();
  return out;
}

json replayed_fingerprint(const std::string& dir, JournalStats* stats = nullptr) {
  auto state = fresh_state();
  auto journal = Journal::open(dir);
  EXPECT_TRUE(journal.ok()) << (journal.ok() ? "" : journal.error());
  Status s = journal.value()->replay([&](const std::string& e) { return state->apply_entry(e); });
  EXPECT_TRUE(s.ok()) << s.message();
  if (stats != nullptr) *stats = journal.value()->stats();
  return fingerprint(*state);
}

ExtenderArgs args_for(const std::string& name, const std::string& limits_json,
                      std::vector<std::string> nodes) {
  const json pod =
      testing::pod_json(name, "uid-" + name, json{{"limits", json::parse(limits_json)}});
  auto args = parse_extender_args(json{{"Pod", pod}, {"NodeNames", nodes}});
  EXPECT_TRUE(args.ok()) << (args.ok() ? "" : args.error());
  return std::move(args.value());
}

BindingArgs bind_args(const std::string& name, const std::string& node) {
  return BindingArgs{PodRef{"ml-team", name, "uid-" + name}, node};
}

// Filters then binds; returns the bind's Error.
std::string place(Extender& ext, const std::string& name, const std::string& limits,
                  const std::string& node) {
  ExtenderArgs args = args_for(name, limits, {node});
  ext.filter(args);
  return ext.bind(bind_args(name, node)).error;
}

TEST(ServeState, JournalReplayRebuildsTheExactState) {
  testing::TempDir dir;
  json before;
  {
    auto journal = Journal::open(dir.path());
    ASSERT_TRUE(journal.ok());
    Extender ext(fresh_state(), std::move(journal.value()), ExtenderOptions{});
    EXPECT_EQ(place(ext, "a", R"({"alibabacloud.com/gpu-milli": "500"})", "gpu-node-a"), "");
    EXPECT_EQ(place(ext, "b", R"({"alibabacloud.com/gpu-count": "2"})", "gpu-node-b"), "");
    EXPECT_EQ(place(ext, "c", R"({"nvidia.com/gpu": "1", "nvidia.com/gpumem-percentage": "20"})",
                    "gpu-node-g"),
              "");
    EXPECT_EQ(place(ext, "d", R"({"cpu": "3"})", "cpu-node-d"), "");
    EXPECT_EQ(ext.release(PodRef{"ml-team", "c", "uid-c"}).http_status, 200);
    EXPECT_EQ(place(ext, "e", R"({"alibabacloud.com/gpu-milli": "300"})", "gpu-node-g"), "");
    ASSERT_TRUE(ext.resync({}).error.empty());  // removes everything
    EXPECT_EQ(place(ext, "f", R"({"alibabacloud.com/gpu-milli": "700"})", "gpu-node-a"), "");
    EXPECT_EQ(place(ext, "g", R"({"alibabacloud.com/gpu-milli": "700"})", "gpu-node-a"), "");
    EXPECT_NE(place(ext, "h", R"({"alibabacloud.com/gpu-milli": "700"})", "gpu-node-a"), "");
    before = json::parse(ext.pods().dump());
    ASSERT_EQ(before.size(), 2u);
  }
  JournalStats stats;
  const json after = replayed_fingerprint(dir.path(), &stats);
  EXPECT_EQ(after["pods"].size(), 2u);
  EXPECT_EQ(after["pods"]["ml-team/f"], before[0]);
  EXPECT_EQ(after["pods"]["ml-team/g"], before[1]);
  EXPECT_EQ(after["nodes"]["gpu-node-a"]["gpus"], json({300, 300}));
}

TEST(ServeState, SnapshotPlusTailReplaysTheSame) {
  testing::TempDir dir;
  json live;
  {
    auto journal = Journal::open(dir.path());
    ASSERT_TRUE(journal.ok());
    ExtenderOptions options;
    options.compact_every = 4;
    auto state = fresh_state();
    Extender ext(std::move(state), std::move(journal.value()), options);
    for (int i = 0; i < 11; ++i) {
      const std::string name = fmt::format("p{}", i);
      EXPECT_EQ(place(ext, name, R"({"alibabacloud.com/gpu-milli": "100", "cpu": "1"})",
                      i % 2 ? "gpu-node-a" : "gpu-node-b"),
                "");
      if (i % 3 == 0) ext.release(PodRef{"ml-team", name, "uid-" + name});
    }
    live = json::parse(ext.pods().dump());
  }
  JournalStats stats;
  const json replayed = replayed_fingerprint(dir.path(), &stats);
  EXPECT_LE(stats.since_snapshot, 5u);  // a snapshot replaced most of the 15 entries
  json pods = json::array();
  for (const auto& [key, pod] : replayed["pods"].items()) pods.push_back(pod);
  EXPECT_EQ(pods, live);
}

TEST(ServeState, AddedNodesAreJournalled) {
  testing::TempDir dir;
  {
    auto journal = Journal::open(dir.path());
    ASSERT_TRUE(journal.ok());
    Extender ext(fresh_state(), std::move(journal.value()), ExtenderOptions{});
    const json pod =
        testing::pod_json("n", "uid-n", json{{"limits", {{"alibabacloud.com/gpu-count", "4"}}}});
    auto args = parse_extender_args(
        json{{"Pod", pod},
             {"Nodes", {{"items", json::array({testing::node_json("gpu-node-x", "A100", 8)})}}}});
    ASSERT_TRUE(args.ok());
    FilterResult r = ext.filter(args.value());
    ASSERT_EQ(r.passed.size(), 1u);
    EXPECT_EQ(ext.bind(bind_args("n", "gpu-node-x")).gpu_index, "0-1-2-3");
  }
  const json after = replayed_fingerprint(dir.path());
  EXPECT_EQ(after["nodes"]["gpu-node-x"]["gpus"], json({0, 0, 0, 0, 1000, 1000, 1000, 1000}));
  EXPECT_EQ(after["pods"]["ml-team/n"]["node"], "gpu-node-x");
}

TEST(ServeState, ConcurrentBindsShareCommitsAndNeverOvercommit) {
  testing::TempDir dir;
  JournalStats stats;
  json live;
  {
    auto journal = Journal::open(dir.path());
    ASSERT_TRUE(journal.ok());
    Extender ext(fresh_state(), std::move(journal.value()), ExtenderOptions{});
    // 8 threads race 40 pods of 300 milli onto gpu-node-b (2 GPUs: room for 6).
    std::atomic<int> bound{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 5; ++i) {
          const std::string name = fmt::format("t{}-{}", t, i);
          if (place(ext, name, R"({"alibabacloud.com/gpu-milli": "300"})", "gpu-node-b").empty()) {
            ++bound;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(bound.load(), 6);
    stats = ext.gauges().journal;
    live = json::parse(ext.pods().dump());
  }
  EXPECT_LE(stats.commits, stats.events);
  const json after = replayed_fingerprint(dir.path());
  EXPECT_EQ(after["nodes"]["gpu-node-b"]["gpus"], json({100, 100}));
  EXPECT_EQ(after["pods"].size(), live.size());
}

TEST(ServeState, OneServerPerStateDirectory) {
  testing::TempDir dir;
  auto first = Journal::open(dir.path());
  ASSERT_TRUE(first.ok());
  auto second = Journal::open(dir.path());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().find("in use by another greensched serve"), std::string::npos);
  first.value().reset();
  EXPECT_TRUE(Journal::open(dir.path()).ok());
}

TEST(ServeState, StateRefusesOvercommitAndUnknownNodes) {
  auto state = fresh_state();
  ASSERT_TRUE(state->bind(testing::existing_pod("x", 500), "gpu-node-c", 0b1).ok());
  EXPECT_EQ(state->bind(testing::existing_pod("w", 600), "gpu-node-c", 0b1).message(),
            "pod kube-system/w on gpu-node-c: GPU 0 has 500 milli free, needs 600");
  PodRequest big = testing::existing_pod("y", 1000);
  big.num_gpu = 2;
  ASSERT_TRUE(state->bind(big, "gpu-node-b", 0b11).ok());
  PodRequest more = testing::existing_pod("z", 100);
  EXPECT_FALSE(state->bind(more, "gpu-node-b", 0b1).ok());
  EXPECT_EQ(state->bind(more, "nowhere", 0b1).message(), "unknown node nowhere");
  EXPECT_EQ(state->bind(big, "gpu-node-a", 0b11).message(), "pod kube-system/y is already bound");
  EXPECT_EQ(state->release("kube-system/none").message(),
            "pod kube-system/none holds no allocation");
  EXPECT_EQ(state->pods().size(), 2u);
}

TEST(ServeState, OpenExtenderFromFilesReplaysAndWarns) {
  testing::TempDir dir;
  const std::string nodes = dir.path() + "/nodes.csv";
  {
    std::ofstream out(nodes);
    out << "sn,cpu_milli,memory_mib,gpu,model\n"
        << "n0,64000,262144,8,V100M32\n"
        << "n1,32000,131072,2,T4\n";
  }
  ServiceInputs inputs;
  inputs.nodes_csv = nodes;
  inputs.state_dir = dir.path() + "/state";
  {
    StartupReport report;
    auto ext = open_extender(inputs, &report);
    ASSERT_TRUE(ext.ok()) << ext.error();
    EXPECT_EQ(report.nodes, 2u);
    EXPECT_EQ(report.target, "built-in (openb default pod shapes)");
    EXPECT_EQ(place(*ext.value(), "p", R"({"alibabacloud.com/gpu-milli": "500"})", "n1"), "");
  }
  {
    StartupReport report;
    auto ext = open_extender(inputs, &report);
    ASSERT_TRUE(ext.ok()) << ext.error();
    EXPECT_EQ(report.pods, 1u);
    EXPECT_EQ(report.replayed, 1u);
    EXPECT_TRUE(report.warnings.empty());
  }
  // The node list lost n1: its pod's entry is skipped with a warning, the rest still starts.
  {
    std::ofstream out(nodes);
    out << "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,V100M32\n";
  }
  StartupReport report;
  auto ext = open_extender(inputs, &report);
  ASSERT_TRUE(ext.ok()) << ext.error();
  EXPECT_EQ(report.pods, 0u);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("unknown node n1"), std::string::npos);
}

}  // namespace
}  // namespace greensched::serve

namespace greensched::serve {
namespace {

TEST(ServeState, OpenExtenderFromANodeListAndConfig) {
  testing::TempDir dir;
  const std::string nodes = dir.path() + "/nodes.json";
  {
    std::ofstream out(nodes);
    out << json{{"apiVersion", "v1"},
                {"kind", "List"},
                {"items", json::array({testing::node_json("k8s-gpu-1", "A100", 8),
                                       testing::node_json("k8s-gpu-2", "H800", 4),
                                       testing::node_json("k8s-cpu-1", "", 0)})}}
               .dump();
  }
  const std::string pods = dir.path() + "/pods.csv";
  {
    std::ofstream out(pods);
    out << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
           "deletion_time,scheduled_time\n"
        << "a,4000,8192,1,500,,LS,Running,0,10,0\n"
        << "b,8000,8192,2,1000,A100,LS,Running,0,10,0\n";
  }
  auto config = parse_serve_config(R"({"policy": "bestfit", "target_pods": "pods.csv"})",
                                   "config.json", dir.path());
  ASSERT_TRUE(config.ok()) << config.error();
  ServiceInputs inputs;
  inputs.nodes_json = nodes;
  inputs.state_dir = dir.path() + "/state";
  inputs.config = config.value();
  // H800 has no power figures: refused whatever the policy, as `greensched simulate` refuses
  // it (power::check_gpu_models), naming the file, the node and how to give figures.
  for (const char* policy : {"bestfit", "pwr"}) {
    ServiceInputs refused_inputs = inputs;
    refused_inputs.state_dir = dir.path() + "/state-" + policy;
    refused_inputs.config.policy = policy;
    auto refused = open_extender(refused_inputs);
    ASSERT_FALSE(refused.ok()) << policy;
    EXPECT_EQ(refused.error().rfind(nodes + ": Node k8s-gpu-2: unknown GPU model \"H800\" (no "
                                            "figures in the built-in power model); known: A10,",
                                    0),
              0u)
        << refused.error();
    EXPECT_NE(refused.error().find("add it with \"power_model\": FILE in the --config file"),
              std::string::npos)
        << refused.error();
  }

  // With a power model that has it (same_as a known model), the same nodes serve.
  const std::string model = dir.path() + "/power.json";
  {
    std::ofstream out(model);
    out << R"({"gpus": {"A100": {"idle_watts": 50, "max_watts": 400},
                        "H800": {"same_as": "H100-SXM", "source": "as the H100"},
                        "H100": {"idle_watts": 71, "max_watts": 700}},
               "cpus": {"c": {"idle_watts": 15, "max_watts": 120, "cores_per_socket": 16}},
               "default_cpu": "c"})";
  }
  ServiceInputs with_model = inputs;
  with_model.config.power_model = model;
  StartupReport report;
  auto ext = open_extender(with_model, &report);
  ASSERT_TRUE(ext.ok()) << ext.error();
  EXPECT_EQ(report.nodes, 3u);
  EXPECT_EQ(report.target, pods);
  EXPECT_EQ(place(*ext.value(), "p", R"({"nvidia.com/gpu": "2", "cpu": "2"})", "k8s-gpu-2"), "");
  const StateGauges g = ext.value()->gauges();
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[1].gpu_model, "H800");
  EXPECT_EQ(g.nodes[1].gpu_allocated_milli, 2000);
  // 2 of 4 GPUs busy at 700 W, 2 idle at 71 W; 32 vCPU = 16 cores = 1 socket, with a working
  // core: 120 W.
  EXPECT_DOUBLE_EQ(g.nodes[1].power_watts, 2 * 700 + 2 * 71 + 120);
  EXPECT_EQ(g.policy, "bestfit");
}

// The decision log is bounded: past its size it moves to <path>.1 and starts afresh.
TEST(ServeDecisionLog, RotatesPastItsSize) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/decisions.jsonl";
  auto log = DecisionLog::open(path, 120);
  ASSERT_TRUE(log.ok()) << log.error();
  const nlohmann::json record = {{"pod", "ns/p"},
                                 {"pad", std::string(30, 'x')}};  // 54 bytes a line
  for (int i = 0; i < 3; ++i) log.value()->append(record);
  auto lines = [](const std::string& file) {
    std::ifstream in(file);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      EXPECT_EQ(nlohmann::json::parse(line)["pod"], "ns/p");
      ++n;
    }
    return n;
  };
  EXPECT_EQ(lines(path + ".1"), 2);
  EXPECT_EQ(lines(path), 1);
}

}  // namespace
}  // namespace greensched::serve
