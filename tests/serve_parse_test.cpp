// Parsing what Kubernetes sends: quantities, pod requests (Alibaba/openb and HAMi styles),
// Node objects, GPU index annotations, the extender protocol's argument objects, and the
// serve config.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "greensched/serve/args_reader.hpp"
#include "greensched/serve/extender_protocol.hpp"
#include "greensched/serve/gpu_index.hpp"
#include "greensched/serve/node_object.hpp"
#include "greensched/serve/pod_request.hpp"
#include "greensched/serve/quantity.hpp"
#include "greensched/serve/serve_config.hpp"
#include "serve_test_support.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

int64_t milli(const char* q) {
  auto r = parse_quantity(q, 1000);
  EXPECT_TRUE(r.ok()) << q << ": " << (r.ok() ? "" : r.error());
  return r.ok() ? r.value() : -999;
}
int64_t value(const char* q) {
  auto r = parse_quantity(q, 1);
  EXPECT_TRUE(r.ok()) << q << ": " << (r.ok() ? "" : r.error());
  return r.ok() ? r.value() : -999;
}

TEST(ServeQuantity, CpuForms) {
  EXPECT_EQ(milli("500m"), 500);
  EXPECT_EQ(milli("2"), 2000);
  EXPECT_EQ(milli("1.5"), 1500);
  EXPECT_EQ(milli("0.1"), 100);
  EXPECT_EQ(milli(".5"), 500);
  EXPECT_EQ(milli("1."), 1000);
  EXPECT_EQ(milli("+3"), 3000);
  EXPECT_EQ(milli("0"), 0);
  EXPECT_EQ(milli("1e3"), 1000000);
  EXPECT_EQ(milli("1E-3"), 1);
  EXPECT_EQ(milli("100u"), 1);      // 0.0001 cores rounds up to 1 milli
  EXPECT_EQ(milli("1500000n"), 2);  // 1.5 milli rounds up
  EXPECT_EQ(milli("1k"), 1000000);
  EXPECT_EQ(milli("-1"), -1000);  // parsed; callers reject negatives
}

TEST(ServeQuantity, MemoryForms) {
  EXPECT_EQ(value("1Gi"), int64_t{1} << 30);
  EXPECT_EQ(value("512Mi"), int64_t{512} << 20);
  EXPECT_EQ(value("1G"), 1000000000);
  EXPECT_EQ(value("128974848"), 128974848);
  EXPECT_EQ(value("129e6"), 129000000);
  EXPECT_EQ(value("123Mi"), 128974848);
  EXPECT_EQ(value("1.5Gi"), int64_t{3} << 29);
  EXPECT_EQ(value("2Ki"), 2048);
  EXPECT_EQ(value("1Ei"), int64_t{1} << 60);
  EXPECT_EQ(value("0.5"), 1);  // Value() rounds up
  EXPECT_EQ(bytes_to_mib(value("1Gi")), 1024);
  EXPECT_EQ(bytes_to_mib(1), 1);
  EXPECT_EQ(bytes_to_mib(0), 0);
}

TEST(ServeQuantity, RejectsMalformedAndHuge) {
  for (const char* bad :
       {"", "abc", "1.2.3", "1Zi", "1ki", "m", "1e", "1e+", "1ee3", "--1", "1 Gi", "1e99999", "9Ei",
        "1e30", "99999999999999999999999999999999", "0x10", "1/2"}) {
    EXPECT_FALSE(parse_quantity(bad, 1).ok()) << bad;
  }
  EXPECT_TRUE(parse_quantity("3Ei", 1).ok());  // up to 2^62
  EXPECT_FALSE(parse_quantity("5Ei", 1).ok());
  EXPECT_FALSE(parse_quantity("8Ei", 1000).ok());
  EXPECT_FALSE(parse_quantity(std::string(65, '1'), 1).ok());
}

