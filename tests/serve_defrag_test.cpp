// GET /v1/defrag, the extender's defragmentation plan, over HTTP on small hand-computed
// clusters. Best fit places the pods here, so that every choice can be worked out by hand:
// its node score is 100 x (1 - (0.5 CPU left / 128000 + 0.5 GPU left / 8000)), truncated, ties
// to the first node; a share goes to the tightest GPU it fits, a whole GPU to the first free.
//
// The cluster: node-a, node-b and node-c, each 2 x V100M16, 32 CPUs. Every pod asks 1 CPU
// (+100m for its log shipper). The fragmenting sequence: twelve pods of half a GPU, four bound
// to each node, pair by pair on the same GPU (the tightest), then every second one leaves:
//   node-a  GPU 0: p1 (movable)   GPU 1: p3 (not movable)
//   node-b  GPU 0: p5 (movable)   GPU 1: p7 (movable)
//   node-c  GPU 0: p9 (movable)   GPU 1: p11 (movable)
// Every GPU is half free, 3000 milli in all, and a whole-GPU pod fits nowhere.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serve_test_support.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;
using testing::post_json;

const std::vector<std::string> kDefragNodes = {"node-a", "node-b", "node-c"};

json defrag_limits(const std::string& gpu_key, const std::string& amount) {
  json l = {{"cpu", "1"}, {"memory", "1Gi"}};
  l[gpu_key] = amount;
  return json{{"limits", l}, {"requests", l}};
}

json half_pod(const std::string& name, bool movable) {
  json annotations = json::object();
  if (movable) annotations["greensched.io/movable"] = "true";
  return testing::pod_json(name, "uid-" + name, defrag_limits("alibabacloud.com/gpu-milli", "500"),
                           annotations);
}

json one_gpu_pod(const std::string& name) {
  return testing::pod_json(name, "uid-" + name, defrag_limits("alibabacloud.com/gpu-count", "1"));
}

class ServeDefrag : public ::testing::Test {
 protected:
  void SetUp() override {
    GpuModelRegistry models;
    std::vector<NodeSpec> nodes;
    for (const std::string& n : kDefragNodes)
      nodes.push_back(testing::node(models, n, 2, "V100M16"));
    StateOptions options;
    options.policy = "bestfit";
    options.target = testing::two_shape_target();
    auto state = ClusterState::create(models, nodes, options);
    ASSERT_TRUE(state.ok()) << state.error();
    auto journal = Journal::open(dir_.path() + "/state");
    ASSERT_TRUE(journal.ok()) << journal.error();
    extender_ = std::make_unique<Extender>(std::move(state.value()), std::move(journal.value()),
                                           ExtenderOptions{});
    server_.attach(extender_.get());
    auto port = server_.start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.error();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port.value());
    client_->set_read_timeout(10, 0);
  }
  void TearDown() override {
    server_.stop();
    server_.attach(nullptr);
  }

  // kube-scheduler's filter of `pod` over the three nodes: the nodes that passed.
  json filter(const json& pod) {
    auto [code, reply] =
        post_json(*client_, "/filter", json{{"Pod", pod}, {"NodeNames", kDefragNodes}}.dump());
    EXPECT_EQ(code, 200);
    return reply["NodeNames"];
  }
  void place(const json& pod, const std::string& node) {
    filter(pod);
    const std::string name = pod["metadata"]["name"];
    auto [code, reply] = post_json(*client_, "/bind",
                                   json{{"PodName", name},
                                        {"PodNamespace", "ml-team"},
                                        {"PodUID", "uid-" + name},
                                        {"Node", node}}
                                       .dump());
    ASSERT_EQ(code, 200);
    ASSERT_EQ(reply["Error"], "") << name;
  }
  void release(const std::string& name) {
    auto [code, reply] = post_json(
        *client_, "/release",
        json{{"PodName", name}, {"PodNamespace", "ml-team"}, {"PodUID", "uid-" + name}}.dump());
    ASSERT_EQ(code, 200) << reply.dump();
  }
  // The sequence of the file's comment; `movable` says whether p1, p5, p7, p9, p11 are
  // annotated movable (p3 never is).
  void fragment(bool movable = true) {
    for (int i = 1; i <= 12; ++i) {
      const bool stays = i % 2 == 1;
      place(half_pod("p" + std::to_string(i), stays && i != 3 && movable),
            kDefragNodes[static_cast<std::size_t>((i - 1) / 4)]);
    }
    for (int i = 2; i <= 12; i += 2) release("p" + std::to_string(i));
  }
  std::pair<int, json> get(const std::string& path) {
    auto res = client_->Get(path.c_str());
    if (!res) return {-1, json()};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  testing::TempDir dir_;
  ExtenderServer server_{ServerOptions{}};
  std::unique_ptr<Extender> extender_;
  std::unique_ptr<httplib::Client> client_;
};

