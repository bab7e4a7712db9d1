// The pod watcher (serve --kube-watch) against a stand-in API server: the initial list is
// resynced, watch events release finished and deleted GPU pods (never a recreated pod of the
// same name), and a 410 Gone leads to a relist that frees only pods the list no longer has.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/serve/pod_watcher.hpp"
#include "serve_test_support.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

json gpu_pod(const std::string& name, const std::string& uid, const std::string& node,
             const std::string& phase, const std::string& gpu_index) {
  json annotations = json::object();
  if (!gpu_index.empty()) annotations["alibabacloud.com/gpu-index"] = gpu_index;
  json pod = testing::pod_json(name, uid, json{{"limits", {{"alibabacloud.com/gpu-milli", "500"}}}},
                               annotations);
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  pod["status"] = {{"phase", phase}};
  return pod;
}

json event(const std::string& type, json object, const std::string& rv) {
  object["metadata"]["resourceVersion"] = rv;
  return json{{"type", type}, {"object", std::move(object)}};
}

TEST(ServeWatch, EventsThatReleaseAPod) {
  const json running = gpu_pod("a", "u1", "gpu-node-a", "Running", "0");
  EXPECT_FALSE(pod_to_release(event("ADDED", running, "1")).has_value());
  EXPECT_FALSE(pod_to_release(event("MODIFIED", running, "2")).has_value());
  auto done = pod_to_release(event("MODIFIED", gpu_pod("a", "u1", "n", "Succeeded", ""), "3"));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->key(), "ml-team/a");
  EXPECT_EQ(done->uid, "u1");
  EXPECT_TRUE(pod_to_release(event("MODIFIED", gpu_pod("a", "u1", "n", "Failed", ""), "4")));
  EXPECT_TRUE(pod_to_release(event("DELETED", running, "5")));
  EXPECT_FALSE(pod_to_release(json{{"type", "BOOKMARK"}, {"object", {{"kind", "Pod"}}}}));
  EXPECT_FALSE(pod_to_release(json{{"type", "DELETED"}, {"object", 3}}));
  EXPECT_FALSE(pod_to_release(json::array()));

  // Relist: held a (listed, running), b (absent), c (listed finished), d (listed with another
  // UID: recreated).
  const json held = json::array({{{"namespace", "ml-team"}, {"name", "a"}, {"uid", "u1"}},
                                 {{"namespace", "ml-team"}, {"name", "b"}, {"uid", "u2"}},
                                 {{"namespace", "ml-team"}, {"name", "c"}, {"uid", "u3"}},
                                 {{"namespace", "ml-team"}, {"name", "d"}, {"uid", "u4"}}});
  const json list = {{"items", json::array({running, gpu_pod("c", "u3", "n", "Succeeded", ""),
                                            gpu_pod("d", "u9", "", "Pending", "")})}};
  std::vector<std::string> stale;
  for (const PodRef& r : stale_after_relist(held, list)) stale.push_back(r.key() + "@" + r.uid);
  EXPECT_EQ(stale, (std::vector<std::string>{"ml-team/b@u2", "ml-team/c@u3", "ml-team/d@u4"}));
}

// A stand-in API server: GET /api/v1/pods lists `list`; with ?watch it streams the events of
// the current round, then ends the stream (or answers 410 Gone on the round marked so).
struct FakeApi {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::mutex mu;
  json list;
  std::vector<std::vector<json>> rounds;  // events per watch request
  std::vector<std::string> watch_versions;
  std::atomic<int> lists{0};

  FakeApi() {
    server.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu);
      if (req.get_header_value("Authorization") != "Bearer t0ken") {
        res.status = 401;
        return;
      }
      if (!req.has_param("watch")) {
        ++lists;
        res.set_content(list.dump(), "application/json");
        return;
      }
      watch_versions.push_back(req.get_param_value("resourceVersion"));
      if (rounds.empty()) {  // nothing more: hold the stream open a little, then end it
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        res.set_content("", "application/json");
        return;
      }
      std::string body;
      for (const json& e : rounds.front()) body += e.dump() + "\n";
      rounds.erase(rounds.begin());
      res.set_content(body, "application/json");
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeApi() {
    server.stop();
    thread.join();
  }
};

