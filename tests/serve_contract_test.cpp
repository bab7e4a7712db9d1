// Contract tests of the extender protocol: real v1.Pod / v1.NodeList JSON posted to an
// in-process server on a random loopback port, as kube-scheduler would send it, and every
// field of the replies checked, for nodeCacheCapable true (NodeNames) and false (Nodes).
//
// The cluster (serve_test_support.hpp) and FGD's target (one whole GPU, half a GPU, equally
// popular) make FGD's scores hand-computable for a pod asking 500 milli:
//   gpu-node-a  free (1000, 700): F 350 -> 200 on GPU 1, delta +150 -> score 53
//   gpu-node-b  free (1000, 1000): F 0 -> 250, delta -250 -> 43
//   gpu-node-g  free (600): F 300 -> 100, delta +200 -> 54
// so min-max to 0..10 gives a 9, b 0, g 10, and a bind on gpu-node-a takes GPU 1.
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "greensched/explain/explanation.hpp"
#include "greensched/serve/kube_binder.hpp"
#include "serve_test_support.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;
using testing::post_json;

const std::vector<std::string> kAllNames = {"gpu-node-a", "gpu-node-b", "gpu-node-c", "cpu-node-d",
                                            "gpu-node-e", "gpu-node-g", "ghost-node"};
const char* kUnknownNode = "Node unknown to greensched";

json half_gpu_pod(const std::string& name, const std::string& uid = "") {
  return testing::pod_json(
      name, uid.empty() ? "uid-" + name : uid,
      json{{"limits", {{"cpu", "8"}, {"memory", "8Gi"}, {"alibabacloud.com/gpu-milli", "500"}}},
           {"requests", {{"cpu", "6"}, {"memory", "8Gi"}, {"alibabacloud.com/gpu-milli", "500"}}}});
}

json names_args(const json& pod, const std::vector<std::string>& names) {
  return json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}};
}

json binding(const std::string& pod, const std::string& node) {
  return json{
      {"PodName", pod}, {"PodNamespace", "ml-team"}, {"PodUID", "uid-" + pod}, {"Node", node}};
}

