// Node power of hand-computed nodes, the power model file, PWR's choice and weighted mixes.
#include <gtest/gtest.h>

#include <memory>

#include <fmt/format.h>

#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/power/power_model.hpp"
#include "test_pod.hpp"

namespace greensched::power {
namespace {

// A T4 node of the openb trace: 2 GPUs, 104 vCPU, the default Xeon E5-2682 v4 (15/120 W,
// 16 cores per socket): 52 physical cores on 4 sockets.
const NodeSpec kT4Node{"t4", 104000, 524288, 2, 0};
const NodePower kT4Power{GpuPower{10, 70}, CpuPower{"E5-2682 v4", 15, 120, 16}, "T4"};

TEST(NodePower, IdleOneSharedPodAndFull) {
  const int32_t free_gpus[] = {1000, 1000};
  // Idle: 4 idle sockets (60 W) + 2 idle GPUs (20 W).
  EXPECT_DOUBLE_EQ(node_power_watts(kT4Node, kT4Power, 104000, free_gpus), 80.0);
  // One pod of 4 vCPU and 300 milli on GPU 0: 100 free vCPU -> 50 idle cores, 2 working ->
  // 1 active socket: 120 + 3 * 15 = 165 W; GPUs 70 + 10 = 80 W.
  const int32_t one_shared[] = {700, 1000};
  EXPECT_DOUBLE_EQ(node_power_watts(kT4Node, kT4Power, 100000, one_shared), 245.0);
  const PowerSplit split = node_power_split(kT4Node, kT4Power, 100000, one_shared);
  EXPECT_DOUBLE_EQ(split.cpu_watts, 165.0);
  EXPECT_DOUBLE_EQ(split.gpu_watts, 80.0);
  // Full: every socket and GPU at max: 4 * 120 + 2 * 70 = 620 W.
  const int32_t full[] = {0, 0};
  EXPECT_DOUBLE_EQ(node_power_watts(kT4Node, kT4Power, 0, full), 620.0);
  // 4.5 free vCPU -> floor(2.25) = 2 idle cores, 50 working -> 4 active sockets.
  EXPECT_DOUBLE_EQ(node_power_watts(kT4Node, kT4Power, 4500, full), 620.0);
  // 33 free vCPU -> 16 idle cores, 36 working -> 3 active sockets: 3 * 120 + 15 = 375 W.
  EXPECT_DOUBLE_EQ(node_power_watts(kT4Node, kT4Power, 33000, free_gpus), 375.0 + 20.0);
}

TEST(CpuPower, FromCoresAgreesWithCeilingDivision) {
  // Property: the division-free socket count equals ceil(cores / cores_per_socket), for small
  // and large socket counts alike.
  for (int64_t cps = 1; cps <= 70; ++cps) {
    for (int64_t physical = 0; physical <= 200; ++physical) {
      const int64_t sockets = (physical + cps - 1) / cps;
      for (int64_t working = 0; working <= physical; working += 1 + physical / 17) {
        const int64_t active = (working + cps - 1) / cps;
        ASSERT_DOUBLE_EQ(
            cpu_power_from_cores(physical, working, cps, 120, 15),
            static_cast<double>(active) * 120 + static_cast<double>(sockets - active) * 15)
            << physical << " cores, " << working << " working, " << cps << " per socket";
      }
    }
  }
}

TEST(PowerModel, BuiltinHasEveryOpenbModel) {
  const PowerModel model = PowerModel::builtin();
  GpuModelRegistry models;
  std::vector<NodeSpec> nodes;
  for (const char* name : {"T4", "A10", "P100", "V100M16", "V100M32", "G2", "G3"}) {
    nodes.push_back(NodeSpec{name, 96000, 1000, 8, *models.intern(name)});
  }
  auto figures = model.resolve(nodes, models);
  ASSERT_TRUE(figures.ok()) << figures.error();
  EXPECT_DOUBLE_EQ(figures.value()[0].gpu.max_watts, 70.0);   // T4
  EXPECT_DOUBLE_EQ(figures.value()[5].gpu.max_watts, 150.0);  // G2 as A10
  EXPECT_DOUBLE_EQ(figures.value()[6].gpu.idle_watts, 50.0);  // G3 as A100
  EXPECT_EQ(figures.value()[0].cpu.name, "Xeon E5-2682 v4");
  EXPECT_DOUBLE_EQ(model.pue(), 1.0);
}

TEST(PowerModel, OverridesPerNodeTypeAndNodeName) {
  auto model = PowerModel::parse(R"({
    "gpus": {"T4": {"idle_watts": 10, "max_watts": 70}, "X": {"idle_watts": 1, "max_watts": 2}},
    "cpus": {"a": {"idle_watts": 15, "max_watts": 120, "cores_per_socket": 16},
             "b": {"idle_watts": 20, "max_watts": 205, "cores_per_socket": 26}},
    "default_cpu": "a",
    "node_types": [{"gpu_model": "T4", "gpu_count": 4, "cpu": "b"}],
    "nodes": {"special": {"gpu": "X"}},
    "pue": 1.5})",
                                 "m.json");
  ASSERT_TRUE(model.ok()) << model.error();
  GpuModelRegistry models;
  const GpuModelId t4 = *models.intern("T4");
  std::vector<NodeSpec> nodes = {{"n0", 8000, 1, 2, t4},
                                 {"n1", 8000, 1, 4, t4},
                                 {"special", 8000, 1, 2, t4},
                                 {"cpu", 8000, 1, 0, kNoGpuModel}};
  auto figures = model.value().resolve(nodes, models);
  ASSERT_TRUE(figures.ok()) << figures.error();
  EXPECT_EQ(figures.value()[0].cpu.name, "a");
  EXPECT_EQ(figures.value()[1].cpu.name, "b");
  EXPECT_DOUBLE_EQ(figures.value()[2].gpu.max_watts, 2.0);
  EXPECT_EQ(figures.value()[3].gpu_name, "");
  EXPECT_DOUBLE_EQ(model.value().pue(), 1.5);
}

