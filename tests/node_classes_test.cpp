// Node classes decide exactly as the pass over every node does, tie-breaks included: two
// schedulers with one tie order, one scoring classes and one every node, place the same random
// stream of arrivals, departures and nodes going off and on line on two copies of a cluster,
// for every policy that allows classes.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "greensched/frag/fragmentation.hpp"
#include "greensched/learn/register.hpp"
#include "greensched/policy/node_classes.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/trace/workload.hpp"
#include "test_pod.hpp"

namespace greensched::policy {
namespace {

struct NodeType {
  const char* model;  // "" for a CPU-only node
  int64_t cpu_milli;
  int64_t memory_mib;
  int gpus;
  int count;
};

// Shapes of openb's node list, fewer of each; two G2 types differ only in CPU and memory
// capacity, which the power-scoring policies read (CPU sockets).
const std::vector<NodeType> kTypes = {
    {"G2", 96000, 393216, 8, 100},     {"G2", 72000, 262144, 8, 30},
    {"T4", 104000, 524288, 2, 90},     {"P100", 64000, 262144, 2, 40},
    {"V100M16", 32000, 131072, 4, 20}, {"G3", 128000, 786432, 8, 12},
    {"", 96000, 393216, 0, 18},
};

struct Fixture {
  GpuModelRegistry models;
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> shapes;  // one pod per shape; memory varies per arrival
  std::shared_ptr<frag::FragmentationModel> frag;
  std::shared_ptr<const std::vector<power::NodePower>> power;
  uint32_t shape_count = 0;

  Fixture() {
    for (const NodeType& t : kTypes) {
      const GpuModelId model = t.gpus > 0 ? *models.intern(t.model) : kNoGpuModel;
      for (int i = 0; i < t.count; ++i) {
        nodes.push_back(NodeSpec{fmt::format("{}-{}-{}", t.model, t.cpu_milli, i), t.cpu_milli,
                                 t.memory_mib, t.gpus, model});
      }
    }
    const GpuModelSet only_t4 = GpuModelSet{1} << *models.find("T4");
    const std::vector<std::tuple<int64_t, int, int32_t, GpuModelSet>> kinds = {
        {4000, 0, 0, 0},     {16000, 0, 0, 0},        {8000, 1, 250, 0},        {6000, 1, 500, 0},
        {12000, 1, 750, 0},  {4000, 1, 300, only_t4}, {8000, 1, 1000, 0},       {16000, 2, 1000, 0},
        {32000, 4, 1000, 0}, {64000, 8, 1000, 0},     {8000, 1, 1000, only_t4},
    };
    for (const auto& [cpu, gpus, milli, spec] : kinds) {
      shapes.push_back(testing::test_pod("", cpu, gpus, milli, spec, 1000));
    }
    shape_count = trace::assign_shape_ids(shapes);
    frag = std::make_shared<frag::FragmentationModel>(frag::build_target_workload(shapes));
    auto figures = power::PowerModel::builtin().resolve(nodes, models);
    EXPECT_TRUE(figures.ok()) << figures.error();
    power = std::make_shared<const std::vector<power::NodePower>>(std::move(figures.value()));
  }