json planned_move(const std::string& pod, const std::string& from, int from_gpu,
                  const std::string& to, int to_gpu) {
  return json{{"pod", "ml-team/" + pod},
              {"uid", "uid-" + pod},
              {"from", from},
              {"from_gpus", {from_gpu}},
              {"to", to},
              {"to_gpus", {to_gpu}},
              {"gpu_milli", 500}};
}

// Freed on the pod's node by a move from one GPU to the other: a whole GPU, no milli, CPU or
// memory (the moved pod stays on the node).
json whole_gpu_freed_on(const std::string& node) {
  return json{
      {"node", node}, {"whole_gpus", 1}, {"gpu_milli", 0}, {"cpu_milli", 0}, {"memory_mib", 0}};
}

// Two whole-GPU pods wait, w1 first. w1: every node offers one move of 500 milli (node-a's
// p1, as p3 may not move); node-a comes first. p1 leaves GPU 0, w1 takes it, and best fit puts
// p1 back on node-a (GPU left 500 -> 0, where node-b and node-c would keep 500), on GPU 1 by
// p3. w2, planned on that: node-a's pods may not move (w1 is not running yet, p1 moved once,
// p3 is not movable); node-b's p5 moves to GPU 1 beside p7 the same way.
TEST_F(ServeDefrag, PlansAFragmentingSequenceOnePodAfterTheOther) {
  fragment();
  EXPECT_TRUE(filter(one_gpu_pod("w1")).empty());
  EXPECT_TRUE(filter(one_gpu_pod("w2")).empty());
  auto [before_code, before] = get("/pods");
  ASSERT_EQ(before_code, 200);

  auto [code, plan] = get("/v1/defrag?budget=2");
  ASSERT_EQ(code, 200) << plan.dump();
  const json expected = {{"budget", 2},
                         {"policy", "bestfit"},
                         {"moves_planned", 2},
                         {"plans",
                          {{{"pod", "ml-team/w1"},
                            {"uid", "uid-w1"},
                            {"node", "node-a"},
                            {"gpus", {0}},
                            {"moves", {planned_move("p1", "node-a", 0, "node-a", 1)}},
                            {"frees", whole_gpu_freed_on("node-a")}},
                           {{"pod", "ml-team/w2"},
                            {"uid", "uid-w2"},
                            {"node", "node-b"},
                            {"gpus", {0}},
                            {"moves", {planned_move("p5", "node-b", 0, "node-b", 1)}},
                            {"frees", whole_gpu_freed_on("node-b")}}}},
                         {"unplanned", json::array()}};
  EXPECT_EQ(plan, expected) << plan.dump(2);

  // Planning changed nothing: the same pods where they were, and the pods still fit nowhere.
  auto [after_code, after] = get("/pods");
  ASSERT_EQ(after_code, 200);
  EXPECT_EQ(after, before);
  EXPECT_TRUE(filter(one_gpu_pod("w1")).empty());

  // With one move, w2's plan does not fit in the budget.
  auto [one_code, one] = get("/v1/defrag?budget=1");
  ASSERT_EQ(one_code, 200);
  EXPECT_EQ(one["moves_planned"], 1);
  ASSERT_EQ(one["plans"].size(), 1U);
  EXPECT_EQ(one["plans"][0]["pod"], "ml-team/w1");
  EXPECT_EQ(one["unplanned"], (json{{{"pod", "ml-team/w2"},
                                     {"uid", "uid-w2"},
                                     {"reason", "the budget of 1 moves is spent"}}}));
}

