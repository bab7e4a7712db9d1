// The extender's filter and prioritize replies as text, byte for byte: the failed nodes kept as
// positions in the request (FilterResult::failed_nodes) are written exactly as the name maps
// would write them (order by name, one entry per name, duplicates included), and the node list
// a filter remembers for the next request (Extender::last_names_) is reused only for the same
// list: a reordered or changed list, or prioritize's list out of the filter's order, is looked
// up again.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "greensched/serve/args_reader.hpp"
#include "serve_test_support.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

json half_gpu_pod() {
  return testing::pod_json(
      "trainer-1", "uid-trainer-1",
      json{{"limits", {{"cpu", "8"}, {"memory", "8Gi"}, {"alibabacloud.com/gpu-milli", "500"}}},
           {"requests", {{"cpu", "6"}, {"memory", "8Gi"}, {"alibabacloud.com/gpu-milli", "500"}}}});
}

ExtenderArgs args_of(const std::vector<std::string>& names) {
  auto args = read_extender_args(
      json{{"Pod", half_gpu_pod()}, {"Nodes", nullptr}, {"NodeNames", names}}.dump());
  if (!args.ok()) throw std::runtime_error(args.error());
  return std::move(args.value());
}

std::string filter_text(Extender& extender, const std::vector<std::string>& names) {
  ExtenderArgs args = args_of(names);
  return filter_result_text(extender.filter(args), args);
}

std::string prioritize_text(Extender& extender, const std::vector<std::string>& names) {
  ExtenderArgs args = args_of(names);
  return priority_list_text(extender.prioritize(args));
}

// The contract cluster (serve_test_support.hpp) for a pod asking 6 CPUs and 500 GPU milli:
// a, b, g pass; c has 200 milli free; d has no GPU; e has 4 CPUs; ghost is unknown.
constexpr const char* kFilterReply =
    R"({"Nodes":null,"NodeNames":["gpu-node-a","gpu-node-b","gpu-node-g"],)"
    R"("FailedNodes":{"cpu-node-d":"Node has no GPU","ghost-node":"Node unknown to greensched",)"
    R"("gpu-node-c":"Insufficient GPU share on any single GPU","gpu-node-e":"Insufficient cpu"},)"
    R"("FailedAndUnresolvableNodes":{"cpu-node-d":"Node has no GPU",)"
    R"("ghost-node":"Node unknown to greensched","gpu-node-e":"Insufficient cpu"},"Error":""})";

TEST(ServeReplyText, FilterReplyIsTheSameWhenTheListIsReused) {
  testing::TestServer server;
  const std::vector<std::string> names = {"gpu-node-a", "gpu-node-b", "gpu-node-c", "cpu-node-d",
                                          "gpu-node-e", "gpu-node-g", "ghost-node"};
  EXPECT_EQ(filter_text(server.extender(), names), kFilterReply);
  EXPECT_EQ(filter_text(server.extender(), names), kFilterReply);  // the remembered list
  EXPECT_EQ(filter_text(server.extender(), names), kFilterReply);
}

TEST(ServeReplyText, AChangedListIsLookedUpAgain) {
  testing::TestServer server;
  const std::vector<std::string> names = {"gpu-node-a", "gpu-node-b", "gpu-node-c", "cpu-node-d",
                                          "gpu-node-e", "gpu-node-g", "ghost-node"};
  ASSERT_EQ(filter_text(server.extender(), names), kFilterReply);
  // The same names, e and a swapped: with the previous list's nodes, position 0 would pass.
  const std::vector<std::string> swapped = {"gpu-node-e", "gpu-node-b", "gpu-node-c", "cpu-node-d",
                                            "gpu-node-a", "gpu-node-g", "ghost-node"};
  EXPECT_EQ(filter_text(server.extender(), swapped),
            R"({"Nodes":null,"NodeNames":["gpu-node-b","gpu-node-a","gpu-node-g"],)"
            R"("FailedNodes":{"cpu-node-d":"Node has no GPU","ghost-node":"Node unknown to )"
            R"(greensched","gpu-node-c":"Insufficient GPU share on any single GPU","gpu-node-e":)"
            R"("Insufficient cpu"},"FailedAndUnresolvableNodes":{"cpu-node-d":"Node has no GPU",)"
            R"("ghost-node":"Node unknown to greensched","gpu-node-e":"Insufficient cpu"},)"
            R"("Error":""})");
  // One name changed in place (same length): the unknown node is not taken for gpu-node-g.
  const std::vector<std::string> renamed = {"gpu-node-a", "gpu-node-b", "gpu-node-c", "cpu-node-d",
                                            "gpu-node-e", "gpu-node-x", "ghost-node"};
  EXPECT_EQ(filter_text(server.extender(), renamed),
            R"({"Nodes":null,"NodeNames":["gpu-node-a","gpu-node-b"],)"
            R"("FailedNodes":{"cpu-node-d":"Node has no GPU","ghost-node":"Node unknown to )"
            R"(greensched","gpu-node-c":"Insufficient GPU share on any single GPU","gpu-node-e":)"
            R"("Insufficient cpu","gpu-node-x":"Node unknown to greensched"},)"
            R"("FailedAndUnresolvableNodes":{"cpu-node-d":"Node has no GPU",)"
            R"("ghost-node":"Node unknown to greensched","gpu-node-e":"Insufficient cpu",)"
            R"("gpu-node-x":"Node unknown to greensched"},"Error":""})");
  // A duplicated name is listed once per map, as before.
  const std::vector<std::string> twice = {"gpu-node-e", "gpu-node-a", "gpu-node-e"};
  EXPECT_EQ(filter_text(server.extender(), twice),
            R"({"Nodes":null,"NodeNames":["gpu-node-a"],)"
            R"("FailedNodes":{"gpu-node-e":"Insufficient cpu"},)"
            R"("FailedAndUnresolvableNodes":{"gpu-node-e":"Insufficient cpu"},"Error":""})");
}