  std::unique_ptr<Policy> make(std::string_view name) const {
    PolicyContext context;
    context.frag = frag;
    context.shape_count = shape_count;
    context.power = power;
    auto made = make_policy(name, context);
    EXPECT_TRUE(made.ok()) << made.error();
    return std::move(made.value());
  }
};

// The invariant classes rest on: every member of a class gets its class's raw score, for every
// pod shape (memory aside, which the filter checks per member).
void expect_equal_scores_within_classes(const Fixture& f, std::string_view name,
                                        const Cluster& cluster, std::span<const uint32_t> rank) {
  std::unique_ptr<Policy> policy = f.make(name);
  NodeClasses classes(*policy, rank);
  classes.sync(cluster);
  Rng rng(1);
  for (PodSpec pod : f.shapes) {
    pod.memory_mib = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      std::vector<Candidate> members;
      for (const NodeIndex n : classes.members(i)) {
        if (filter_node(cluster.spec(n), cluster.state(n), pod) == FilterReason::kFits) {
          members.push_back(Candidate{n, 0, 0});
        }
      }
      if (members.empty()) continue;
      policy->score(cluster, pod, members, rng);
      for (const Candidate& c : members) {
        ASSERT_EQ(c.raw, members.front().raw)
            << name << ": nodes " << members.front().node << " and " << c.node
            << " share a class but score differently";
      }
    }
  }
}

// Runs `steps` random events on two copies of the cluster and checks every decision.
void expect_same_decisions(std::string_view name, uint64_t seed, int steps) {
  Fixture f;
  std::unique_ptr<Policy> by_node = f.make(name);
  std::unique_ptr<Policy> by_class = f.make(name);
  ASSERT_TRUE(by_class->scores_by_class()) << name;
  Rng order(seed);
  const std::vector<uint32_t> rank = random_tie_rank(f.nodes.size(), order);
  Scheduler nodes_pass(*by_node, rank);
  nodes_pass.set_node_class_mode(NodeClassMode::kOff);
  Scheduler classes_pass(*by_class, rank);
  classes_pass.set_node_class_mode(NodeClassMode::kOn);
  Cluster a(f.nodes);
  Cluster b(f.nodes);
  Rng events(seed + 1);
  Rng rng_a(seed + 2);
  Rng rng_b(seed + 2);
  const std::vector<int64_t> memories = {1000, 16000, 64000, 200000, 400000};
  std::vector<PodId> placed;
  PodId next = 0;
  int placements = 0;
  std::size_t max_classes = 0;
  for (int step = 0; step < steps; ++step) {
    const uint64_t roll = events.uniform(100);
    if (roll < 30 && !placed.empty()) {
      const std::size_t i = events.uniform(placed.size());
      ASSERT_TRUE(a.release(placed[i]).ok());
      ASSERT_TRUE(b.release(placed[i]).ok());
      placed[i] = placed.back();
      placed.pop_back();
      continue;
    }
    if (roll < 33) {
      // An empty node goes off line, or an offline one comes back.
      const auto n = static_cast<NodeIndex>(events.uniform(f.nodes.size()));
      if (a.state(n).pods == 0) {
        const bool online = !a.state(n).online;
        ASSERT_TRUE(a.set_online(n, online).ok());
        ASSERT_TRUE(b.set_online(n, online).ok());
      }
      continue;
    }
    if (step % 1000 == 999) expect_equal_scores_within_classes(f, name, a, rank);
    PodSpec pod = f.shapes[events.uniform(f.shapes.size())];
    pod.memory_mib = memories[events.uniform(memories.size())];
    const Decision da = nodes_pass.schedule(a, pod, rng_a);
    const Decision db = classes_pass.schedule(b, pod, rng_b);
    ASSERT_EQ(da.node, db.node) << name << " step " << step;
    ASSERT_EQ(da.gpus, db.gpus) << name << " step " << step;
    ASSERT_EQ(da.score, db.score) << name << " step " << step;
    max_classes = std::max(max_classes, classes_pass.class_count());
    if (da.node < 0) continue;
    ASSERT_TRUE(a.allocate(next, pod, da.node, da.gpus).ok());
    ASSERT_TRUE(b.allocate(next, pod, db.node, db.gpus).ok());
    placed.push_back(next++);
    ++placements;
  }
  // The stream fills the cluster and empties it in part, and classes were used and merge nodes.
  EXPECT_GT(placements, steps / 3) << name;
  EXPECT_GT(max_classes, 10U) << name;
  EXPECT_LT(max_classes, f.nodes.size()) << name;
}

TEST(NodeClasses, SameDecisionsAsEveryNodeForEveryPolicyThatAllowsThem) {
  ASSERT_TRUE(learn::register_learn_policies().ok());
  std::vector<std::string> names = {"fgd",
                                    "pwr",
                                    "bestfit",
                                    "dotprod",
                                    "packing",
                                    "clustering",
                                    "fgd-energy",
                                    "pwr:200+fgd:800",
                                    "bestfit:1+clustering:2"};
  names.push_back("learned:" + std::string(GREENSCHED_SOURCE_DIR) + "/models/learned-default.json");
  for (const std::string& name : names) {
    for (uint64_t seed : {1, 2}) expect_same_decisions(name, seed, 4000);
  }
}

TEST(NodeClasses, RandomScoresEveryNode) {
  Fixture f;
  EXPECT_FALSE(f.make("random")->scores_by_class());
  EXPECT_FALSE(f.make("random:1+fgd:1")->scores_by_class());
}

// Hand-checked: four identical empty nodes form one class whose members are in tie order; a
// pod that takes memory from the first leaves it in the class (memory is not in FGD's key) and
// a pod too big for its memory goes to the next member in tie order.
TEST(NodeClasses, MembersInTieOrderAndMemoryOutsideTheKey) {
  Fixture f;
  const GpuModelId g2 = *f.models.find("G2");
  std::vector<NodeSpec> nodes(4, NodeSpec{"n", 96000, 393216, 8, g2});
  Cluster cluster(nodes);
  std::unique_ptr<Policy> fgd = f.make("fgd");
  const std::vector<uint32_t> rank = {2, 0, 3, 1};  // tie order: node 1, 3, 0, 2
  NodeClasses classes(*fgd, rank);
  classes.sync(cluster);
  ASSERT_EQ(classes.size(), 1U);
  EXPECT_EQ(classes.members(0).size(), 4U);
  EXPECT_EQ(classes.representative(0), 1);
  // A CPU-only pod using memory only would change the key (free CPU); use a 0-CPU pod.
  PodSpec memory_only;
  memory_only.memory_mib = 300000;
  ASSERT_TRUE(cluster.allocate(0, memory_only, 1, 0).ok());
  classes.sync(cluster);
  ASSERT_EQ(classes.size(), 1U);
  EXPECT_EQ(classes.columns().max_memory_free_mib[0], 393216);
  EXPECT_EQ(classes.first_fitting(0, 100000), 3);  // node 1 has 93216 MiB left
  EXPECT_EQ(classes.first_fitting(0, 1000), 1);
  EXPECT_EQ(classes.first_fitting(0, 400000), -1);
  ASSERT_TRUE(cluster.release(0).ok());
  classes.sync(cluster);
  EXPECT_EQ(classes.first_fitting(0, 100000), 1);
}

TEST(NodeClasses, ANewClassAtAPositionHasANewGeneration) {
  Fixture f;
  const GpuModelId g2 = *f.models.find("G2");
  Cluster cluster(std::vector<NodeSpec>(2, NodeSpec{"n", 96000, 393216, 8, g2}));
  std::unique_ptr<Policy> fgd = f.make("fgd");
  const std::vector<uint32_t> rank = {0, 1};
  NodeClasses classes(*fgd, rank);
  classes.sync(cluster);
  ASSERT_EQ(classes.size(), 1U);
  const uint64_t idle = classes.generation(0);
  EXPECT_NE(idle, 0U);
  PodSpec cpu_pod;
  cpu_pod.cpu_milli = 1000;
  // Both nodes move to one new class at position 0: the same position, another class.
  ASSERT_TRUE(cluster.allocate(0, cpu_pod, 0, 0).ok());
  ASSERT_TRUE(cluster.allocate(1, cpu_pod, 1, 0).ok());
  classes.sync(cluster);
  ASSERT_EQ(classes.size(), 1U);
  EXPECT_NE(classes.generation(0), idle);
  const uint64_t busy = classes.generation(0);
  // A rebuild (another cluster) makes new classes, never an old generation again.
  Cluster other(std::vector<NodeSpec>(2, NodeSpec{"n", 96000, 393216, 8, g2}));
  classes.sync(other);
  ASSERT_EQ(classes.size(), 1U);
  EXPECT_NE(classes.generation(0), idle);
  EXPECT_NE(classes.generation(0), busy);
}

}  // namespace
}  // namespace greensched::policy
