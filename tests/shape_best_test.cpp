// The best class kept per pod shape (ShapeBest) decides exactly as the passes over every class
// and over every node do, tie-breaks included: a random stream of arrivals of many shapes with
// random memory, departures and nodes going off and on line, long enough that the classes are
// rebuilt now and then and rarely seen shapes fall far behind the log of classes made (both
// make a shape file every class again).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/node_classes.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/policy/shape_best.hpp"
#include "greensched/trace/workload.hpp"
#include "test_pod.hpp"

namespace greensched::policy {
namespace {

struct ShapeBestFixture {
  GpuModelRegistry models;
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> shapes;  // one pod per shape; memory varies per arrival
  std::shared_ptr<frag::FragmentationModel> frag;
  uint32_t shape_count = 0;

  explicit ShapeBestFixture(uint64_t seed) {
    const std::vector<std::tuple<const char*, int64_t, int64_t, int, int>> types = {
        {"G2", 96000, 393216, 8, 60},      {"G2", 72000, 262144, 8, 20},
        {"T4", 104000, 524288, 2, 50},     {"P100", 64000, 262144, 2, 25},
        {"V100M16", 32000, 131072, 4, 15}, {"G3", 128000, 786432, 8, 8},
        {"", 96000, 393216, 0, 12},
    };
    for (const auto& [model_name, cpu, memory, gpus, count] : types) {
      const GpuModelId model = gpus > 0 ? *models.intern(model_name) : kNoGpuModel;
      for (int i = 0; i < count; ++i) {
        nodes.push_back(
            NodeSpec{fmt::format("{}-{}-{}", model_name, cpu, i), cpu, memory, gpus, model});
      }
    }
    // Many distinct shapes: CPU-only, sharing, whole-GPU, some restricted to GPU models.
    const GpuModelSet t4 = GpuModelSet{1} << *models.find("T4");
    const GpuModelSet g2_or_v100 =
        (GpuModelSet{1} << *models.find("G2")) | (GpuModelSet{1} << *models.find("V100M16"));
    const std::vector<int64_t> cpus = {500, 1000, 2000, 4000, 8000, 16000, 32000, 48000};
    const std::vector<std::pair<int, int32_t>> gpus = {
        {0, 0},   {1, 100},  {1, 250},  {1, 300},  {1, 500},  {1, 700},
        {1, 900}, {1, 1000}, {2, 1000}, {4, 1000}, {8, 1000},
    };
    const std::vector<GpuModelSet> specs = {0, 0, t4, g2_or_v100};
    Rng draw(seed);
    std::set<std::tuple<int64_t, int, int32_t, GpuModelSet>> seen;
    while (shapes.size() < 90) {
      const int64_t cpu = cpus[draw.uniform(cpus.size())];
      const auto [num_gpu, milli] = gpus[draw.uniform(gpus.size())];
      const GpuModelSet spec = num_gpu > 0 ? specs[draw.uniform(specs.size())] : 0;
      if (!seen.emplace(cpu, num_gpu, milli, spec).second) continue;
      shapes.push_back(testing::test_pod("", cpu, num_gpu, milli, spec, 1000));
    }
    shape_count = trace::assign_shape_ids(shapes);
    frag = std::make_shared<frag::FragmentationModel>(frag::build_target_workload(shapes));
  }