// A pod named in exclude stays: w1's plan then moves node-b's p5 (node-a offers only p1).
TEST_F(ServeDefrag, ExcludedPodsStay) {
  fragment();
  filter(one_gpu_pod("w1"));
  auto [code, plan] = get("/v1/defrag?budget=3&exclude=ml-team/p1");
  ASSERT_EQ(code, 200) << plan.dump();
  ASSERT_EQ(plan["plans"].size(), 1U);
  EXPECT_EQ(plan["plans"][0]["node"], "node-b");
  EXPECT_EQ(plan["plans"][0]["moves"], json::array({planned_move("p5", "node-b", 0, "node-b", 1)}));
  // Several exclusions, as a list and repeated.
  auto [code2, plan2] = get("/v1/defrag?budget=3&exclude=ml-team/p1,ml-team/p5&exclude=ml-team/p9");
  ASSERT_EQ(code2, 200);
  EXPECT_EQ(plan2["plans"][0]["moves"],
            json::array({planned_move("p7", "node-b", 1, "node-b", 0)}));
}

// Without the annotation no pod may move: nothing is planned, whatever the budget.
TEST_F(ServeDefrag, PodsNotAnnotatedMovableNeverMove) {
  fragment(/*movable=*/false);
  filter(one_gpu_pod("w1"));
  auto [code, plan] = get("/v1/defrag?budget=5");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(plan["moves_planned"], 0);
  EXPECT_EQ(plan["plans"], json::array());
  EXPECT_EQ(plan["unplanned"],
            (json{{{"pod", "ml-team/w1"},
                   {"uid", "uid-w1"},
                   {"reason",
                    "no plan of at most 5 moves of movable pods (annotated greensched.io/movable: "
                    "\"true\") lets it fit"}}}));
  // The annotation is kept with the pod, and shown by GET pods.
  auto [pod_code, p1] = get("/pods/ml-team/p1");
  ASSERT_EQ(pod_code, 200);
  EXPECT_FALSE(p1["annotations"].contains("greensched.io/movable"));
}

TEST_F(ServeDefrag, BudgetZeroPlansNoMove) {
  fragment();
  filter(one_gpu_pod("w1"));
  auto [code, plan] = get("/v1/defrag?budget=0");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(plan, (json{{"budget", 0},
                        {"policy", "bestfit"},
                        {"moves_planned", 0},
                        {"plans", json::array()},
                        {"unplanned",
                         {{{"pod", "ml-team/w1"},
                           {"uid", "uid-w1"},
                           {"reason", "the budget of 0 moves is spent"}}}}}));
  auto [pod_code, p1] = get("/pods/ml-team/p1");
  ASSERT_EQ(pod_code, 200);
  EXPECT_EQ(p1["annotations"]["greensched.io/movable"], "true");
}

// A pending pod that fits as things stand needs no move; it is placed on the copy first, so
// the plans after it see its room taken.
TEST_F(ServeDefrag, PodsThatFitNeedNoMove) {
  fragment();
  ASSERT_EQ(filter(half_pod("small", false)).size(), 3U);
  filter(one_gpu_pod("w1"));
  auto [code, plan] = get("/v1/defrag?budget=1");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(plan["unplanned"], (json{{{"pod", "ml-team/small"},
                                      {"uid", "uid-small"},
                                      {"reason", "fits without moves (on node-a)"}}}));
  // small took node-a's GPU 0 beside p1 (all nodes tie; the tightest GPU, the first): node-a
  // now offers no set (p1 beside a pending pod, p3 not movable), so w1's plan is node-b's.
  ASSERT_EQ(plan["plans"].size(), 1U);
  EXPECT_EQ(plan["plans"][0]["node"], "node-b");
}

TEST_F(ServeDefrag, BadQueriesAre400) {
  for (const char* query :
       {"", "?budget=", "?budget=-1", "?budget=abc", "?budget=1.5", "?budget=99999999",
        "?budget=1&budget=2", "?budget=1&exclude=nosuchpod", "?budget=1&exclude=a/b/c"}) {
    auto [code, reply] = get(std::string("/v1/defrag") + query);
    EXPECT_EQ(code, 400) << query;
    ASSERT_TRUE(reply.is_object()) << query;
    EXPECT_TRUE(reply["Error"].is_string() && !reply["Error"].get<std::string>().empty())
        << query << ": " << reply.dump();
  }
  auto [code, reply] = get("/v1/defrag?budget=x");
  EXPECT_EQ(reply["Error"], "budget: 'x' is not a whole number of moves from 0 to 1000000");
}