TEST(PowerModel, ErrorsNameTheKey) {
  const auto error_of = [](const char* text) {
    auto m = PowerModel::parse(text, "m.json");
    return m.ok() ? std::string("ok") : m.error();
  };
  const char* cpus = R"("cpus": {"a": {"idle_watts": 1, "max_watts": 2, "cores_per_socket": 4}})";
  EXPECT_NE(error_of("{").find("m.json: invalid JSON"), std::string::npos);
  EXPECT_NE(
      error_of(
          fmt::format(R"({{"gpus": {{"T4": {{"idle_watts": 10}}}}, {}, "default_cpu": "a"}})", cpus)
              .c_str())
          .find("m.json: gpus.T4.max_watts: missing"),
      std::string::npos);
  EXPECT_NE(
      error_of(
          fmt::format(
              R"({{"gpus": {{"T4": {{"idle_watts": "x", "max_watts": 1}}}}, {}, "default_cpu": "a"}})",
              cpus)
              .c_str())
          .find("gpus.T4.idle_watts: expected a number"),
      std::string::npos);
  EXPECT_NE(
      error_of(
          fmt::format(R"({{"gpus": {{"G2": {{"same_as": "A10"}}}}, {}, "default_cpu": "a"}})", cpus)
              .c_str())
          .find("gpus.G2.same_as: 'A10'"),
      std::string::npos);
  EXPECT_NE(error_of(fmt::format(R"({{"gpus": {{}}, {}, "default_cpu": "zz"}})", cpus).c_str())
                .find("default_cpu: 'zz'"),
            std::string::npos);
  EXPECT_NE(
      error_of(fmt::format(R"({{"gpus": {{}}, {}, "default_cpu": "a", "pue": 0.5}})", cpus).c_str())
          .find("pue"),
      std::string::npos);
  EXPECT_NE(
      error_of(
          fmt::format(
              R"({{"gpus": {{}}, {}, "default_cpu": "a", "nodes": {{"n": {{"cpu": "q"}}}}}})", cpus)
              .c_str())
          .find("nodes.n.cpu: 'q'"),
      std::string::npos);
  EXPECT_NE(
      error_of(fmt::format(R"({{"gpus": {{}}, {}, "default_cpu": "a", "extra": 1}})", cpus).c_str())
          .find("extra: unknown key"),
      std::string::npos);
  // Counts are integers in range: a float too large for an int is refused, not converted.
  EXPECT_NE(error_of(R"({"gpus": {}, "cpus": {"a": {"idle_watts": 1, "max_watts": 2,
               "cores_per_socket": 1e40}}, "default_cpu": "a"})")
                .find("m.json: cpus.a.cores_per_socket: expected an integer in [1, 4096]"),
            std::string::npos);
  EXPECT_NE(error_of(fmt::format(R"({{"gpus": {{}}, {}, "default_cpu": "a",
               "node_types": [{{"gpu_count": 4294967298, "cpu": "a"}}]}})",
                                 cpus)
                         .c_str())
                .find("m.json: node_types[0].gpu_count: expected an integer in [0, 16]"),
            std::string::npos);
  // A cluster model with no figures is an error naming the node.
  auto empty_gpus =
      PowerModel::parse(fmt::format(R"({{"gpus": {{}}, {}, "default_cpu": "a"}})", cpus), "m.json");
  ASSERT_TRUE(empty_gpus.ok());
  GpuModelRegistry models;
  auto r = empty_gpus.value().resolve(
      std::vector<NodeSpec>{{"n7", 1000, 1, 1, *models.intern("T4")}}, models);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("n7"), std::string::npos);
}