// FGD's scores of the contract cluster for this pod: a 9, b 0, g 10 (serve_contract_test.cpp).
TEST(ServeReplyText, PrioritizeFindsItsNodesInAnyOrder) {
  testing::TestServer server;
  const std::vector<std::string> names = {"gpu-node-a", "gpu-node-b", "gpu-node-c", "cpu-node-d",
                                          "gpu-node-e", "gpu-node-g", "ghost-node"};
  ASSERT_EQ(filter_text(server.extender(), names), kFilterReply);
  // In the filter's order (matched along the remembered list).
  EXPECT_EQ(prioritize_text(server.extender(), {"gpu-node-a", "gpu-node-b", "gpu-node-g"}),
            R"([{"Host":"gpu-node-a","Score":9},{"Host":"gpu-node-b","Score":0},)"
            R"({"Host":"gpu-node-g","Score":10}])");
  // Out of that order, with an unknown name: looked up by name from where the order breaks.
  EXPECT_EQ(
      prioritize_text(server.extender(), {"gpu-node-g", "gpu-node-a", "nowhere", "gpu-node-b"}),
      R"([{"Host":"gpu-node-g","Score":10},{"Host":"gpu-node-a","Score":9},)"
      R"({"Host":"nowhere","Score":0},{"Host":"gpu-node-b","Score":0}])");
}

// Property: for random lists (with repeated names) and random failures, the positional form,
// with or without the name order, writes the text the maps write.
TEST(ServeReplyText, PositionalFailuresWriteWhatTheMapsWrite) {
  std::mt19937 rng(7);
  const std::vector<std::string_view> reasons = {"Insufficient cpu", "Node has no GPU",
                                                 "Node unknown to greensched"};
  for (int round = 0; round < 200; ++round) {
    ExtenderArgs args;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) args.node_names.push_back("node-" + std::to_string(rng() % 8));
    FilterResult maps;
    FilterResult positional;
    for (int i = 0; i < n; ++i) {
      // A name fails or passes the same way each time it is listed, as in the extender.
      const std::size_t h = std::hash<std::string>()(args.node_names[i] + std::to_string(round));
      if (h % 4 == 0) {
        maps.passed.push_back(i);
        positional.passed.push_back(i);
        continue;
      }
      const bool unresolvable = h % 3 == 0;
      const std::string_view reason = reasons[h % reasons.size()];
      (unresolvable ? maps.failed_unresolvable : maps.failed)[args.node_names[i]] = reason;
      positional.failed_nodes.push_back(
          FilterResult::FailedNode{static_cast<uint32_t>(i), unresolvable, reason});
    }
    const std::string expected = filter_result_text(maps, args);
    EXPECT_EQ(filter_result_text(positional, args), expected) << round;
    auto order = std::make_shared<std::vector<uint32_t>>(n);
    for (int i = 0; i < n; ++i) (*order)[i] = static_cast<uint32_t>(i);
    std::stable_sort(order->begin(), order->end(), [&](uint32_t a, uint32_t b) {
      return args.node_names[a] < args.node_names[b];
    });
    positional.name_order = order;
    EXPECT_EQ(filter_result_text(positional, args), expected) << round;
  }
}

}  // namespace
}  // namespace greensched::serve
