// Crash safety: the real `greensched serve` binary runs as a child process while a client
// streams binds and releases through filter, prioritize and bind; a second thread SIGKILLs it
// at a random moment (seeded), at least 20 times. After each restart the bound pods read back
// with GET /pods must be exactly the acknowledged ones: every acknowledged bind present with
// the same node and GPUs, every acknowledged release absent, nothing else. The one request in
// flight at the kill (its reply never arrived) may have landed or not; whichever it did is
// then taken as the truth. Finally a SIGTERM stops the server cleanly and a restart still
// shows the same state.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "greensched/core/rng.hpp"
#include "serve_test_support.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

constexpr int kKills = 24;
constexpr int kNodes = 40;

struct Placement {
  std::string node;
  std::string gpu_indices;
  bool operator==(const Placement&) const = default;
};

class Child {
 public:
  Child(std::string dir, std::string nodes) : dir_(std::move(dir)), nodes_(std::move(nodes)) {}

  // Starts the server and waits for /healthz; returns the port.
  int start() {
    const std::string port_file = dir_ + "/port";
    std::filesystem::remove(port_file);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int log = ::open((dir_ + "/serve.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(log, 1);
      ::dup2(log, 2);
      const std::string state = dir_ + "/state";
      ::execl(GREENSCHED_BINARY, "greensched", "serve", "--listen", "127.0.0.1:0", "--port-file",
              port_file.c_str(), "--nodes", nodes_.c_str(), "--state", state.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      int port = 0;
      if (std::ifstream in(port_file); in >> port && port > 0) {
        httplib::Client c("127.0.0.1", port);
        if (auto res = c.Get("/healthz"); res && res->status == 200) return port;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        ADD_FAILURE() << "greensched serve exited early; see " << dir_ << "/serve.log";
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "greensched serve did not become ready";
    return -1;
  }

  void kill_now(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }

  // Waits for the child; returns its exit status (or -signal).
  int reap() {
    if (pid_ <= 0) return -999;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return WEXITSTATUS(status);
  }

  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      reap();
    }
  }

 private:
  std::string dir_;
  std::string nodes_;
  pid_t pid_ = -1;
};

std::map<std::string, Placement> read_pods(int port) {
  httplib::Client c("127.0.0.1", port);
  auto res = c.Get("/pods");
  std::map<std::string, Placement> out;
  if (!res || res->status != 200) {
    ADD_FAILURE() << "GET /pods failed";
    return out;
  }
  for (const json& p : json::parse(res->body)) {
    out[p["namespace"].get<std::string>() + "/" + p["name"].get<std::string>()] =
        Placement{p["node"], p["gpu_indices"]};
  }
  return out;
}

TEST(ServeCrash, RecoversExactlyTheAcknowledgedBindsAfterSigkill) {
  testing::TempDir dir;
  const std::string nodes = dir.path() + "/nodes.csv";
  {
    std::ofstream out(nodes);
    out << "sn,cpu_milli,memory_mib,gpu,model\n";
    for (int n = 0; n < kNodes; ++n) {
      out << fmt::format("node-{:02},96000,393216,{},{}\n", n, n % 2 ? 8 : 4,
                         n % 2 ? "V100M32" : "T4");
    }
  }
  json names = json::array();
  for (int n = 0; n < kNodes; ++n) names.push_back(fmt::format("node-{:02}", n));
  const std::string names_json = names.dump();

  Rng rng(20250301);
  Child child(dir.path(), nodes);
  std::map<std::string, Placement> acked;
  int next_pod = 0;
  int binds = 0;
  int releases = 0;
  int uncertain_landed = 0;
  int uncertain_lost = 0;
  std::optional<std::pair<std::string, bool>> in_flight;  // pod, is_bind
  for (int round = 0; round <= kKills; ++round) {
    const int port = child.start();
    ASSERT_GT(port, 0);

    // What the restarted server holds is exactly what was acknowledged, give or take the one
    // request in flight at the kill.
    std::map<std::string, Placement> actual = read_pods(port);
    if (in_flight) {
      const auto& [pod, is_bind] = *in_flight;
      const bool present = actual.contains(pod);
      if (is_bind && present) acked[pod] = actual[pod];
      if (!is_bind && !present) acked.erase(pod);
      (present == is_bind ? uncertain_landed : uncertain_lost)++;
      in_flight.reset();
    }
    ASSERT_EQ(actual, acked) << "round " << round << " after a SIGKILL";
    if (round == kKills) {
      child.kill_now(SIGTERM);
      EXPECT_EQ(child.reap(), 0);
      const int again = child.start();
      ASSERT_GT(again, 0);
      EXPECT_EQ(read_pods(again), acked) << "after a clean stop";
      break;
    }

    const int delay_ms = 5 + static_cast<int>(rng.uniform(150));
    std::thread killer([&child, delay_ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      child.kill_now(SIGKILL);
    });
    httplib::Client client("127.0.0.1", port);
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);
    client.set_read_timeout(5, 0);
    while (true) {
      if (!acked.empty() && rng.uniform(5) == 0) {
        auto it = acked.begin();
        std::advance(it, static_cast<long>(rng.uniform(acked.size())));
        const std::string key = it->first;
        const std::string name = key.substr(key.find('/') + 1);
        in_flight = std::make_pair(key, false);
        auto res =
            client.Post("/release", json{{"PodName", name}, {"PodNamespace", "crash"}}.dump(),
                        "application/json");
        if (!res) break;
        ASSERT_EQ(res->status, 200) << res->body;
        acked.erase(key);
        in_flight.reset();
        ++releases;
        continue;
      }
      const std::string name = fmt::format("pod-{:05}", next_pod++);
      const int32_t milli = std::array<int32_t, 4>{100, 250, 500, 1000}[rng.uniform(4)];
      const json pod = {
          {"metadata", {{"name", name}, {"namespace", "crash"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"containers",
             json::array(
                 {{{"name", "main"},
                   {"resources",
                    {{"requests", {{"cpu", "1"}, {"memory", "2Gi"}}},
                     {"limits", {{"alibabacloud.com/gpu-milli", std::to_string(milli)}}}}}}})}}}};
      const std::string args =
          "{\"Pod\":" + pod.dump() + ",\"Nodes\":null,\"NodeNames\":" + names_json + "}";
      auto filter = client.Post("/filter", args, "application/json");
      if (!filter) break;
      const json passed = json::parse(filter->body)["NodeNames"];
      if (passed.empty()) continue;
      auto prioritize = client.Post(
          "/prioritize",
          "{\"Pod\":" + pod.dump() + ",\"Nodes\":null,\"NodeNames\":" + passed.dump() + "}",
          "application/json");
      if (!prioritize) break;
      std::string best;
      int64_t best_score = -1;
      for (const json& hp : json::parse(prioritize->body)) {
        if (hp["Score"].get<int64_t>() > best_score) {
          best_score = hp["Score"];
          best = hp["Host"];
        }
      }
      in_flight = std::make_pair("crash/" + name, true);
      auto bound = client.Post("/bind",
                               json{{"PodName", name},
                                    {"PodNamespace", "crash"},
                                    {"PodUID", "uid-" + name},
                                    {"Node", best}}
                                   .dump(),
                               "application/json");
      if (!bound) break;
      const json reply = json::parse(bound->body);
      ASSERT_EQ(reply["Error"], "") << reply.dump();
      acked["crash/" + name] =
          Placement{best, reply["Annotations"].value("alibabacloud.com/gpu-index", std::string())};
      in_flight.reset();
      ++binds;
    }
    killer.join();
    EXPECT_EQ(child.reap(), -SIGKILL);
  }
  std::printf(
      "serve crash: %d SIGKILLs, %d binds and %d releases acknowledged, %zu pods bound "
      "at the end; in-flight requests at a kill: %d landed, %d lost\n",
      kKills, binds, releases, acked.size(), uncertain_landed, uncertain_lost);
  EXPECT_GT(binds, 20);
}

}  // namespace
}  // namespace greensched::serve