  std::unique_ptr<Policy> make(std::string_view name) const {
    PolicyContext context;
    context.frag = frag;
    context.shape_count = shape_count;
    auto made = make_policy(name, context);
    EXPECT_TRUE(made.ok()) << made.error();
    return std::move(made.value());
  }
};

void expect_same_as_full_passes(uint64_t seed, int steps) {
  ShapeBestFixture f(seed);
  ASSERT_EQ(f.shape_count, f.shapes.size());
  std::unique_ptr<Policy> by_node = f.make("fgd");
  std::unique_ptr<Policy> by_class = f.make("fgd");
  std::unique_ptr<Policy> by_shape = f.make("fgd");
  std::unique_ptr<Policy> own = f.make("fgd");
  ASSERT_TRUE(by_shape->raw_score_by_shape(f.shapes.front()));
  ASSERT_TRUE(by_shape->best_is_highest_raw());
  Rng order(seed);
  const std::vector<uint32_t> rank = random_tie_rank(f.nodes.size(), order);
  Scheduler nodes_pass(*by_node, rank);
  nodes_pass.set_node_class_mode(NodeClassMode::kOff);
  Scheduler classes_pass(*by_class, rank);
  classes_pass.set_node_class_mode(NodeClassMode::kOn);
  classes_pass.set_shape_best(false);
  Scheduler shape_pass(*by_shape, rank);
  shape_pass.set_node_class_mode(NodeClassMode::kOn);
  // The same, driven directly, to see the classes being rebuilt.
  NodeClasses classes(*own, rank);
  ShapeBest best(*own, rank);
  Cluster a(f.nodes);
  Cluster b(f.nodes);
  Cluster c(f.nodes);
  Rng events(seed + 1);
  Rng rng_a(seed + 2);
  Rng rng_b(seed + 2);
  Rng rng_c(seed + 2);
  Rng rng_own(seed + 2);
  const std::vector<int64_t> memories = {0, 1000, 16000, 64000, 131072, 200000, 400000, 600000};
  std::vector<PodId> placed;
  PodId next = 0;
  int placements = 0;
  int misses = 0;
  std::set<uint32_t> shapes_placed;
  for (int step = 0; step < steps; ++step) {
    const uint64_t roll = events.uniform(100);
    if (roll < 35 && !placed.empty()) {
      const std::size_t i = events.uniform(placed.size());
      for (Cluster* x : {&a, &b, &c}) ASSERT_TRUE(x->release(placed[i]).ok());
      placed[i] = placed.back();
      placed.pop_back();
      continue;
    }
    if (roll < 38) {
      const auto n = static_cast<NodeIndex>(events.uniform(f.nodes.size()));
      if (a.state(n).pods == 0) {
        const bool online = !a.state(n).online;
        for (Cluster* x : {&a, &b, &c}) ASSERT_TRUE(x->set_online(n, online).ok());
      }
      continue;
    }
    // Skewed: a few shapes come often, the rest rarely (so they fall behind the log).
    const std::size_t s =
        events.uniform(4) != 0 ? events.uniform(6) : events.uniform(f.shapes.size());
    PodSpec pod = f.shapes[s];
    pod.memory_mib = memories[events.uniform(memories.size())];
    const Decision da = nodes_pass.schedule(a, pod, rng_a);
    const Decision db = classes_pass.schedule(b, pod, rng_b);
    const Decision dc = shape_pass.schedule(c, pod, rng_c);
    ASSERT_EQ(da.node, db.node) << "step " << step;
    ASSERT_EQ(da.node, dc.node) << "step " << step << " shape " << pod.shape;
    ASSERT_EQ(da.gpus, dc.gpus) << "step " << step;
    ASSERT_EQ(da.score, dc.score) << "step " << step;
    classes.sync(c);
    const ShapeBest::Best own_best = best.find(c, classes, pod, rng_own);
    ASSERT_EQ(own_best.node, dc.node) << "step " << step;
    if (dc.node >= 0) {
      ASSERT_EQ(own_best.raw, dc.score) << "step " << step;
    }
    if (da.node < 0) {
      ++misses;
      continue;
    }
    for (Cluster* x : {&a, &b, &c}) ASSERT_TRUE(x->allocate(next, pod, da.node, da.gpus).ok());
    placed.push_back(next++);
    ++placements;
    shapes_placed.insert(pod.shape);
  }
  // The stream fills the cluster (pods that fit nowhere) and empties it in part, uses most
  // shapes, and runs long enough that the classes were rebuilt (the cluster's journal was cut
  // between two syncs).
  EXPECT_GT(placements, steps / 4);
  EXPECT_GT(misses, steps / 50);
  EXPECT_GT(shapes_placed.size(), f.shapes.size() / 2);
  EXPECT_GT(classes.epoch(), 1U);
}

TEST(ShapeBest, SameDecisionsAsPassesOverClassesAndNodes) {
  for (uint64_t seed : {3, 4, 5}) expect_same_as_full_passes(seed, 12000);
}

TEST(ShapeBest, NormalisingAndRandomPoliciesKeepTheFullPass) {
  // The kept best needs the best candidate to be the highest raw score: min-max normalisation
  // (BestFit, PWR) can give distinct raw scores one score, and Random draws.
  ShapeBestFixture f(1);
  for (const char* name : {"bestfit", "random"}) {
    EXPECT_FALSE(f.make(name)->best_is_highest_raw()) << name;
  }
  EXPECT_TRUE(f.make("fgd")->best_is_highest_raw());
}

}  // namespace
}  // namespace greensched::policy