TEST(ServeContract, NodeCacheCapableFilterPrioritizeBind) {
  testing::TestServer server;
  auto client = server.client();
  const json pod = half_gpu_pod("trainer-1");

  auto [code, filter] = post_json(*client, "/filter", names_args(pod, kAllNames).dump());
  ASSERT_EQ(code, 200);
  const json expected_filter = {
      {"Nodes", nullptr},
      {"NodeNames", {"gpu-node-a", "gpu-node-b", "gpu-node-g"}},
      // Categorical reasons, so kube-scheduler can count them; unresolvable nodes are listed
      // in FailedNodes too (1.20 reads only that map).
      {"FailedNodes",
       {{"cpu-node-d", "Node has no GPU"},
        {"ghost-node", kUnknownNode},
        {"gpu-node-c", "Insufficient GPU share on any single GPU"},
        {"gpu-node-e", "Insufficient cpu"}}},
      {"FailedAndUnresolvableNodes",
       {{"cpu-node-d", "Node has no GPU"},
        {"gpu-node-e", "Insufficient cpu"},
        {"ghost-node", kUnknownNode}}},
      {"Error", ""}};
  EXPECT_EQ(filter, expected_filter) << filter.dump(2);

  auto [pcode, priorities] =
      post_json(*client, "/prioritize", names_args(pod, filter["NodeNames"]).dump());
  ASSERT_EQ(pcode, 200);
  const json expected_priorities = json::array({{{"Host", "gpu-node-a"}, {"Score", 9}},
                                                {{"Host", "gpu-node-b"}, {"Score", 0}},
                                                {{"Host", "gpu-node-g"}, {"Score", 10}}});
  EXPECT_EQ(priorities, expected_priorities) << priorities.dump(2);

  // kube-scheduler may still pick a lower-scored node (its own plugins add scores); bind
  // re-checks and lets FGD pick the GPU there: GPU 1, the partly used one.
  auto [bcode, bound] = post_json(*client, "/bind", binding("trainer-1", "gpu-node-a").dump());
  ASSERT_EQ(bcode, 200);
  EXPECT_EQ(bound, (json{{"Error", ""}, {"Annotations", {{"alibabacloud.com/gpu-index", "1"}}}}));

  auto got = client->Get("/pods/ml-team/trainer-1");
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200);
  EXPECT_EQ(json::parse(got->body), (json{{"namespace", "ml-team"},
                                          {"name", "trainer-1"},
                                          {"uid", "uid-trainer-1"},
                                          {"node", "gpu-node-a"},
                                          {"cpu_milli", 6100},
                                          {"memory_mib", 8256},
                                          {"gpu_count", 1},
                                          {"gpu_milli", 500},
                                          {"gpu_models", json::array()},
                                          {"gpu_indices", "1"},
                                          {"annotations", {{"alibabacloud.com/gpu-index", "1"}}}}));

  // A retried bind (kube-scheduler timed out) answers the same.
  auto [rcode, rebound] = post_json(*client, "/bind", binding("trainer-1", "gpu-node-a").dump());
  EXPECT_EQ(rcode, 200);
  EXPECT_EQ(rebound, bound);
  // The same pod to another node is refused.
  auto [ocode, other] = post_json(*client, "/bind", binding("trainer-1", "gpu-node-b").dump());
  EXPECT_EQ(ocode, 200);
  EXPECT_EQ(other["Error"], "pod ml-team/trainer-1 is already bound to node gpu-node-a");

  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  const std::string& m = metrics->body;
  EXPECT_NE(m.find("greensched_node_gpu_allocated_ratio{node=\"gpu-node-a\",gpu_model=\"V100M16\"} "
                   "0.4\n"),
            std::string::npos);
  EXPECT_NE(m.find("greensched_node_gpu_allocated_milli{node=\"gpu-node-a\",gpu_model=\"V100M16\"} "
                   "800\n"),
            std::string::npos);
  EXPECT_NE(m.find("greensched_cluster_gpu_allocated_milli 2000\n"), std::string::npos);
  EXPECT_NE(m.find("greensched_cluster_gpu_capacity_milli 8000\n"), std::string::npos);
  EXPECT_NE(m.find("greensched_cluster_pods 4\n"), std::string::npos);
  EXPECT_NE(
      m.find("greensched_extender_requests_total{verb=\"filter\",code=\"200\",outcome=\"ok\"} "
             "1\n"),
      std::string::npos);
  EXPECT_NE(
      m.find("greensched_extender_requests_total{verb=\"bind\",code=\"200\",outcome=\"error\"} "
             "1\n"),
      std::string::npos);
  EXPECT_NE(m.find("greensched_extender_decision_seconds_count{verb=\"prioritize\"} 1\n"),
            std::string::npos);
  EXPECT_NE(
      m.find("greensched_extender_decision_seconds_bucket{verb=\"prioritize\",le=\"+Inf\"} 1\n"),
      std::string::npos);
  EXPECT_NE(m.find("# TYPE greensched_node_power_watts gauge\n"), std::string::npos);
  EXPECT_NE(m.find("greensched_cluster_fragmentation_gpu_milli "), std::string::npos);
  EXPECT_NE(m.find("greensched_ready 1\n"), std::string::npos);
  EXPECT_NE(m.find("greensched_info{policy=\"fgd\",version=\"0.1.0\"} 1\n"), std::string::npos);

  auto health = client->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
}

TEST(ServeContract, NodeObjectsFilterPrioritizeBindAddsUnknownNodes) {
  testing::TestServer server;
  auto client = server.client();
  const json pod = half_gpu_pod("trainer-2");
  const json broken = {{"metadata", {{"name", "gpu-node-broken"}}}};
  const json items = json::array({testing::node_json("gpu-node-a", "V100M16", 2),
                                  testing::node_json("gpu-node-b", "V100M16", 2),
                                  testing::node_json("gpu-node-c", "T4", 1),
                                  testing::node_json("cpu-node-d", "", 0),
                                  testing::node_json("gpu-node-new", "A10", 4), broken});
  const json node_list = {{"kind", "NodeList"},
                          {"apiVersion", "v1"},
                          {"metadata", {{"resourceVersion", "99813"}}},
                          {"items", items}};
  const json args = {{"Pod", pod}, {"Nodes", node_list}, {"NodeNames", nullptr}};

  auto [code, filter] = post_json(*client, "/filter", args.dump());
  ASSERT_EQ(code, 200);
  const json expected = {
      {"Nodes",
       {{"apiVersion", "v1"},
        {"kind", "NodeList"},
        {"metadata", json::object()},
        {"items", json::array({items[0], items[1], items[4]})}}},
      {"NodeNames", nullptr},
      {"FailedNodes",
       {{"cpu-node-d", "Node has no GPU"},
        {"gpu-node-broken", "Node object malformed"},
        {"gpu-node-c", "Insufficient GPU share on any single GPU"}}},
      {"FailedAndUnresolvableNodes",
       {{"cpu-node-d", "Node has no GPU"}, {"gpu-node-broken", "Node object malformed"}}},
      {"Error", ""}};
  EXPECT_EQ(filter, expected) << filter.dump(2);

  // kube-scheduler posts the filtered objects to prioritize. On the new node (4 free A10s)
  // FGD's score is 43, as on gpu-node-b.
  const json pargs = {{"Pod", pod}, {"Nodes", filter["Nodes"]}, {"NodeNames", nullptr}};
  auto [pcode, priorities] = post_json(*client, "/prioritize", pargs.dump());
  ASSERT_EQ(pcode, 200);
  EXPECT_EQ(priorities, json::array({{{"Host", "gpu-node-a"}, {"Score", 10}},
                                     {{"Host", "gpu-node-b"}, {"Score", 0}},
                                     {{"Host", "gpu-node-new"}, {"Score", 0}}}))
      << priorities.dump(2);

  auto [bcode, bound] = post_json(*client, "/bind", binding("trainer-2", "gpu-node-new").dump());
  ASSERT_EQ(bcode, 200);
  EXPECT_EQ(bound, (json{{"Error", ""}, {"Annotations", {{"alibabacloud.com/gpu-index", "0"}}}}));
  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("greensched_cluster_nodes 7\n"), std::string::npos);
  EXPECT_NE(
      metrics->body.find(
          "greensched_node_gpu_capacity_milli{node=\"gpu-node-new\",gpu_model=\"A10\"} 4000\n"),
      std::string::npos);
}

