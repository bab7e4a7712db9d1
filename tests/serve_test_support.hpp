// Shared fixtures of the serve tests: unique temporary directories, a small cluster with a
// hand-computable FGD target, realistic v1.Pod / v1.Node JSON as kube-scheduler sends them,
// and an in-process extender server on a random loopback port.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "greensched/serve/http_server.hpp"
#include "greensched/serve/service.hpp"

namespace greensched::serve::testing {

// A fresh directory under the system temp dir, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "greensched-serve-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// FGD target of two equally popular shapes: one whole GPU, and half a GPU.
inline frag::TargetWorkload two_shape_target() {
  frag::TargetWorkload t;
  t.shapes.push_back(frag::TargetShape{0, 1, 1000, 0, 1});
  t.shapes.push_back(frag::TargetShape{0, 1, 500, 0, 1});
  t.covered_pods = 2;
  t.trace_pods = 2;
  t.distinct_shapes = 2;
  return t;
}

inline NodeSpec node(const GpuModelRegistry& models, std::string name, int gpus, const char* model,
                     int64_t cpu_milli = 32000, int64_t memory_mib = 131072) {
  NodeSpec s;
  s.name = std::move(name);
  s.cpu_milli = cpu_milli;
  s.memory_mib = memory_mib;
  s.gpu_count = gpus;
  s.model = gpus > 0 ? *models.find(model) : kNoGpuModel;
  return s;
}

// The contract tests' cluster:
//   gpu-node-a  2 x V100M16, GPU 1 has 300 milli in use (free 1000, 700)
//   gpu-node-b  2 x V100M16, free
//   gpu-node-c  1 x T4, 800 in use (free 200)
//   cpu-node-d  no GPU
//   gpu-node-e  2 x V100M16 but only 4 CPUs
//   gpu-node-g  1 x V100M16, 400 in use (free 600)
inline std::vector<NodeSpec> contract_nodes(const GpuModelRegistry& models) {
  return {node(models, "gpu-node-a", 2, "V100M16"),
          node(models, "gpu-node-b", 2, "V100M16"),
          node(models, "gpu-node-c", 1, "T4"),
          node(models, "cpu-node-d", 0, ""),
          node(models, "gpu-node-e", 2, "V100M16", 4000),
          node(models, "gpu-node-g", 1, "V100M16")};
}

inline PodRequest existing_pod(std::string name, int32_t gpu_milli) {
  PodRequest r;
  const std::string uid = "uid-" + name;
  r.ref = PodRef{"kube-system", std::move(name), uid};
  r.cpu_milli = 1000;
  r.memory_mib = 1024;
  r.num_gpu = 1;
  r.gpu_milli = gpu_milli;
  return r;
}

// An extender on 127.0.0.1:<random port> over the contract cluster (or the given nodes),
// with its journal in a temp dir.
class TestServer {
 public:
  explicit TestServer(std::string policy = "fgd", ServerOptions server_options = {},
                      ExtenderOptions extender_options = {}, bool contract_pods = true)
      : server_(std::move(server_options)) {
    GpuModelRegistry models;
    std::vector<NodeSpec> nodes = contract_nodes(models);
    StateOptions options;
    options.policy = std::move(policy);
    options.target = two_shape_target();
    auto state = ClusterState::create(models, nodes, options);
    if (!state.ok()) throw std::runtime_error(state.error());
    if (contract_pods) {
      auto a = existing_pod("existing-a", 300);
      auto c = existing_pod("existing-c", 800);
      auto g = existing_pod("existing-g", 400);
      for (const auto& [pod, node, gpus] : {std::make_tuple(a, "gpu-node-a", GpuMask{2}),
                                            std::make_tuple(c, "gpu-node-c", GpuMask{1}),
                                            std::make_tuple(g, "gpu-node-g", GpuMask{1})}) {
        Status s = state.value()->bind(pod, node, gpus);
        if (!s.ok()) throw std::runtime_error(s.message());
      }
    }
    auto journal = Journal::open(dir_.path() + "/state");
    if (!journal.ok()) throw std::runtime_error(journal.error());
    extender_ = std::make_unique<Extender>(std::move(state.value()), std::move(journal.value()),
                                           extender_options);
    server_.attach(extender_.get());
    auto port = server_.start("127.0.0.1", 0);
    if (!port.ok()) throw std::runtime_error(port.error());
    port_ = port.value();
  }
  ~TestServer() {
    server_.stop();
    server_.attach(nullptr);
  }

  int port() const { return port_; }
  Extender& extender() { return *extender_; }
  ExtenderServer& server() { return server_; }
  const std::string& dir() const { return dir_.path(); }
  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(10, 0);
    c->set_tcp_nodelay(true);
    return c;
  }

 private:
  TempDir dir_;
  ExtenderServer server_;
  std::unique_ptr<Extender> extender_;
  int port_ = 0;
};