// check_gpu_models is resolve's status: a node whose own model has no figures passes when an
// override gives it some, and the error is resolve's, naming the GPU with no figures and the
// front end's way to add one.
TEST(PowerModel, CheckGpuModelsIsResolvesStatus) {
  auto model = PowerModel::parse(R"({
    "gpus": {"X": {"idle_watts": 1, "max_watts": 2}},
    "cpus": {"a": {"idle_watts": 15, "max_watts": 120, "cores_per_socket": 16}},
    "default_cpu": "a",
    "nodes": {"special": {"gpu": "X"}}})",
                                 "m.json");
  ASSERT_TRUE(model.ok()) << model.error();
  GpuModelRegistry models;
  const GpuModelId t4 = *models.intern("T4");
  const std::vector<NodeSpec> covered = {{"special", 8000, 1, 2, t4}};
  EXPECT_TRUE(check_gpu_models(model.value(), covered, models, "a hint").ok());
  const std::vector<NodeSpec> uncovered = {{"special", 8000, 1, 2, t4}, {"n7", 8000, 1, 2, t4}};
  const Status s = check_gpu_models(model.value(), uncovered, models, "a hint");
  ASSERT_FALSE(s.ok());
  auto resolved = model.value().resolve(uncovered, models, "a hint");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(s.message(), resolved.error());
  EXPECT_NE(s.message().find("node n7: unknown GPU model \"T4\""), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("add it with a hint"), std::string::npos) << s.message();
}

// A file extends the built-in model: one GPU by its watts, another the same as a built-in one,
// and nothing else; the built-in GPUs and CPUs stay. A reference to no GPU says what to write.
TEST(PowerModel, AFileExtendsTheBuiltinOne) {
  auto model = PowerModel::extend(R"({"gpus": {
      "unlabelled": {"same_as": "A100"},
      "X9": {"idle_watts": 50, "max_watts": 300}}})",
                                  "mine.json");
  ASSERT_TRUE(model.ok()) << model.error();
  const PowerModel builtin = PowerModel::builtin();
  ASSERT_TRUE(builtin.gpu("A100").has_value());
  ASSERT_TRUE(model.value().gpu("unlabelled").has_value());
  EXPECT_EQ(model.value().gpu("unlabelled")->max_watts, builtin.gpu("A100")->max_watts);
  EXPECT_EQ(model.value().gpu("X9")->idle_watts, 50);
  EXPECT_TRUE(model.value().gpu("T4").has_value());  // the built-in ones stay
  EXPECT_EQ(model.value().gpu_names().size(), builtin.gpu_names().size() + 2);
  // Overriding a built-in GPU's figures.
  auto over = PowerModel::extend(R"({"gpus": {"A100": {"idle_watts": 1, "max_watts": 2}}})", "o");
  ASSERT_TRUE(over.ok()) << over.error();
  EXPECT_EQ(over.value().gpu("A100")->max_watts, 2);
  auto bad = PowerModel::extend(R"({"gpus": {"Y": {"same_as": "Z1"}}})", "b.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("b.json: gpus.Y.same_as: 'Z1' is not a GPU with figures (known: "),
            std::string::npos)
      << bad.error();
  EXPECT_NE(bad.error().find("give this one \"idle_watts\" and \"max_watts\""), std::string::npos);
  EXPECT_FALSE(PowerModel::extend(R"({"cpus": []})", "c.json").ok());
  // A whole model (parse) still needs every section.
  EXPECT_FALSE(PowerModel::parse(R"({"gpus": {}})", "w.json").ok());
}

TEST(ClusterPower, TracksChangesAndOfflineNodes) {
  Cluster c({kT4Node, kT4Node});
  ClusterPower p({kT4Power, kT4Power}, c);
  EXPECT_DOUBLE_EQ(p.watts(), 160.0);
  PodSpec pod;
  pod.cpu_milli = 4000;
  pod.memory_mib = 1;
  pod.num_gpu = 1;
  pod.gpu_milli = 300;
  ASSERT_TRUE(c.allocate(0, pod, 0, 0b01).ok());
  p.update(c, 0);
  EXPECT_DOUBLE_EQ(p.watts(), 245.0 + 80.0);
  ASSERT_TRUE(c.set_online(1, false).ok());
  p.update(c, 1);
  EXPECT_DOUBLE_EQ(p.watts(), 245.0);
  EXPECT_FALSE(c.set_online(0, false).ok());  // hosts a pod
}

