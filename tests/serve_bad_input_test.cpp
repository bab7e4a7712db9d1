// Bad input: malformed JSON, missing fields, wrong types, unknown nodes, negative or
// oversized requests, a 10 MB body, and slow clients that send headers (or part of them) and
// stall. Each gets a clear 4xx or an Error field, and the service keeps serving (/healthz
// answers 200 afterwards).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serve_test_support.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;
using testing::post_json;

json gpu_pod(json limits) {
  return testing::pod_json("bad", "uid-bad", json{{"limits", std::move(limits)}});
}

json names_args(const json& pod) {
  return json{{"Pod", pod}, {"NodeNames", json::array({"gpu-node-a", "gpu-node-b"})}};
}

void expect_healthy(httplib::Client& client) {
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res) << "the server stopped answering";
  EXPECT_EQ(res->status, 200);
}

TEST(ServeBadInput, MalformedJsonGets400WithAnError) {
  testing::TestServer server;
  auto client = server.client();
  for (const char* verb : {"/filter", "/prioritize", "/bind", "/release", "/resync"}) {
    for (const std::string body : {"", "{", "{\"Pod\": ", "nul", "\xff\xfe{}", "[1,2,]"}) {
      auto [code, reply] = post_json(*client, verb, body);
      EXPECT_EQ(code, 400) << verb << " " << body;
      ASSERT_TRUE(reply.is_object()) << verb;
      const std::string error = reply.value("Error", "");
      EXPECT_TRUE(error.starts_with("malformed JSON") || error.starts_with("empty request"))
          << error;
    }
  }
  // The filter's error reply still has every ExtenderFilterResult field.
  auto [code, reply] = post_json(*client, "/filter", "{");
  EXPECT_EQ(reply.size(), 5u);
  EXPECT_TRUE(reply["NodeNames"].is_null());
  EXPECT_EQ(reply["FailedNodes"], json::object());
  expect_healthy(*client);
}

TEST(ServeBadInput, MissingFieldsAndWrongTypesNameTheField) {
  testing::TestServer server;
  auto client = server.client();
  const json pod = gpu_pod({{"alibabacloud.com/gpu-milli", "100"}});
  const std::vector<std::tuple<std::string, json, std::string>> cases = {
      {"/filter", json{{"NodeNames", json::array({"gpu-node-a"})}}, "ExtenderArgs.Pod: missing"},
      {"/filter", json{{"Pod", pod}}, "ExtenderArgs: neither Nodes nor NodeNames given"},
      {"/filter", json{{"Pod", pod}, {"NodeNames", "gpu-node-a"}},
       "ExtenderArgs.NodeNames: must be an array of strings"},
      {"/filter", json{{"Pod", {{"metadata", {{"name", "x"}}}}}, {"NodeNames", json::array()}},
       "Pod.spec: missing"},
      {"/prioritize", json{{"Pod", pod}, {"Nodes", {{"items", json::array({{{"kind", "Node"}}})}}}},
       "ExtenderArgs.Nodes.items[0]: Node.metadata: missing"},
      {"/prioritize", json::array(), "ExtenderArgs: must be a JSON object, not array"},
      {"/bind", json{{"PodName", "x"}, {"PodNamespace", "ml-team"}},
       "ExtenderBindingArgs.Node: missing or empty"},
      {"/bind", json{{"PodName", 5}, {"Node", "gpu-node-a"}},
       "ExtenderBindingArgs.PodName: must be a string, not number"},
      {"/release", json{{"PodNamespace", "ml-team"}}, "PodName: missing or empty"},
      {"/resync", json{{"pods", json::array({{{"name", "x"}}})}}, "Pods[0].node: missing or empty"},
      {"/resync", json{{"Pods", 3}}, "resync: Pods must be an array"},
  };
  for (const auto& [verb, body, error] : cases) {
    auto [code, reply] = post_json(*client, verb, body.dump());
    EXPECT_EQ(code, 400) << verb << " " << body.dump();
    EXPECT_EQ(reply.value("Error", ""), error) << verb;
  }
  expect_healthy(*client);
}

TEST(ServeBadInput, NegativeAndOversizedRequests) {
  testing::TestServer server;
  auto client = server.client();
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"cpu", "-2"}}, "negative request"},
      {{{"memory", "-1Gi"}}, "negative request"},
      {{{"alibabacloud.com/gpu-milli", "-500"}}, "negative request"},
      {{{"alibabacloud.com/gpu-milli", "1001"}}, "over 1000"},
      {{{"alibabacloud.com/gpu-count", "17"}}, "oversized"},
      {{{"nvidia.com/gpu", "1000000"}}, "oversized"},
      {{{"cpu", "99999999999999999999999999"}}, "out of range"},
      {{{"memory", "1e400"}}, "out of range"},
      {{{"cpu", "two"}}, "no digits"},
      {{{"cpu", "1x"}}, "unknown suffix"},
  };
  for (const auto& [limits, error] : cases) {
    auto [code, reply] = post_json(*client, "/filter", names_args(gpu_pod(limits)).dump());
    EXPECT_EQ(code, 400) << limits.dump();
    EXPECT_NE(reply.value("Error", "").find(error), std::string::npos)
        << limits.dump() << " -> " << reply.dump();
  }
  // Large but well-formed: simply fits nowhere, and says why.
  auto [code, reply] =
      post_json(*client, "/filter",
                names_args(gpu_pod({{"memory", "10Pi"}, {"nvidia.com/gpu", "8"}})).dump());
  EXPECT_EQ(code, 200);
  EXPECT_EQ(reply["NodeNames"], json::array());
  EXPECT_EQ(reply["FailedAndUnresolvableNodes"]["gpu-node-a"], "Insufficient memory");
  expect_healthy(*client);
}