template <typename F>
bool eventually(F condition) {
  for (int i = 0; i < 500; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(ServeWatch, ResyncsThenFollowsThePods) {
  // The contract state holds kube-system/existing-{a,c,g}.
  testing::TestServer server;
  Extender& ext = server.extender();
  const std::string token = server.dir() + "/token";
  { std::ofstream(token) << "t0ken\n"; }

  FakeApi api;
  const json x = gpu_pod("x", "ux", "gpu-node-b", "Running", "1");
  const json y = gpu_pod("y", "uy", "gpu-node-b", "Running", "");
  const json pending = gpu_pod("p", "up", "", "Pending", "");
  json existing_a = gpu_pod("existing-a", "uid-existing-a", "gpu-node-a", "Running", "1");
  existing_a["metadata"]["namespace"] = "kube-system";
  existing_a["spec"]["containers"][0]["resources"] = {
      {"requests", {{"cpu", "1"}, {"memory", "1Gi"}, {"alibabacloud.com/gpu-milli", "300"}}}};
  existing_a["spec"]["containers"].erase(1);  // no sidecar: the request equals the held one
  {
    std::lock_guard lock(api.mu);
    api.list = {{"kind", "PodList"},
                {"metadata", {{"resourceVersion", "100"}}},
                {"items", json::array({existing_a, x, y, pending})}};
  }

  KubeApiOptions options;
  options.server = "http://127.0.0.1:" + std::to_string(api.port);
  options.token_file = token;
  PodWatcher watcher(ext, options, /*retry_seconds=*/1);
  auto synced = watcher.initial_sync();
  ASSERT_TRUE(synced.ok()) << synced.error();
  EXPECT_EQ(synced.value().added, 2);    // x with its GPU, y with the policy's
  EXPECT_EQ(synced.value().removed, 2);  // existing-c and existing-g are not in the cluster
  EXPECT_EQ(synced.value().unchanged, 1);
  EXPECT_TRUE(ext.pod("ml-team", "x").has_value());
  EXPECT_EQ((*ext.pod("ml-team", "x"))["gpu_indices"], "1");
  EXPECT_TRUE(ext.pod("ml-team", "y").has_value());
  EXPECT_FALSE(ext.pod("kube-system", "existing-c").has_value());

  {
    std::lock_guard lock(api.mu);
    // Round 1: x finishes; a DELETED event for y from an older incarnation (another UID) must
    // not free the live y.
    api.rounds.push_back(
        {event("MODIFIED", gpu_pod("x", "ux", "gpu-node-b", "Succeeded", "1"), "101"),
         event("DELETED", gpu_pod("y", "old-uid", "gpu-node-b", "Running", ""), "102")});
    // Round 2: the version is too old; the relist no longer has existing-a.
    api.rounds.push_back({json{
        {"type", "ERROR"}, {"object", {{"kind", "Status"}, {"code", 410}, {"reason", "Gone"}}}}});
    api.list["items"] = json::array({y});
    api.list["metadata"]["resourceVersion"] = "200";
  }
  watcher.start();
  ASSERT_TRUE(eventually([&] { return watcher.stats().relists >= 1; }));
  ASSERT_TRUE(eventually([&] { return !ext.pod("kube-system", "existing-a").has_value(); }));
  EXPECT_FALSE(ext.pod("ml-team", "x").has_value());
  EXPECT_TRUE(ext.pod("ml-team", "y").has_value());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(api.mu);
    return api.watch_versions.size() >= 3;
  }));
  watcher.stop();
  std::lock_guard lock(api.mu);
  EXPECT_EQ(api.watch_versions[0], "100");  // from the initial list
  EXPECT_EQ(api.watch_versions[1], "102");  // resumed after the last event seen
  EXPECT_EQ(api.watch_versions[2], "200");  // after the relist
  EXPECT_EQ(watcher.stats().released, 2u);  // x, then existing-a
  EXPECT_EQ(api.lists.load(), 2);
}

TEST(ServeWatch, InitialSyncErrorsAreClear) {
  testing::TestServer server;
  KubeApiOptions options;
  options.server = "http://127.0.0.1:1";  // nothing listens
  options.token_file = server.dir() + "/token";
  { std::ofstream(options.token_file) << "t\n"; }
  options.timeout_seconds = 2;
  PodWatcher watcher(server.extender(), options);
  auto r = watcher.initial_sync();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("GET http://127.0.0.1:1/api/v1/pods"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace greensched::serve