// The movable flag is journalled with the bind, so a restart keeps it; journals written
// before it existed read as not movable.
TEST(ServeDefragState, MovableSurvivesTheJournal) {
  GpuModelRegistry models;
  std::vector<NodeSpec> nodes = {testing::node(models, "node-a", 2, "V100M16")};
  auto state = ClusterState::create(models, nodes, StateOptions{});
  ASSERT_TRUE(state.ok());
  PodRequest r = testing::existing_pod("m", 500);
  r.movable = true;
  ASSERT_TRUE(state.value()->bind(r, "node-a", 1).ok());
  const std::string entry = ClusterState::bind_entry(*state.value()->find_pod("kube-system/m"));
  EXPECT_NE(entry.find("\"movable\":true"), std::string::npos) << entry;

  auto replayed = ClusterState::create(models, nodes, StateOptions{});
  ASSERT_TRUE(replayed.ok());
  ASSERT_TRUE(replayed.value()->apply_entry(entry).ok());
  EXPECT_TRUE(replayed.value()->find_pod("kube-system/m")->request.movable);
  json old = json::parse(entry);
  old.erase("movable");
  old["name"] = "n";
  ASSERT_TRUE(replayed.value()->apply_entry(old.dump()).ok());
  EXPECT_FALSE(replayed.value()->find_pod("kube-system/n")->request.movable);
}

// A changed annotation keeps the pod where it is: a resync takes it in place (no release, the
// same GPUs), and so does the pod watcher's event (Extender::mark_movable), journalled so that
// a restart sees it.
TEST(ServeDefragState, AnnotationChangesKeepThePodInPlace) {
  testing::TempDir dir;
  GpuModelRegistry models;
  std::vector<NodeSpec> nodes = {testing::node(models, "node-a", 2, "V100M16")};
  auto state = ClusterState::create(models, nodes, StateOptions{});
  ASSERT_TRUE(state.ok());
  PodRequest r = testing::existing_pod("m", 500);
  ASSERT_TRUE(state.value()->bind(r, "node-a", 2).ok());
  auto journal = Journal::open(dir.path() + "/state");
  ASSERT_TRUE(journal.ok());
  auto extender = std::make_unique<Extender>(std::move(state.value()), std::move(journal.value()),
                                             ExtenderOptions{});
  Extender& ext = *extender;

  ResyncPod listed{r, "node-a", std::nullopt};
  listed.request.movable = true;
  const ResyncOutcome out = ext.resync({listed});
  EXPECT_EQ(out.removed, 0);
  EXPECT_EQ(out.added, 0);
  EXPECT_EQ(out.unchanged, 1);
  auto pod = ext.pod("kube-system", "m");
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ((*pod)["gpu_indices"], "1");
  EXPECT_EQ((*pod)["annotations"]["greensched.io/movable"], "true");

  EXPECT_TRUE(ext.mark_movable(r.ref, false));
  EXPECT_FALSE(ext.mark_movable(r.ref, false));  // unchanged
  PodRef other = r.ref;
  other.uid = "another-incarnation";
  EXPECT_FALSE(ext.mark_movable(other, true));
  EXPECT_FALSE((*ext.pod("kube-system", "m"))["annotations"].contains("greensched.io/movable"));
  EXPECT_TRUE(ext.mark_movable(r.ref, true));

  // Replayed onto the state it started from (its first bind was not journalled here), the
  // journal gives the last word.
  extender.reset();
  auto replayed = ClusterState::create(models, nodes, StateOptions{});
  ASSERT_TRUE(replayed.ok());
  ASSERT_TRUE(replayed.value()->bind(r, "node-a", 2).ok());
  auto again = Journal::open(dir.path() + "/state");
  ASSERT_TRUE(again.ok());
  Status s =
      again.value()->replay([&](const std::string& e) { return replayed.value()->apply_entry(e); });
  ASSERT_TRUE(s.ok()) << s.message();
  const BoundPod* m = replayed.value()->find_pod("kube-system/m");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->request.movable);
  EXPECT_EQ(m->gpus, 2U);
}

}  // namespace
}  // namespace greensched::serve