// A v1.Pod as kube-scheduler sends it: metadata, containers with resources, the usual
// defaulted fields and a Pending status. `resources` is the GPU container's resources object.
inline nlohmann::json pod_json(const std::string& name, const std::string& uid,
                               const nlohmann::json& resources,
                               const nlohmann::json& annotations = nlohmann::json::object()) {
  using nlohmann::json;
  return json{
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", name},
        {"namespace", "ml-team"},
        {"uid", uid},
        {"resourceVersion", "4711"},
        {"creationTimestamp", "2025-03-01T10:00:00Z"},
        {"labels", {{"app", "trainer"}, {"pod-template-hash", "5d8c7b9f6d"}}},
        {"annotations", annotations},
        {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                          {"kind", "ReplicaSet"},
                                          {"name", "trainer-5d8c7b9f6d"},
                                          {"uid", "8a1f3c52-0000-4000-8000-000000000001"},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}})}}},
      {"spec",
       {{"volumes",
         json::array({{{"name", "kube-api-access-x7k2p"}, {"projected", {{"defaultMode", 420}}}}})},
        {"containers",
         json::array({{{"name", "trainer"},
                       {"image", "registry.example.com/ml/trainer:1.4"},
                       {"args", json::array({"--epochs", "10"})},
                       {"resources", resources},
                       {"volumeMounts", json::array({{{"name", "kube-api-access-x7k2p"},
                                                      {"readOnly", true},
                                                      {"mountPath", "/var/run/secrets"}}})},
                       {"terminationMessagePath", "/dev/termination-log"},
                       {"terminationMessagePolicy", "File"},
                       {"imagePullPolicy", "IfNotPresent"}},
                      {{"name", "log-shipper"},
                       {"image", "registry.example.com/infra/fluent-bit:2.2"},
                       {"resources",
                        {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}},
                         {"limits", {{"cpu", "200m"}, {"memory", "128Mi"}}}}}}})},
        {"restartPolicy", "Always"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"serviceAccountName", "default"},
        {"serviceAccount", "default"},
        {"securityContext", json::object()},
        {"schedulerName", "default-scheduler"},
        {"tolerations", json::array({{{"key", "node.kubernetes.io/not-ready"},
                                      {"operator", "Exists"},
                                      {"effect", "NoExecute"},
                                      {"tolerationSeconds", 300}}})},
        {"priority", 0},
        {"enableServiceLinks", true},
        {"preemptionPolicy", "PreemptLowerPriority"}}},
      {"status",
       {{"phase", "Pending"},
        {"conditions", json::array({{{"type", "PodScheduled"},
                                     {"status", "False"},
                                     {"lastProbeTime", nullptr},
                                     {"lastTransitionTime", "2025-03-01T10:00:00Z"},
                                     {"reason", "Unschedulable"}}})},
        {"qosClass", "Burstable"}}}};
}

// A v1.Node as the API server returns it (allocatable in Kubernetes units, conditions,
// addresses, node info).
inline nlohmann::json node_json(const std::string& name, const std::string& model, int gpus,
                                const std::string& cpu = "32",
                                const std::string& memory = "134217728Ki") {
  using nlohmann::json;
  json labels{{"kubernetes.io/hostname", name},
              {"kubernetes.io/os", "linux"},
              {"kubernetes.io/arch", "amd64"},
              {"node.kubernetes.io/instance-type", "ecs.gn6v-c8g1.16xlarge"}};
  json allocatable{{"cpu", cpu},
                   {"memory", memory},
                   {"ephemeral-storage", "189815812Ki"},
                   {"hugepages-1Gi", "0"},
                   {"pods", "110"}};
  if (gpus > 0) {
    labels["alibabacloud.com/gpu-card-model"] = model;
    allocatable["alibabacloud.com/gpu-count"] = std::to_string(gpus);
    allocatable["alibabacloud.com/gpu-milli"] = std::to_string(gpus * 1000);
  }
  return json{
      {"kind", "Node"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", name},
        {"uid", "node-uid-" + name},
        {"resourceVersion", "99812"},
        {"creationTimestamp", "2025-01-15T08:00:00Z"},
        {"labels", labels},
        {"annotations", {{"node.alpha.kubernetes.io/ttl", "0"}}}}},
      {"spec", {{"podCIDR", "10.244.3.0/24"}, {"providerID", "alicloud://cn-hangzhou." + name}}},
      {"status",
       {{"capacity", allocatable},
        {"allocatable", allocatable},
        {"conditions", json::array({{{"type", "Ready"},
                                     {"status", "True"},
                                     {"lastHeartbeatTime", "2025-03-01T09:59:40Z"},
                                     {"lastTransitionTime", "2025-01-15T08:01:00Z"},
                                     {"reason", "KubeletReady"},
                                     {"message", "kubelet is posting ready status"}}})},
        {"addresses", json::array({{{"type", "InternalIP"}, {"address", "192.168.3.17"}},
                                   {{"type", "Hostname"}, {"address", name}}})},
        {"nodeInfo",
         {{"kubeletVersion", "v1.28.3"},
          {"containerRuntimeVersion", "containerd://1.6.28"},
          {"kernelVersion", "5.10.134-16.al8.x86_64"},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}}}}};
}

// POSTs JSON and parses the reply (a null json when the reply is not JSON).
inline std::pair<int, nlohmann::json> post_json(httplib::Client& client, const std::string& path,
                                                const std::string& body) {
  auto res = client.Post(path.c_str(), body, "application/json");
  if (!res) return {-1, nlohmann::json()};
  return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
}

}  // namespace greensched::serve::testing