TEST(ServeQuantity, FromJsonNumbers) {
  EXPECT_EQ(quantity_from_json(json(2), 1000).value(), 2000);
  EXPECT_EQ(quantity_from_json(json(1.5), 1000).value(), 1500);
  EXPECT_EQ(quantity_from_json(json("250m"), 1000).value(), 250);
  EXPECT_FALSE(quantity_from_json(json::array(), 1).ok());
  EXPECT_FALSE(quantity_from_json(json(true), 1).ok());
}

TEST(ServeGpuIndex, FormatsAndParses) {
  EXPECT_EQ(format_gpu_index(0), "");
  EXPECT_EQ(format_gpu_index(0b1), "0");
  EXPECT_EQ(format_gpu_index(0b11), "0-1");
  EXPECT_EQ(format_gpu_index(0b10101100), "2-3-5-7");
  EXPECT_EQ(parse_gpu_index("0-1").value(), 0b11u);
  EXPECT_EQ(parse_gpu_index("7,2").value(), 0b10000100u);
  EXPECT_EQ(parse_gpu_index("").value(), 0u);
  for (const char* bad : {"0-", "-1", "a", "1-1", "16", "0--1", "1.5", "0001"}) {
    EXPECT_FALSE(parse_gpu_index(bad).ok()) << bad;
  }
}

json resources(json limits, json requests = json::object()) {
  json r = json::object();
  if (!limits.empty()) r["limits"] = std::move(limits);
  if (!requests.empty()) r["requests"] = std::move(requests);
  return r;
}

PodRequest parse_ok(const json& pod) {
  auto r = parse_pod(pod);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
  return r.ok() ? r.value() : PodRequest{};
}

std::string parse_error(const json& pod) {
  auto r = parse_pod(pod);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error();
}

TEST(ServePodRequest, AlibabaShareRequestsAndSidecar) {
  // The GPU container asks 6 CPUs (requests) under a limit of 8, 8Gi, and half a GPU; the
  // sidecar adds 100m and 64Mi (requests, not limits).
  const json pod = testing::pod_json(
      "trainer-1", "uid-1",
      resources({{"cpu", "8"}, {"memory", "8Gi"}, {"alibabacloud.com/gpu-milli", "500"}},
                {{"cpu", "6"}, {"memory", "8Gi"}, {"alibabacloud.com/gpu-milli", "500"}}));
  const PodRequest r = parse_ok(pod);
  EXPECT_EQ(r.ref.ns, "ml-team");
  EXPECT_EQ(r.ref.name, "trainer-1");
  EXPECT_EQ(r.ref.uid, "uid-1");
  EXPECT_EQ(r.ref.key(), "ml-team/trainer-1");
  EXPECT_EQ(r.cpu_milli, 6100);
  EXPECT_EQ(r.memory_mib, 8192 + 64);
  EXPECT_EQ(r.num_gpu, 1);
  EXPECT_EQ(r.gpu_milli, 500);
  EXPECT_TRUE(r.gpu_models.empty());
}

TEST(ServePodRequest, WholeGpusByCount) {
  const PodRequest r = parse_ok(
      testing::pod_json("p", "u", resources({{"alibabacloud.com/gpu-count", "2"}, {"cpu", "4"}})));
  EXPECT_EQ(r.num_gpu, 2);
  EXPECT_EQ(r.gpu_milli, 1000);
  EXPECT_EQ(r.cpu_milli, 4100);  // limits only: the request defaults to the limit
}