TEST(ServeBadInput, UnknownNodesAndUnseenPods) {
  testing::TestServer server;
  auto client = server.client();
  auto [code, reply] = post_json(*client, "/bind",
                                 json{{"PodName", "never-filtered"},
                                      {"PodNamespace", "ml-team"},
                                      {"PodUID", "u"},
                                      {"Node", "gpu-node-a"}}
                                     .dump());
  EXPECT_EQ(code, 200);
  EXPECT_EQ(reply["Error"],
            "pod ml-team/never-filtered was not seen by filter or prioritize (or was forgotten "
            "since); kube-scheduler retries it from filter");
  const json pod = gpu_pod({{"alibabacloud.com/gpu-milli", "100"}});
  post_json(*client, "/filter", names_args(pod).dump());
  auto [c2, r2] = post_json(
      *client, "/bind",
      json{{"PodName", "bad"}, {"PodNamespace", "ml-team"}, {"Node", "no-such-node"}}.dump());
  EXPECT_EQ(c2, 200);
  EXPECT_EQ(r2["Error"], "cannot bind pod ml-team/bad: unknown node no-such-node");
  auto [c3, r3] = post_json(*client, "/prioritize",
                            json{{"Pod", pod}, {"NodeNames", json::array({"nowhere"})}}.dump());
  EXPECT_EQ(c3, 200);
  EXPECT_EQ(r3, json::array({{{"Host", "nowhere"}, {"Score", 0}}}));
  auto get = client->Get("/pods/ml-team/nothing");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 404);
  expect_healthy(*client);
}

TEST(ServeBadInput, TenMegabyteBodies) {
  // Default limit (32 MiB): 10 MB of junk is read and refused as malformed JSON.
  {
    testing::TestServer server;
    auto client = server.client();
    auto [code, reply] = post_json(*client, "/filter", std::string(10'000'000, 'x'));
    EXPECT_EQ(code, 400);
    EXPECT_TRUE(reply.value("Error", "").starts_with("malformed JSON")) << reply.dump();
    // 10 MB of well-formed JSON nesting is refused too, without exhausting the stack.
    auto [ncode, nested] = post_json(*client, "/filter", std::string(10'000'000, '['));
    EXPECT_EQ(ncode, 400);
    EXPECT_EQ(nested.value("Error", ""), "malformed JSON: nested deeper than 128 levels");
    expect_healthy(*client);
  }
  // A 1 MiB limit: 413 before the body is read, with a JSON error.
  ServerOptions small;
  small.max_body_bytes = 1 << 20;
  testing::TestServer server("fgd", small);
  auto client = server.client();
  const json big = {{"Pod", gpu_pod({{"cpu", "1"}})},
                    {"NodeNames", json::array({std::string(10'000'000, 'n')})}};
  auto [code, reply] = post_json(*client, "/filter", big.dump());
  EXPECT_EQ(code, 413);
  EXPECT_EQ(reply.value("Error", ""), "request body over 1048576 bytes");
  expect_healthy(*client);
}

// A raw TCP connection to the server.
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// Reads until the server closes the connection; returns what it sent and how long it took.
std::pair<std::string, double> read_until_closed(int fd) {
  const auto start = std::chrono::steady_clock::now();
  std::string got;
  char buf[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return {got, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

TEST(ServeBadInput, SlowClientsAreDroppedAndOthersServed) {
  ServerOptions options;
  options.read_timeout_seconds = 1;
  options.keep_alive_seconds = 1;
  testing::TestServer server("fgd", options);
  // One client sends complete headers and part of the body, another half a header line;
  // both stall.
  const int body_staller = connect_to(server.port());
  const int header_staller = connect_to(server.port());
  ASSERT_GE(body_staller, 0);
  ASSERT_GE(header_staller, 0);
  const std::string headers =
      "POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 5000\r\n\r\n{\"Pod\": {\"metadata\": ";
  ASSERT_EQ(::send(body_staller, headers.data(), headers.size(), 0),
            static_cast<ssize_t>(headers.size()));
  const std::string partial = "POST /filter HTTP/1.1\r\nHo";
  ASSERT_EQ(::send(header_staller, partial.data(), partial.size(), 0),
            static_cast<ssize_t>(partial.size()));

  // Meanwhile others are served at once.
  auto client = server.client();
  const auto start = std::chrono::steady_clock::now();
  expect_healthy(*client);
  auto [code, reply] = post_json(
      *client, "/filter", names_args(gpu_pod({{"alibabacloud.com/gpu-milli", "100"}})).dump());
  EXPECT_EQ(code, 200);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.9);

  // The stallers are dropped after the read timeout (1 s), not held forever.
  for (int fd : {body_staller, header_staller}) {
    auto [sent, seconds] = read_until_closed(fd);
    EXPECT_LT(seconds, 5.0);
    std::printf("stalled connection dropped after %.1f s: %s\n", seconds,
                sent.substr(0, sent.find('\r')).c_str());
    if (!sent.empty()) {
      EXPECT_TRUE(sent.starts_with("HTTP/1.1 4")) << sent;
    }
    ::close(fd);
  }
  expect_healthy(*client);
}

}  // namespace
}  // namespace greensched::serve