// A pod no node can host: categorical per-node reasons in the reply, the numbers behind them
// in the decision log (readable by greensched explain) and the counts in /metrics.
TEST(ServeContract, UnschedulablePodGoesToTheDecisionLogAndMetrics) {
  testing::TempDir log_dir;
  ExtenderOptions options;
  options.decision_log = log_dir.path() + "/decisions.jsonl";
  testing::TestServer server("fgd", {}, options);
  auto client = server.client();
  auto [code, filter] = post_json(
      *client, "/filter",
      names_args(half_gpu_pod("stuck"), {"gpu-node-c", "cpu-node-d", "ghost-node"}).dump());
  ASSERT_EQ(code, 200);
  EXPECT_EQ(filter["NodeNames"], json::array());
  EXPECT_EQ(filter["FailedNodes"],
            (json{{"cpu-node-d", "Node has no GPU"},
                  {"ghost-node", kUnknownNode},
                  {"gpu-node-c", "Insufficient GPU share on any single GPU"}}));

  std::ifstream in(options.decision_log);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const json record = json::parse(line);
  EXPECT_EQ(record["pod"], "ml-team/stuck");
  EXPECT_EQ(record["nodes_total"], 3);
  EXPECT_EQ(record["feasible_nodes"], 0);
  EXPECT_TRUE(record["chosen_node"].is_null());
  EXPECT_EQ(record["reason_counts"], (json{{"Insufficient GPU share on any single GPU", 1},
                                           {"Node has no GPU", 1},
                                           {kUnknownNode, 1}}));
  EXPECT_EQ(record["reason_examples"]["Insufficient GPU share on any single GPU"]["gpu-node-c"],
            "insufficient GPU share on any single GPU: max free 200 < 500 milli");
  EXPECT_EQ(record["reason_examples"]["Node has no GPU"]["cpu-node-d"],
            "node has no GPU: pod asks for 1 GPU(s)");
  // gpu-node-c's single T4 has 200 milli free in all: not fragmentation.
  EXPECT_EQ(record["diagnosis"]["split_gpu_nodes"], 0);
  EXPECT_EQ(record["request"]["gpu_milli"], 500);
  EXPECT_FALSE(std::getline(in, line)) << "one record per unschedulable filter";

  const std::string text = explain::explain_text(record);
  EXPECT_NE(text.find("Pod ml-team/stuck (6.1 vCPU, 8.1 GiB memory, 0.5 of one GPU) could not be "
                      "placed."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0/3 nodes are available: "), std::string::npos) << text;
  EXPECT_EQ(text.find("Neither a single smaller request"), std::string::npos)
      << "the extender searches no counterfactuals, so the text must not claim none exists";

  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find(
                "greensched_extender_filter_node_failures_total{reason=\"Node has no GPU\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("greensched_extender_unschedulable_total 1\n"), std::string::npos);

  // A filter that leaves a node writes nothing.
  post_json(*client, "/filter", names_args(half_gpu_pod("fine"), kAllNames).dump());
  std::ifstream again(options.decision_log);
  int lines = 0;
  while (std::getline(again, line)) ++lines;
  EXPECT_EQ(lines, 1);
}

// A pod whose bind was committed but whose reply was lost (a crash) comes back through filter:
// only its node passes, and the retried bind answers as the first did.
// Nodes tied for the policy's best score: 10 goes to the one `greensched simulate` would take
// (the first in the extender's node order), whatever order kube-scheduler lists them in, and 9
// to the others, so that a scheduler drawing at random among equal totals takes the same node.
TEST(ServeContract, OnlyThePolicysOwnNodeGetsTheTopScore) {
  testing::TestServer server("fgd", {}, {}, /*contract_pods=*/false);
  auto client = server.client();
  const json pod = half_gpu_pod("tied");
  auto [code, priorities] = post_json(
      *client, "/prioritize", names_args(pod, {"gpu-node-b", "gpu-node-g", "gpu-node-a"}).dump());
  ASSERT_EQ(code, 200);
  // gpu-node-a and gpu-node-b are alike and empty: equal FGD scores.
  EXPECT_EQ(priorities[0], (json{{"Host", "gpu-node-b"}, {"Score", 9}})) << priorities.dump();
  EXPECT_EQ(priorities[2], (json{{"Host", "gpu-node-a"}, {"Score", 10}})) << priorities.dump();
  EXPECT_LT(priorities[1]["Score"].get<int>(), 10) << priorities.dump();
}

TEST(ServeContract, BoundPodIsSteeredBackToItsNode) {
  testing::TestServer server;
  auto client = server.client();
  const json pod = half_gpu_pod("lost-reply");
  post_json(*client, "/filter", names_args(pod, kAllNames).dump());
  auto [bcode, bound] = post_json(*client, "/bind", binding("lost-reply", "gpu-node-b").dump());
  ASSERT_EQ(bcode, 200);
  ASSERT_EQ(bound["Error"], "");

  auto [code, filter] = post_json(*client, "/filter", names_args(pod, kAllNames).dump());
  ASSERT_EQ(code, 200);
  EXPECT_EQ(filter["NodeNames"], json::array({"gpu-node-b"}));
  EXPECT_EQ(filter["FailedAndUnresolvableNodes"]["gpu-node-a"],
            "Pod already bound to another node");
  auto [pcode, priorities] =
      post_json(*client, "/prioritize", names_args(pod, {"gpu-node-a", "gpu-node-b"}).dump());
  ASSERT_EQ(pcode, 200);
  EXPECT_EQ(priorities, json::array({{{"Host", "gpu-node-a"}, {"Score", 0}},
                                     {{"Host", "gpu-node-b"}, {"Score", 10}}}));
  auto [rcode, again] = post_json(*client, "/bind", binding("lost-reply", "gpu-node-b").dump());
  ASSERT_EQ(rcode, 200);
  EXPECT_EQ(again, bound);
}

TEST(ServeContract, RejectsUnknownNodeObjectsWhenConfigured) {
  ExtenderOptions options;
  options.unknown_nodes = UnknownNodes::kReject;
  testing::TestServer server("fgd", {}, options);
  auto client = server.client();
  const json args = {{"Pod", half_gpu_pod("p")},
                     {"Nodes",
                      {{"items", json::array({testing::node_json("gpu-node-new", "A10", 4),
                                              testing::node_json("gpu-node-b", "V100M16", 2)})}}}};
  auto [code, filter] = post_json(*client, "/filter", args.dump());
  ASSERT_EQ(code, 200);
  EXPECT_EQ(filter["Nodes"]["items"].size(), 1u);
  EXPECT_EQ(filter["Nodes"]["items"][0]["metadata"]["name"], "gpu-node-b");
  EXPECT_EQ(filter["FailedAndUnresolvableNodes"],
            (json{{"gpu-node-new", "Node unknown to greensched (unknown_nodes: reject)"}}));
}

// A Node object of a GPU model with no power figures is refused, as at start-up and in
// `greensched simulate` (power::check_gpu_models); one of a known model in any spelling joins.
TEST(ServeContract, NodeObjectOfAnUnknownGpuModelIsRefused) {
  testing::TestServer server("fgd");
  auto client = server.client();
  const json args = {
      {"Pod", half_gpu_pod("p")},
      {"Nodes",
       {{"items", json::array({testing::node_json("gpu-node-h800", "H800", 8),
                               testing::node_json("gpu-node-h100", "NVIDIA-H100-80GB-HBM3", 8),
                               testing::node_json("gpu-node-b", "V100M16", 2)})}}}};
  for (int round = 0; round < 2; ++round) {  // refused again, not added by a later request
    auto [code, filter] = post_json(*client, "/filter", args.dump());
    ASSERT_EQ(code, 200);
    EXPECT_EQ(
        filter["FailedAndUnresolvableNodes"],
        (json{{"gpu-node-h800", "GPU model with no power figures (see greensched serve's log)"}}))
        << filter.dump(2);
    ASSERT_EQ(filter["Nodes"]["items"].size(), 2u);
    EXPECT_EQ(filter["Nodes"]["items"][0]["metadata"]["name"], "gpu-node-h100");
  }
  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(
      metrics->body.find(
          "greensched_node_gpu_capacity_milli{node=\"gpu-node-h100\",gpu_model=\"H100\"} 8000\n"),
      std::string::npos)
      << metrics->body;
  EXPECT_EQ(metrics->body.find("gpu-node-h800"), std::string::npos);
}

TEST(ServeContract, WholeGpuPodsHamiStyleGetBothGpus) {
  testing::TestServer server;
  auto client = server.client();
  const json pod = testing::pod_json("llm-finetune", "uid-llm-finetune",
                                     json{{"limits", {{"nvidia.com/gpu", "2"}}},
                                          {"requests", {{"cpu", "2"}, {"memory", "16Gi"}}}});
  auto [code, filter] = post_json(*client, "/filter", names_args(pod, kAllNames).dump());
  ASSERT_EQ(code, 200);
  EXPECT_EQ(filter["NodeNames"], json({"gpu-node-b", "gpu-node-e"}));
  EXPECT_EQ(filter["FailedNodes"]["gpu-node-a"], "Insufficient fully free GPUs");
  EXPECT_FALSE(filter["FailedAndUnresolvableNodes"].contains("gpu-node-a"));
  EXPECT_EQ(filter["FailedAndUnresolvableNodes"]["gpu-node-c"], "Insufficient fully free GPUs");
  EXPECT_EQ(filter["FailedAndUnresolvableNodes"]["gpu-node-g"], "Insufficient fully free GPUs");
  auto [bcode, bound] = post_json(*client, "/bind",
                                  json{{"PodName", "llm-finetune"},
                                       {"PodNamespace", "ml-team"},
                                       {"PodUID", "uid-llm-finetune"},
                                       {"Node", "gpu-node-b"}}
                                      .dump());
  ASSERT_EQ(bcode, 200);
  EXPECT_EQ(bound["Annotations"]["alibabacloud.com/gpu-index"], "0-1");
  auto got = client->Get("/pods/ml-team/llm-finetune");
  ASSERT_TRUE(got);
  const json p = json::parse(got->body);
  EXPECT_EQ(p["gpu_count"], 2);
  EXPECT_EQ(p["gpu_milli"], 1000);
  EXPECT_EQ(p["gpu_indices"], "0-1");
  EXPECT_EQ(p["cpu_milli"], 2100);
}

// kube-scheduler filters the next pod while the previous one's bind is in flight, on a cache
// where that pod is assumed on the node it chose. Prioritize assumes it there too: the next
// filter, at once and without waiting for any bind, sees the GPUs the previous pod will take.
TEST(ServeContract, PrioritizeHoldsTheRoomUntilTheBind) {
  testing::TestServer server("fgd");
  auto two_gpus = [](const std::string& name) {
    return testing::pod_json(name, "uid-" + name,
                             json{{"limits", {{"nvidia.com/gpu", "2"}}},
                                  {"requests", {{"cpu", "2"}, {"memory", "16Gi"}}}});
  };
  auto client = server.client();
  auto [code, first] =
      post_json(*client, "/filter", names_args(two_gpus("first"), kAllNames).dump());
  ASSERT_EQ(code, 200);
  ASSERT_EQ(first["NodeNames"], json({"gpu-node-b", "gpu-node-e"}));
  auto [pcode, scores] =
      post_json(*client, "/prioritize", names_args(two_gpus("first"), first["NodeNames"]).dump());
  ASSERT_EQ(pcode, 200);
  std::string top;
  for (const json& h : scores) {
    if (h["Score"] == 10) top = h["Host"];
  }
  ASSERT_FALSE(top.empty()) << scores.dump();
  const std::string other = top == "gpu-node-b" ? "gpu-node-e" : "gpu-node-b";
  EXPECT_EQ(server.extender().gauges().assumed, 1);
  // Not bound: no pod listed, no journal entry; but the room is taken for the next filter.
  EXPECT_FALSE(server.extender().pod("ml-team", "first").has_value());

  const auto start = std::chrono::steady_clock::now();
  auto [scode, second] =
      post_json(*client, "/filter", names_args(two_gpus("second"), kAllNames).dump());
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(scode, 200);
  EXPECT_EQ(second["NodeNames"], json({other})) << "the assumed room was offered again";
  EXPECT_LT(took, 1.0);

  // The bind on the assumed node confirms the assumption: same GPUs, now durable.
  auto [bcode, bound] = post_json(*client, "/bind", binding("first", top).dump());
  ASSERT_EQ(bcode, 200);
  ASSERT_EQ(bound["Error"], "");
  EXPECT_EQ(bound["Annotations"]["alibabacloud.com/gpu-index"], "0-1");
  EXPECT_EQ(server.extender().pod("ml-team", "first")->at("node"), top);
  const StateGauges g = server.extender().gauges();
  EXPECT_EQ(g.assumed, 0);
  EXPECT_EQ(g.assume_misses, 0u);
  auto [tcode, third] =
      post_json(*client, "/filter", names_args(two_gpus("third"), kAllNames).dump());
  ASSERT_EQ(tcode, 200);
  EXPECT_EQ(third["NodeNames"], json({other}));
}

// An assumption whose bind never comes (a later plugin rejected the pod) is forgotten after
// assume_ttl_ms; one whose pod is filtered again is forgotten at once; a bind to another node
// than the assumed one frees the assumed room and is counted as a miss.
TEST(ServeContract, AssumptionsExpireAndMissesAreForgotten) {
  ExtenderOptions options;
  options.assume_ttl_ms = 300;
  testing::TestServer server("fgd", {}, options);
  auto two_gpus = [](const std::string& name) {
    return testing::pod_json(name, "uid-" + name,
                             json{{"limits", {{"nvidia.com/gpu", "2"}}},
                                  {"requests", {{"cpu", "2"}, {"memory", "16Gi"}}}});
  };
  const json both = json({"gpu-node-b", "gpu-node-e"});
  auto c = server.client();
  auto prioritized = [&](const std::string& name) {
    post_json(*c, "/filter", names_args(two_gpus(name), kAllNames).dump());
    auto [code, scores] = post_json(*c, "/prioritize", names_args(two_gpus(name), both).dump());
    EXPECT_EQ(code, 200);
    for (const json& h : scores) {
      if (h["Score"] == 10) return h["Host"].get<std::string>();
    }
    return std::string();
  };
  const std::string top = prioritized("never-bound");
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(post_json(*c, "/filter", names_args(two_gpus("x"), kAllNames).dump())
                .second["NodeNames"]
                .size(),
            1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(
      post_json(*c, "/filter", names_args(two_gpus("x"), kAllNames).dump()).second["NodeNames"],
      both);
  StateGauges g = server.extender().gauges();
  EXPECT_EQ(g.assumed, 0);
  EXPECT_EQ(g.assume_expired, 1u);

  // Filtered again: its own assumption does not hide the node from it.
  ASSERT_EQ(prioritized("again"), top);
  EXPECT_EQ(
      post_json(*c, "/filter", names_args(two_gpus("again"), kAllNames).dump()).second["NodeNames"],
      both);
  EXPECT_EQ(server.extender().gauges().assumed, 0);

  // kube-scheduler chose the other node: the bind lands there and the assumed room is free.
  const std::string other = top == "gpu-node-b" ? "gpu-node-e" : "gpu-node-b";
  ASSERT_EQ(prioritized("elsewhere"), top);
  auto [bcode, bound] = post_json(*c, "/bind", binding("elsewhere", other).dump());
  ASSERT_EQ(bcode, 200);
  ASSERT_EQ(bound["Error"], "");
  g = server.extender().gauges();
  EXPECT_EQ(g.assumed, 0);
  EXPECT_EQ(g.assume_misses, 1u);
  EXPECT_EQ(
      post_json(*c, "/filter", names_args(two_gpus("y"), kAllNames).dump()).second["NodeNames"],
      json({top}));
  auto metrics = c->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("greensched_assume_misses_total 1\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("greensched_assume_expired_total 1\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("greensched_assumed_pods 0\n"), std::string::npos);
}

TEST(ServeContract, HamiPercentageAndOpenbAnnotations) {
  testing::TestServer server;
  auto client = server.client();
  const json hami = testing::pod_json(
      "hami", "uid-hami",
      json{{"limits", {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem-percentage", "30"}}}});
  const json openb = testing::pod_json(
      "openb", "uid-openb", json{{"requests", {{"cpu", "6"}, {"memory", "12Gi"}}}},
      json{{"alibabacloud.com/gpu-milli", "250"}, {"alibabacloud.com/gpu-count", "1"}});
  for (const json& pod : {hami, openb}) {
    auto [code, filter] = post_json(*client, "/filter", names_args(pod, {"gpu-node-b"}).dump());
    ASSERT_EQ(code, 200);
    ASSERT_EQ(filter["NodeNames"], json({"gpu-node-b"}));
    const std::string name = pod["metadata"]["name"];
    auto [bcode, bound] = post_json(*client, "/bind", binding(name, "gpu-node-b").dump());
    ASSERT_EQ(bcode, 200);
    EXPECT_EQ(bound["Error"], "");
  }
  EXPECT_EQ(server.extender().pod("ml-team", "hami")->at("gpu_milli"), 300);
  EXPECT_EQ(server.extender().pod("ml-team", "openb")->at("gpu_milli"), 250);
  // FGD packs the second share onto the GPU the first one opened.
  EXPECT_EQ(server.extender().pod("ml-team", "hami")->at("gpu_indices"),
            server.extender().pod("ml-team", "openb")->at("gpu_indices"));
}

TEST(ServeContract, BindRefusesOvercommitWithAnError) {
  testing::TestServer server;
  auto client = server.client();
  for (const char* name : {"first", "second"}) {
    const json pod =
        testing::pod_json(name, std::string("uid-") + name,
                          json{{"limits", {{"alibabacloud.com/gpu-milli", "600"}, {"cpu", "1"}}}});
    auto [code, filter] = post_json(*client, "/filter", names_args(pod, {"gpu-node-g"}).dump());
    ASSERT_EQ(code, 200);
    EXPECT_EQ(filter["NodeNames"], json({"gpu-node-g"}));  // both see the 600 milli still free
  }
  auto [c1, first] = post_json(*client, "/bind", binding("first", "gpu-node-g").dump());
  EXPECT_EQ(first["Error"], "");
  auto [c2, second] = post_json(*client, "/bind", binding("second", "gpu-node-g").dump());
  EXPECT_EQ(c2, 200);
  EXPECT_EQ(second, (json{{"Error",
                           "cannot bind pod ml-team/second to node gpu-node-g: insufficient GPU "
                           "share on any single GPU: max free 0 < 600 milli"},
                          {"Annotations", json::object()}}));
  EXPECT_FALSE(server.extender().pod("ml-team", "second").has_value());
}

TEST(ServeContract, ReleaseFreesAndAnswersNotFoundAfterwards) {
  testing::TestServer server;
  auto client = server.client();
  post_json(*client, "/filter", names_args(half_gpu_pod("job"), {"gpu-node-g"}).dump());
  auto [bcode, bound] = post_json(*client, "/bind", binding("job", "gpu-node-g").dump());
  ASSERT_EQ(bound["Error"], "");
  const json wrong_uid = {{"PodName", "job"}, {"PodNamespace", "ml-team"}, {"PodUID", "other"}};
  auto [wcode, wrong] = post_json(*client, "/release", wrong_uid.dump());
  EXPECT_EQ(wcode, 409);
  EXPECT_EQ(wrong, (json{{"Error", "pod ml-team/job is bound as UID uid-job, not other"},
                         {"released", false}}));
  const json release = {{"PodName", "job"}, {"PodNamespace", "ml-team"}, {"PodUID", "uid-job"}};
  auto [rcode, released] = post_json(*client, "/release", release.dump());
  EXPECT_EQ(rcode, 200);
  EXPECT_EQ(released, (json{{"Error", ""}, {"released", true}}));
  auto [again_code, again] = post_json(*client, "/release", release.dump());
  EXPECT_EQ(again_code, 404);
  EXPECT_EQ(again, (json{{"Error", "pod ml-team/job holds no allocation"}, {"released", false}}));
  auto got = client->Get("/pods/ml-team/job");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, 404);
}

TEST(ServeContract, ResyncAddsMissingAndRemovesUnknown) {
  testing::TestServer server;
  auto client = server.client();
  // The state holds existing-a, existing-c, existing-g. The controller reports existing-a as
  // is, a pod the extender never saw (with its GPU index) and one without indices.
  const json body = {
      {"Pods",
       json::array({{{"namespace", "kube-system"},
                     {"name", "existing-a"},
                     {"uid", "uid-existing-a"},
                     {"node", "gpu-node-a"},
                     {"cpu", "1"},
                     {"memory", "1Gi"},
                     {"gpu_milli", 300},
                     {"gpu_count", 1},
                     {"gpu_indices", "1"}},
                    {{"namespace", "ml-team"},
                     {"name", "seen-elsewhere"},
                     {"uid", "u1"},
                     {"node", "gpu-node-b"},
                     {"cpu", "2"},
                     {"memory", "4Gi"},
                     {"gpu_count", 2},
                     {"gpu_indices", "0-1"}},
                    {{"namespace", "ml-team"},
                     {"name", "no-indices"},
                     {"uid", "u2"},
                     {"node", "gpu-node-a"},
                     {"cpu", "1"},
                     {"memory", "1Gi"},
                     {"gpu_milli", 500},
                     {"gpu_count", 1}},
                    {{"namespace", "ml-team"}, {"name", "lost"}, {"node", "ghost-node"}}})}};
  auto [code, result] = post_json(*client, "/resync", body.dump());
  ASSERT_EQ(code, 200);
  EXPECT_EQ(result, (json{{"Error", ""},
                          {"added", 2},
                          {"removed", 2},
                          {"unchanged", 1},
                          {"errors", json::array({{{"pod", "ml-team/lost"},
                                                   {"error", "unknown node ghost-node"}}})}}));
  auto pods = client->Get("/pods");
  ASSERT_TRUE(pods);
  const json list = json::parse(pods->body);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]["name"], "existing-a");
  EXPECT_EQ(list[1]["name"], "no-indices");
  EXPECT_EQ(list[1]["gpu_indices"], "1");  // FGD fills the partly used GPU
  EXPECT_EQ(list[2]["name"], "seen-elsewhere");
  EXPECT_EQ(list[2]["gpu_indices"], "0-1");
}

TEST(ServeContract, BindsThroughTheApiServerWithTheGpuIndexAnnotation) {
  // A stand-in API server: records the Binding, then answers 201 (or 409 for "taken").
  httplib::Server api;
  std::mutex mu;
  std::vector<std::pair<std::string, json>> posted;
  std::string authorization;
  api.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)",
           [&](const httplib::Request& req, httplib::Response& res) {
             std::lock_guard lock(mu);
             posted.emplace_back(req.path, json::parse(req.body));
             authorization = req.get_header_value("Authorization");
             if (req.matches[2].str() == "taken") {
               res.status = 409;
               res.set_content(R"({"kind":"Status","reason":"Conflict"})", "application/json");
             } else {
               res.status = 201;
               res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
             }
           });
  const int api_port = api.bind_to_any_port("127.0.0.1");
  std::thread api_thread([&] { api.listen_after_bind(); });

  testing::TestServer server;
  const std::string token_file = server.dir() + "/token";
  { std::ofstream(token_file) << "s3cret-token\n"; }
  KubeApiOptions options;
  options.server = "http://127.0.0.1:" + std::to_string(api_port);
  options.token_file = token_file;
  auto binder = make_kube_binder(options);
  ASSERT_TRUE(binder.ok()) << binder.error();
  server.extender().set_binder(binder.value());
  auto client = server.client();

  for (const char* name : {"trainer-3", "taken"}) {
    post_json(*client, "/filter", names_args(half_gpu_pod(name), {"gpu-node-a"}).dump());
  }
  auto [code, bound] = post_json(*client, "/bind", binding("trainer-3", "gpu-node-a").dump());
  ASSERT_EQ(code, 200);
  EXPECT_EQ(bound["Error"], "");
  auto [tcode, taken] = post_json(*client, "/bind", binding("taken", "gpu-node-a").dump());
  ASSERT_EQ(tcode, 200);
  EXPECT_NE(taken["Error"].get<std::string>().find("binding through the API server failed"),
            std::string::npos);
  EXPECT_FALSE(server.extender().pod("ml-team", "taken").has_value());  // rolled back
  api.stop();
  api_thread.join();

  std::lock_guard lock(mu);
  ASSERT_EQ(posted.size(), 2u);
  EXPECT_EQ(posted[0].first, "/api/v1/namespaces/ml-team/pods/trainer-3/binding");
  EXPECT_EQ(posted[0].second,
            (json{{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata",
                   {{"name", "trainer-3"},
                    {"namespace", "ml-team"},
                    {"uid", "uid-trainer-3"},
                    {"annotations", {{"alibabacloud.com/gpu-index", "1"}}}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "gpu-node-a"}}}}));
  EXPECT_EQ(authorization, "Bearer s3cret-token");
}

TEST(ServeContract, PrefixedVerbsAndNotFound) {
  ServerOptions options;
  options.prefix = "greensched/v1";
  testing::TestServer server("bestfit", options);
  auto client = server.client();
  auto [code, filter] = post_json(*client, "/greensched/v1/filter",
                                  names_args(half_gpu_pod("p"), {"gpu-node-b"}).dump());
  EXPECT_EQ(code, 200);
  EXPECT_EQ(filter["NodeNames"], json({"gpu-node-b"}));
  auto [ncode, missing] = post_json(*client, "/filter", "{}");
  EXPECT_EQ(ncode, 404);
  EXPECT_EQ(missing["Error"], "no such endpoint: POST /filter (verbs live under /greensched/v1/)");
  EXPECT_EQ(normalise_prefix(""), "/");
  EXPECT_EQ(normalise_prefix("/a//b"), "/a/b/");
}

}  // namespace
}  // namespace greensched::serve