// Node A: one GPU half used (500 on GPU 0) and 4 vCPU used; node B: empty. Pod: 300 milli,
// 2 vCPU. On A's GPU 0 nothing new powers up (delta 0); on A's GPU 1 a GPU goes to max
// (-60 W); on B a socket and a GPU go to max (-165 W). Normalised: A 100, B 0.
class PwrTwoNodes : public ::testing::Test {
 protected:
  PwrTwoNodes() : cluster_({kT4Node, kT4Node}) {
    PodSpec p = pod(4000, 500);
    EXPECT_TRUE(cluster_.allocate(9, p, 0, 0b01).ok());
    figures_ =
        std::make_shared<const std::vector<NodePower>>(std::vector<NodePower>{kT4Power, kT4Power});
  }
  static PodSpec pod(int64_t cpu, int32_t milli) {
    return testing::test_pod("", cpu, 1, milli, 0, /*memory_mib=*/1);
  }
  policy::PolicyContext context(std::string gpu_select = {}) {
    policy::PolicyContext c;
    c.power = figures_;
    c.frag = std::make_shared<frag::FragmentationModel>(
        frag::build_target_workload(std::vector<PodSpec>{pod(2000, 300)}));
    c.shape_count = 1;
    c.gpu_select = std::move(gpu_select);
    return c;
  }
  Cluster cluster_;
  std::shared_ptr<const std::vector<NodePower>> figures_;
};

TEST_F(PwrTwoNodes, PicksTheNodeAndGpuThatAddLeastPower) {
  auto made = policy::make_policy("pwr", context());
  ASSERT_TRUE(made.ok()) << made.error();
  policy::Scheduler s(*made.value(), {1, 0});  // tie order would favour B
  Rng rng(1);
  const policy::Decision d = s.schedule(cluster_, pod(2000, 300), rng);
  ASSERT_EQ(s.last_candidates().size(), 2U);
  EXPECT_EQ(s.last_candidates()[0].raw, 0);
  EXPECT_EQ(s.last_candidates()[1].raw, -165);
  EXPECT_EQ(s.last_candidates()[0].score, 100);
  EXPECT_EQ(s.last_candidates()[1].score, 0);
  EXPECT_EQ(d.node, 0);
  EXPECT_EQ(d.gpus, 0b01U);
}

TEST_F(PwrTwoNodes, AllEqualNormalisesTo100) {
  Cluster empty({kT4Node, kT4Node});
  auto made = policy::make_policy("pwr", context());
  ASSERT_TRUE(made.ok());
  policy::Scheduler s(*made.value(), {1, 0});
  Rng rng(1);
  EXPECT_EQ(s.schedule(empty, pod(2000, 300), rng).node, 1);
  EXPECT_EQ(s.last_candidates()[0].score, 100);
  EXPECT_EQ(s.last_candidates()[1].score, 100);
}

TEST_F(PwrTwoNodes, MixIsTheWeightedSumOfNormalisedScores) {
  // pwr: A 100, B 0. bestfit raw A int(100*(1-(0.5*98000/128000+0.5*1200/8000))) = 54,
  // B int(100*(1-(0.5*102000/128000+0.5*1700/8000))) = 49; normalised A 100, B 0.
  auto made = policy::make_policy("pwr:200+bestfit:800", context());
  ASSERT_TRUE(made.ok()) << made.error();
  EXPECT_EQ(made.value()->name(), "pwr:200+bestfit:800");
  policy::Scheduler s(*made.value(), {0, 1});
  Rng rng(1);
  const policy::Decision d = s.schedule(cluster_, pod(2000, 300), rng);
  EXPECT_EQ(s.last_candidates()[0].score, 200 * 100 + 800 * 100);
  EXPECT_EQ(s.last_candidates()[1].score, 0);
  EXPECT_EQ(d.node, 0);
  // GPU by the first member (pwr) when fgd is absent: GPU 0; bestfit's rule also picks GPU 0
  // (the tightest that fits).
  EXPECT_EQ(d.gpus, 0b01U);
}

TEST_F(PwrTwoNodes, GpuSelectChoosesTheMemberRule) {
  // The mix delegates the GPU choice to the named member.
  Rng rng(1);
  for (const char* selector : {"pwr", "fgd"}) {
    auto mix = policy::make_policy("pwr:1+fgd:1", context(selector));
    auto alone = policy::make_policy(selector, context());
    ASSERT_TRUE(mix.ok() && alone.ok());
    EXPECT_EQ(mix.value()->select_gpus(cluster_, 0, pod(2000, 300), rng),
              alone.value()->select_gpus(cluster_, 0, pod(2000, 300), rng))
        << selector;
  }
  EXPECT_FALSE(policy::make_policy("pwr:1+fgd:1", context("bestfit")).ok());
  EXPECT_FALSE(policy::make_policy("pwr:x", context()).ok());
  EXPECT_FALSE(policy::make_policy("pwr:1+pwr:2", context()).ok());
  EXPECT_FALSE(policy::make_policy("pwr", policy::PolicyContext{}).ok());
}

}  // namespace
}  // namespace greensched::power