TEST(ServePodRequest, HamiCountAndPercentage) {
  PodRequest r = parse_ok(testing::pod_json(
      "p", "u", resources({{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem-percentage", "30"}})));
  EXPECT_EQ(r.num_gpu, 1);
  EXPECT_EQ(r.gpu_milli, 300);
  r = parse_ok(testing::pod_json("p", "u", resources({{"nvidia.com/gpu", 4}})));
  EXPECT_EQ(r.num_gpu, 4);
  EXPECT_EQ(r.gpu_milli, 1000);
  EXPECT_NE(parse_error(testing::pod_json("p", "u",
                                          resources({{"nvidia.com/gpu", "2"},
                                                     {"nvidia.com/gpumem-percentage", "50"}})))
                .find("takes them whole"),
            std::string::npos);
}

TEST(ServePodRequest, OpenbAnnotationsAndModels) {
  const json pod =
      testing::pod_json("openb-pod-0001", "u", resources({{"cpu", "6"}, {"memory", "12Gi"}}),
                        {{"alibabacloud.com/gpu-milli", "460"},
                         {"alibabacloud.com/gpu-count", "1"},
                         {"alibabacloud.com/gpu-card-model", "V100M16|V100M32"}});
  const PodRequest r = parse_ok(pod);
  EXPECT_EQ(r.num_gpu, 1);
  EXPECT_EQ(r.gpu_milli, 460);
  EXPECT_EQ(r.gpu_models, (std::vector<std::string>{"V100M16", "V100M32"}));
}

TEST(ServePodRequest, NodeSelectorModelInitContainersAndOverhead) {
  json pod = testing::pod_json("p", "u", resources({}, {{"cpu", "1"}, {"memory", "1Gi"}}));
  pod["spec"]["nodeSelector"] = {{"alibabacloud.com/gpu-card-model", "T4"}};
  pod["spec"]["initContainers"] =
      json::array({{{"name", "init"}, {"resources", {{"requests", {{"cpu", "4"}}}}}}});
  pod["spec"]["overhead"] = {{"cpu", "250m"}, {"memory", "120Mi"}};
  const PodRequest r = parse_ok(pod);
  EXPECT_EQ(r.cpu_milli, 4000 + 250);        // max(sum 1.1, init 4) + overhead
  EXPECT_EQ(r.memory_mib, 1024 + 64 + 120);  // sum + overhead
  EXPECT_EQ(r.gpu_models, std::vector<std::string>{"T4"});
  EXPECT_EQ(r.num_gpu, 0);
}

TEST(ServePodRequest, DefaultsNamespaceAndAcceptsLowercaseKeys) {
  const json pod = {{"metadata", {{"name", "bare"}}},
                    {"spec", {{"containers", json::array({json::object()})}}}};
  const PodRequest r = parse_ok(pod);
  EXPECT_EQ(r.ref.ns, "default");
  EXPECT_EQ(r.cpu_milli, 0);
  const json upper = {{"Metadata", {{"Name", "x"}}}, {"Spec", {{"Containers", json::array()}}}};
  EXPECT_EQ(parse_ok(upper).ref.name, "x");
}

// Every pod shape (no GPU, a share, whole GPUs, with and without models) survives the trip
// to the v1.Pod load tests send and back through parse_pod.
TEST(ServePodRequest, PendingPodObjectReadsBackToTheSameRequest) {
  GpuModelRegistry models;
  const GpuModelSet v100 =
      (GpuModelSet{1} << *models.intern("V100M16")) | (GpuModelSet{1} << *models.intern("V100M32"));
  const struct {
    int64_t cpu, mem;
    int num_gpu;
    int32_t milli;
    GpuModelSet spec;
  } cases[] = {{4000, 8192, 0, 0, 0}, {1500, 3000, 1, 250, 0}, {32000, 65536, 4, 1000, v100}};
  for (const auto& c : cases) {
    PodSpec pod;
    pod.cpu_milli = c.cpu;
    pod.memory_mib = c.mem;
    pod.num_gpu = c.num_gpu;
    pod.gpu_milli = c.milli;
    pod.gpu_spec = c.spec;
    const json object = pending_pod_object(pod, {"load", "p-1", "uid-1"}, models);
    const PodRequest r = parse_ok(object);
    EXPECT_EQ(r.ref.key(), "load/p-1");
    EXPECT_EQ(r.ref.uid, "uid-1");
    EXPECT_EQ(r.cpu_milli, c.cpu);
    EXPECT_EQ(r.memory_mib, c.mem);
    EXPECT_EQ(r.num_gpu, c.num_gpu);
    EXPECT_EQ(r.gpu_milli, c.milli);
    const std::vector<std::string> want_models =
        c.spec ? std::vector<std::string>{"V100M16", "V100M32"} : std::vector<std::string>{};
    EXPECT_EQ(r.gpu_models, want_models);
  }
}

TEST(ServePodRequest, RejectsBadRequestsWithTheField) {
  auto with = [](json limits) { return testing::pod_json("p", "u", resources(std::move(limits))); };
  EXPECT_NE(parse_error(with({{"cpu", "-1"}})).find("negative request"), std::string::npos);
  EXPECT_NE(parse_error(with({{"memory", "lots"}})).find("limits[memory]"), std::string::npos);
  EXPECT_NE(parse_error(with({{"alibabacloud.com/gpu-milli", "1500"}})).find("over 1000"),
            std::string::npos);
  EXPECT_NE(parse_error(with({{"alibabacloud.com/gpu-count", "32"}})).find("oversized"),
            std::string::npos);
  EXPECT_NE(parse_error(with({{"cpu", "1e30"}})).find("out of range"), std::string::npos);
  EXPECT_NE(parse_error(with({{"cpu", "2000000000"}})).find("out of range"), std::string::npos);
  EXPECT_NE(parse_error(with({{"nvidia.com/gpu", "1"}, {"alibabacloud.com/gpu-milli", "100"}}))
                .find("both"),
            std::string::npos);
  EXPECT_NE(parse_error(with({{"nvidia.com/gpumem-percentage", "150"}})).find("over 100"),
            std::string::npos);
  EXPECT_NE(
      parse_error(with({{"alibabacloud.com/gpu-count", "2"}, {"alibabacloud.com/gpu-milli", "0"}}))
          .find("0 milli"),
      std::string::npos);
  EXPECT_EQ(parse_error(json::array()), "Pod: must be an object, not array");
  EXPECT_EQ(parse_error(json{{"spec", json::object()}}), "Pod.metadata: missing");
  EXPECT_EQ(parse_error(json{{"metadata", {{"name", ""}}}}), "Pod.metadata.name: missing or empty");
  EXPECT_EQ(parse_error(json{{"metadata", {{"name", "x"}}}}), "Pod.spec: missing");
  EXPECT_EQ(parse_error(json{{"metadata", {{"name", "x"}}}, {"spec", {{"containers", 3}}}}),
            "Pod.spec.containers: missing or not an array");
  EXPECT_EQ(parse_error(json{{"metadata", {{"name", 7}}}}),
            "Pod.metadata.name: must be a string, not number");
}

TEST(ServeNodeObject, ReadsAllocatableAndModel) {
  auto n = parse_node(testing::node_json("gpu-node-7", "V100M32", 8, "95500m", "515789484Ki"));
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(n.value().name, "gpu-node-7");
  EXPECT_EQ(n.value().cpu_milli, 95500);
  EXPECT_EQ(n.value().memory_mib, 503700);  // 515789484 KiB, rounded down
  EXPECT_EQ(n.value().gpu_count, 8);
  EXPECT_EQ(n.value().gpu_model, "V100M32");
  auto cpu = parse_node(testing::node_json("cpu-1", "", 0));
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu.value().gpu_count, 0);
  EXPECT_EQ(cpu.value().gpu_model, "");
}

TEST(ServeNodeObject, NvidiaFallbacksAndErrors) {
  json node = testing::node_json("n", "", 0);
  node["status"]["allocatable"]["nvidia.com/gpu"] = "4";
  node["metadata"]["labels"]["nvidia.com/gpu.product"] = "A100";
  auto n = parse_node(node);
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(n.value().gpu_count, 4);
  EXPECT_EQ(n.value().gpu_model, "A100");
  node["metadata"]["labels"].erase("nvidia.com/gpu.product");
  EXPECT_NE(parse_node(node).error().find("no alibabacloud.com/gpu-card-model label"),
            std::string::npos);
  json broken = {{"metadata", {{"name", "b"}}}};
  EXPECT_EQ(parse_node(broken).error(), "Node b: status missing (no allocatable resources)");
  json many = testing::node_json("m", "T4", 8);
  many["status"]["allocatable"]["alibabacloud.com/gpu-count"] = "64";
  EXPECT_NE(parse_node(many).error().find("at most 16"), std::string::npos);
  auto list = parse_node_list({{"items", json::array({testing::node_json("a", "T4", 1), broken})}});
  EXPECT_EQ(list.error(), "NodeList.items[1]: Node b: status missing (no allocatable resources)");
}

TEST(ServeNodeObject, SpecInternsModelsAndKeepsTheUnknownIdFree) {
  GpuModelRegistry models;  // starts with the common models
  const std::size_t known = models.size();
  auto a = to_node_spec(NodeInfo{"a", 8000, 1024, 2, "T4"}, models);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a.value().name, "a");
  EXPECT_EQ(a.value().cpu_milli, 8000);
  EXPECT_EQ(a.value().memory_mib, 1024);
  EXPECT_EQ(a.value().gpu_count, 2);
  EXPECT_EQ(models.name(a.value().model), "T4");
  auto b = to_node_spec(NodeInfo{"b", 8000, 1024, 1, "NewGpu"}, models);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_EQ(models.name(b.value().model), "NewGpu");
  EXPECT_EQ(to_node_spec(NodeInfo{"c", 8000, 1024, 1, "NewGpu"}, models).value().model,
            b.value().model);
  EXPECT_TRUE(to_node_spec(NodeInfo{"cpu", 8000, 1024, 0, ""}, models).ok());
  EXPECT_EQ(models.size(), known + 1);
  while (models.size() < static_cast<std::size_t>(kUnknownModelBit)) {
    const std::string name = fmt::format("M{}", models.size());
    ASSERT_TRUE(to_node_spec(NodeInfo{"n", 1, 1, 1, name}, models).ok()) << name;
  }
  EXPECT_EQ(to_node_spec(NodeInfo{"z", 1, 1, 1, "Z"}, models).error(),
            "node z: GPU model Z: too many distinct GPU models");
  EXPECT_TRUE(to_node_spec(NodeInfo{"t", 1, 1, 1, "T4"}, models).ok());  // known: still fine
}

TEST(ServeProtocol, ExtenderArgsByNamesAndByObjects) {
  json pod = testing::pod_json("p", "u", resources({{"alibabacloud.com/gpu-milli", "100"}}));
  auto by_names = parse_extender_args(
      json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", json::array({"a", "b"})}});
  ASSERT_TRUE(by_names.ok()) << by_names.error();
  EXPECT_FALSE(by_names.value().node_objects);
  EXPECT_EQ(by_names.value().node_names, (std::vector<std::string>{"a", "b"}));

  json broken = {{"metadata", {{"name", "broken"}}}};
  auto by_objects = parse_extender_args(
      json{{"Pod", pod},
           {"Nodes", {{"items", json::array({testing::node_json("a", "T4", 1), broken})}}},
           {"NodeNames", nullptr}});
  ASSERT_TRUE(by_objects.ok()) << by_objects.error();
  const ExtenderArgs& args = by_objects.value();
  EXPECT_TRUE(args.node_objects);
  EXPECT_EQ(args.node_names, (std::vector<std::string>{"a", "broken"}));
  ASSERT_EQ(args.nodes.size(), 2u);
  EXPECT_TRUE(args.nodes[0].info.has_value());
  EXPECT_FALSE(args.nodes[1].info.has_value());
  EXPECT_EQ(args.nodes[1].object, broken);

  EXPECT_EQ(parse_extender_args(json{{"Pod", pod}}).error(),
            "ExtenderArgs: neither Nodes nor NodeNames given");
  EXPECT_EQ(parse_extender_args(json{{"NodeNames", json::array()}}).error(),
            "ExtenderArgs.Pod: missing");
  EXPECT_EQ(parse_extender_args(json{{"Pod", pod}, {"NodeNames", json::array({1})}}).error(),
            "ExtenderArgs.NodeNames: every entry must be a non-empty string");
  EXPECT_EQ(parse_extender_args(json("x")).error(),
            "ExtenderArgs: must be a JSON object, not string");
}

TEST(ServeProtocol, BindingReleaseAndResyncArgs) {
  auto b = parse_binding_args(
      json{{"PodName", "p"}, {"PodNamespace", "ns"}, {"PodUID", "u"}, {"Node", "n"}});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.value().pod.key(), "ns/p");
  EXPECT_EQ(b.value().pod.uid, "u");
  EXPECT_EQ(b.value().node, "n");
  EXPECT_EQ(parse_binding_args(json{{"PodName", "p"}}).error(),
            "ExtenderBindingArgs.Node: missing or empty");
  EXPECT_EQ(parse_binding_args(json{{"Node", "n"}}).error(),
            "ExtenderBindingArgs.PodName: missing or empty");

  auto pods = parse_resync(json{{"Pods", json::array({{{"namespace", "ns"},
                                                       {"name", "a"},
                                                       {"uid", "ua"},
                                                       {"node", "n1"},
                                                       {"cpu", "500m"},
                                                       {"memory", "1Gi"},
                                                       {"gpu_milli", 250},
                                                       {"gpu_count", 1},
                                                       {"gpu_indices", "3"}},
                                                      {{"name", "b"},
                                                       {"node", "n2"},
                                                       {"cpu", 2},
                                                       {"gpu_count", 2},
                                                       {"gpu_indices", json::array({0, 1})},
                                                       {"gpu_models", "T4|A10"}}})}});
  ASSERT_TRUE(pods.ok()) << pods.error();
  ASSERT_EQ(pods.value().size(), 2u);
  const ResyncPod& a = pods.value()[0];
  EXPECT_EQ(a.request.ref.key(), "ns/a");
  EXPECT_EQ(a.request.cpu_milli, 500);
  EXPECT_EQ(a.request.memory_mib, 1024);
  EXPECT_EQ(a.request.gpu_milli, 250);
  EXPECT_EQ(a.gpus, std::optional<GpuMask>(0b1000));
  const ResyncPod& bp = pods.value()[1];
  EXPECT_EQ(bp.request.ref.key(), "default/b");
  EXPECT_EQ(bp.request.cpu_milli, 2000);
  EXPECT_EQ(bp.request.num_gpu, 2);
  EXPECT_EQ(bp.request.gpu_milli, 1000);
  EXPECT_EQ(bp.gpus, std::optional<GpuMask>(0b11));
  EXPECT_EQ(bp.request.gpu_models, (std::vector<std::string>{"T4", "A10"}));
  EXPECT_TRUE(parse_resync(json::array()).ok());
  EXPECT_EQ(parse_resync(json{{"Pods", json::array({{{"name", "x"}}})}}).error(),
            "Pods[0].node: missing or empty");
  EXPECT_EQ(
      parse_resync(
          json{{"Pods", json::array({{{"name", "x"}, {"node", "n"}, {"gpu_indices", "0-0"}}})}})
          .error(),
      "Pods[0].gpu_indices: gpu index '0-0': GPU 0 named twice");
}

// `kubectl get pods -A -o json | curl --data-binary @- .../resync`: the bound, live GPU pods of
// a v1.PodList, with the GPUs of their gpu-index annotation.
TEST(ServeProtocol, ResyncAcceptsAKubectlPodList) {
  using nlohmann::json;
  const json share = {{"limits", {{"alibabacloud.com/gpu-milli", "300"}}}};
  json bound = testing::pod_json("bound", "u1", share, {{"alibabacloud.com/gpu-index", "2"}});
  bound["spec"]["nodeName"] = "n1";
  bound["status"] = {{"phase", "Running"}};
  json picked = testing::pod_json("no-index", "u2", {{"limits", {{"nvidia.com/gpu", "2"}}}});
  picked["spec"]["nodeName"] = "n2";
  json pending = testing::pod_json("pending", "u3", share);  // no nodeName
  json done = testing::pod_json("done", "u4", share);
  done["spec"]["nodeName"] = "n1";
  done["status"] = {{"phase", "Succeeded"}};
  json cpu_only = testing::pod_json("cpu", "u5", json::object());
  cpu_only["spec"]["nodeName"] = "n1";
  const json list = {{"apiVersion", "v1"},
                     {"kind", "List"},
                     {"items", json::array({bound, picked, pending, done, cpu_only})}};
  auto pods = parse_resync(list);
  ASSERT_TRUE(pods.ok()) << pods.error();
  ASSERT_EQ(pods.value().size(), 2u);
  EXPECT_EQ(pods.value()[0].request.ref.key(), "ml-team/bound");
  EXPECT_EQ(pods.value()[0].request.ref.uid, "u1");
  EXPECT_EQ(pods.value()[0].node, "n1");
  EXPECT_EQ(pods.value()[0].request.gpu_milli, 300);
  EXPECT_EQ(pods.value()[0].gpus, std::optional<GpuMask>(0b100));
  EXPECT_EQ(pods.value()[1].request.ref.key(), "ml-team/no-index");
  EXPECT_EQ(pods.value()[1].request.num_gpu, 2);
  EXPECT_EQ(pods.value()[1].gpus, std::nullopt);  // the policy picks them on the node

  json bad = bound;
  bad["metadata"]["annotations"]["alibabacloud.com/gpu-index"] = "0-0";
  EXPECT_EQ(parse_resync(json{{"items", json::array({bad})}}).error(),
            "items[0].metadata.annotations[alibabacloud.com/gpu-index]: gpu index '0-0': GPU 0 "
            "named twice");
  EXPECT_EQ(parse_resync(json{{"items", 7}}).error(), "resync: PodList items must be an array");
}

TEST(ServeConfig, ParsesKeysAndRejectsUnknownOnes) {
  auto c = parse_serve_config(
      R"({"policy": "pwr:200+fgd:800", "target_pods": "pods.csv", "unknown_nodes": "reject",
          "threads": 4, "max_body_bytes": 2048, "read_timeout_seconds": 1.5, "seed": 7,
          "compact_every": 10, "pue": 1.2, "assume_ttl_ms": 250})",
      "c.json", "/etc/gs");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c.value().policy, "pwr:200+fgd:800");
  EXPECT_EQ(c.value().target_pods, "/etc/gs/pods.csv");
  EXPECT_EQ(c.value().extender.unknown_nodes, UnknownNodes::kReject);
  EXPECT_EQ(c.value().server.threads, 4);
  EXPECT_EQ(c.value().server.max_body_bytes, 2048u);
  EXPECT_DOUBLE_EQ(c.value().server.read_timeout_seconds, 1.5);
  EXPECT_EQ(c.value().seed, 7u);
  EXPECT_EQ(c.value().extender.compact_every, 10u);
  EXPECT_DOUBLE_EQ(c.value().pue, 1.2);
  EXPECT_EQ(c.value().extender.assume_ttl_ms, 250);
  EXPECT_EQ(parse_serve_config("{}", "c.json", "").value().extender.assume_ttl_ms, 5000);
  // The key of the filter's old wait names what replaced it.
  EXPECT_NE(
      parse_serve_config(R"({"bind_wait_ms": 0})", "c.json", "").error().find("assume_ttl_ms"),
      std::string::npos);
  EXPECT_EQ(parse_serve_config(R"({"polcy": "fgd"})", "c.json", "").error(),
            "c.json: unknown key 'polcy'");
  EXPECT_EQ(parse_serve_config(R"({"threads": "8"})", "c.json", "").error(),
            "c.json: threads: must be a non-negative integer");
  EXPECT_FALSE(parse_serve_config("[]", "c.json", "").ok());
}

}  // namespace
}  // namespace greensched::serve

namespace greensched::serve {
namespace {

TEST(ServeArgsReader, FastPathAgreesWithTheGeneralParser) {
  const std::string pod =
      testing::pod_json("p", "u", json{{"limits", {{"alibabacloud.com/gpu-milli", "250"}}}}).dump();
  const std::vector<std::string> bodies = {
      "{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":[\"a\",\"b-1.x\"]}",
      " { \"NodeNames\" : [ ] , \"Pod\" : " + pod + " } ",
      "{\"pod\":" + pod + ",\"nodenames\":[\"a\"]}",
      "{\"Pod\":" + pod + ",\"NodeNames\":[\"caf\\u00e9\"]}",    // escape: general path
      "{\"Pod\":" + pod + ",\"NodeNames\":[\"a\"],\"Pod\":{}}",  // repeated key
      "{\"Pod\":" + pod + ",\"NodeNames\":[\"a\",]}",            // malformed
      "{\"Pod\":" + pod + ",\"NodeNames\":[\"\"]}",              // empty name
      "{\"Pod\":null,\"NodeNames\":[\"a\"]}",                    // missing pod
      "{\"Pod\":{\"metadata\":{}},\"NodeNames\":[\"a\"]}",       // pod error
      "{\"Pod\":" + pod + ",\"NodeNames\":[\"a\"]} x",           // trailing text
      "{\"Pod\":" + pod + ",\"Nodes\":{\"items\":[]},\"NodeNames\":null}",
  };
  for (const std::string& body : bodies) {
    auto fast = read_extender_args(body);
    auto slow = read_extender_args_slow(body);
    ASSERT_EQ(fast.ok(), slow.ok()) << body;
    if (!fast.ok()) {
      EXPECT_EQ(fast.error(), slow.error()) << body;
      continue;
    }
    EXPECT_EQ(fast.value().node_names, slow.value().node_names) << body;
    EXPECT_EQ(fast.value().pod.gpu_milli, slow.value().pod.gpu_milli) << body;
    EXPECT_EQ(fast.value().pod.ref.key(), slow.value().pod.ref.key()) << body;
  }
  EXPECT_EQ(read_extender_args(bodies[0]).value().node_names,
            (std::vector<std::string>{"a", "b-1.x"}));
  EXPECT_EQ(read_extender_args(bodies[3]).value().node_names,
            (std::vector<std::string>{"caf\xc3\xa9"}));
  EXPECT_EQ(read_extender_args(bodies[7]).error(), "ExtenderArgs.Pod: missing");
  EXPECT_EQ(read_extender_args(bodies[8]).error(), "Pod.metadata.name: missing or empty");
  // A NUL byte inside the Pod (found by the fuzzer): the fast path read the Pod span up to it
  // as the number 0, the general path the body as cut short; both now name the byte.
  const std::string nul("{\"Pod\":0.0\0\0i00,\"NodeNames\":[\"a\",\"b\"]}", 38);
  EXPECT_EQ(read_extender_args(nul).error(), "malformed JSON: a NUL byte at line 1, column 11");
  EXPECT_EQ(read_extender_args_slow(nul).error(), read_extender_args(nul).error());
}

}  // namespace
}  // namespace greensched::serve
