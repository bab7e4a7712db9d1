// Today's GPUs in the built-in power model, the one spelling of a GPU model name, and the one
// rule for a model with no power figures (power::check_gpu_models).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/gpu_model.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/trace/openb_reader.hpp"

namespace greensched {
namespace {

TEST(GpuModelName, ProductStringsMapToOneName) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"H100", "H100"},
      {"h100", "H100"},
      {"H100-SXM", "H100"},
      {"H100 SXM5 80GB", "H100"},
      {"NVIDIA-H100-80GB-HBM3", "H100"},  // GPU feature discovery's label for the SXM5
      {"NVIDIA H100 80GB HBM3", "H100"},  // nvidia-smi's name
      {"H100 PCIe", "H100-PCIe"},
      {"NVIDIA-H100-PCIe", "H100-PCIe"},
      {"h100-pcie", "H100-PCIe"},
      {"NVIDIA-H100-NVL", "H100-NVL"},
      {"NVIDIA-H200", "H200"},
      {"NVIDIA H200", "H200"},
      {"NVIDIA-B200", "B200"},
      {"NVIDIA-L40S", "L40S"},
      {"NVIDIA L4", "L4"},
      {"NVIDIA-A10G", "A10G"},
      {"a10g", "A10G"},
      {"A10", "A10"},
      {"AMD Instinct MI300X", "MI300X"},
      {"mi300x", "MI300X"},
      {"NVIDIA-A100-SXM4-80GB", "A100-80G"},
      {"NVIDIA-A100-PCIE-40GB", "A100"},
      {"Tesla-V100-SXM2-16GB", "V100M16"},
      {"V100M32", "V100M32"},
      {"G2", "G2"},
      // Not a known model: kept as given (then refused for want of power figures).
      {"H800", "H800"},
      {"NVIDIA-H200-NVL", "NVIDIA-H200-NVL"},  // 600 W: not the H200 SXM's figures
  };
  for (const auto& [raw, want] : cases) EXPECT_EQ(canonical_gpu_model(raw), want) << raw;
}

TEST(GpuModelName, RegistryFindsAnySpellingAndRemembersWhereAModelWasFirstSeen) {
  GpuModelRegistry models;
  const auto h100 = models.intern("NVIDIA-H100-80GB-HBM3", "nodes.csv:2");
  ASSERT_TRUE(h100);
  EXPECT_EQ(models.name(*h100), "H100");
  EXPECT_EQ(models.find("h100-sxm"), h100);
  EXPECT_EQ(models.first_seen(*h100), "nodes.csv:2");
  EXPECT_EQ(models.intern("H100", "nodes.csv:9"), h100);
  EXPECT_EQ(models.first_seen(*h100), "nodes.csv:2");  // the first node keeps it
  const std::size_t before = models.size();
  const auto custom = models.intern("X900", "nodes.csv:5");
  ASSERT_TRUE(custom);
  EXPECT_EQ(models.size(), before + 1);
  EXPECT_EQ(models.find("x900"), custom);  // an interned name is matched ignoring case too
  EXPECT_EQ(models.find("ACME-X900-PCIe"), custom);
  EXPECT_FALSE(models.find("X901"));
}

TEST(GpuModelName, NodeListReaderUsesTheOneSpellingAndNamesTheLine) {
  GpuModelRegistry models;
  auto nodes = trace::parse_openb_nodes(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "a,64000,262144,8,NVIDIA-H100-80GB-HBM3\n"
      "b,64000,262144,8,H100-SXM\n"
      "c,64000,262144,4,h800\n",
      "nodes.csv", models);
  ASSERT_TRUE(nodes.ok()) << nodes.error();
  EXPECT_EQ(nodes.value()[0].model, nodes.value()[1].model);
  EXPECT_EQ(models.name(nodes.value()[0].model), "H100");
  EXPECT_EQ(models.first_seen(nodes.value()[0].model), "nodes.csv:2");
  EXPECT_EQ(models.first_seen(nodes.value()[2].model), "nodes.csv:4");
}

// Every GPU the built-in model lists: figures in range, and a named source for today's GPUs.
TEST(BuiltinPowerModel, TodaysGpusHaveFiguresAndEveryBuiltinNameResolves) {
  const power::PowerModel model = power::PowerModel::builtin();
  struct Want {
    const char* name;
    double idle, max;
  };
  // max: the maker's board power; idle: measured (H100, H200) or 10 % of max.
  for (const Want& w : std::vector<Want>{{"H100", 71, 700},
                                         {"H100-PCIe", 35, 350},
                                         {"H100-NVL", 40, 400},
                                         {"H200", 80, 700},
                                         {"B200", 100, 1000},
                                         {"L40S", 35, 350},
                                         {"L4", 7, 72},
                                         {"A10G", 30, 300},
                                         {"A40", 30, 300},
                                         {"MI300X", 75, 750},
                                         {"A100-80G", 50, 400}}) {
    auto g = model.gpu(w.name);
    ASSERT_TRUE(g) << w.name;
    EXPECT_DOUBLE_EQ(g->idle_watts, w.idle) << w.name;
    EXPECT_DOUBLE_EQ(g->max_watts, w.max) << w.name;
  }
  // Any spelling of a model finds its figures.
  ASSERT_TRUE(model.gpu("NVIDIA-H100-80GB-HBM3"));
  EXPECT_DOUBLE_EQ(model.gpu("NVIDIA-H100-80GB-HBM3")->max_watts, 700);
  EXPECT_DOUBLE_EQ(model.gpu("H100 PCIe")->max_watts, 350);
  // Property: every model the registry starts with has figures, but G1 and A30 (no source).
  for (std::string_view name : builtin_gpu_model_names()) {
    if (name == "G1" || name == "A30") {
      EXPECT_FALSE(model.gpu(name)) << name;
      continue;
    }
    auto g = model.gpu(name);
    ASSERT_TRUE(g) << name;
    EXPECT_GT(g->idle_watts, 0) << name;
    EXPECT_LT(g->idle_watts, g->max_watts) << name;
  }
}

// A tiny cluster of today's GPUs, by hand. Default CPU: Xeon E5-2682 v4, 15 W idle / 120 W
// max a socket of 16 cores; 64 vCPU = 32 cores = 2 sockets.
TEST(BuiltinPowerModel, TinyClusterIdleAndFullLoadByHand) {
  const power::PowerModel model = power::PowerModel::builtin();
  GpuModelRegistry models;
  std::vector<NodeSpec> nodes;
  const std::vector<std::pair<const char*, int>> kinds = {
      {"H100", 8}, {"H200", 8}, {"B200", 8}, {"L40S", 4}, {"MI300X", 8}};
  for (const auto& [name, gpus] : kinds) {
    nodes.push_back(NodeSpec{name, 64000, 1 << 20, gpus, *models.intern(name)});
  }
  auto figures = model.resolve(nodes, models);
  ASSERT_TRUE(figures.ok()) << figures.error();
  Cluster cluster(nodes);
  power::ClusterPower power(figures.value(), cluster);
  // Idle: GPUs at idle, 2 idle sockets (30 W) a node.
  //   H100 8 x 71 = 568, H200 8 x 80 = 640, B200 8 x 100 = 800, L40S 4 x 35 = 140,
  //   MI300X 8 x 75 = 600; GPUs 2748 W + CPUs 5 x 30 W = 2898 W.
  EXPECT_DOUBLE_EQ(power.watts(), 2898.0);
  EXPECT_DOUBLE_EQ(power.node_watts(0), 598.0);
  // Full: every GPU and every socket allocated.
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(nodes.size()); ++n) {
    PodSpec pod;
    pod.cpu_milli = 64000;
    pod.memory_mib = 1;
    pod.num_gpu = nodes[n].gpu_count;
    pod.gpu_milli = 1000;
    ASSERT_TRUE(cluster.allocate(n, pod, n, (GpuMask{1} << nodes[n].gpu_count) - 1).ok());
    power.update(cluster, n);
  }
  //   H100 5600, H200 5600, B200 8000, L40S 1400, MI300X 6000: GPUs 26600 W;
  //   CPUs 5 x 2 x 120 = 1200 W.
  EXPECT_DOUBLE_EQ(power.watts(), 27800.0);
  EXPECT_DOUBLE_EQ(power.node_watts(0), 5840.0);
}

TEST(PowerModelFile, GpuKeysAreReadInTheOneSpelling) {
  const char* cpus = R"("cpus": {"a": {"idle_watts": 1, "max_watts": 2, "cores_per_socket": 4}},
                        "default_cpu": "a")";
  auto m = power::PowerModel::parse(
      std::string(R"({"gpus": {"NVIDIA-H100-80GB-HBM3": {"idle_watts": 60, "max_watts": 650,
                                                         "source": "our meter"},
                               "h800": {"same_as": "nvidia-h100-80gb-hbm3"}}, )") +
          cpus + "}",
      "m.json");
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_DOUBLE_EQ(m.value().gpu("H100")->max_watts, 650);
  EXPECT_DOUBLE_EQ(m.value().gpu("H800")->idle_watts, 60);
  // A name no built-in spelling knows keeps the file's spelling, and is found ignoring case.
  EXPECT_EQ(m.value().gpu_names(), (std::vector<std::string>{"H100", "h800"}));
  // Two keys for one model are refused.
  auto twice =
      power::PowerModel::parse(std::string(R"({"gpus": {"H100": {"idle_watts": 1, "max_watts": 2},
                               "H100-SXM": {"idle_watts": 1, "max_watts": 3}}, )") +
                                   cpus + "}",
                               "m.json");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().find("m.json: gpus.H100-SXM: names the same GPU model as gpus.H100"),
            std::string::npos)
      << twice.error();
  auto bad_source = power::PowerModel::parse(
      std::string(R"({"gpus": {"H100": {"idle_watts": 1, "max_watts": 2, "source": 7}}, )") + cpus +
          "}",
      "m.json");
  ASSERT_FALSE(bad_source.ok());
  EXPECT_NE(bad_source.error().find("gpus.H100.source: expected a string"), std::string::npos);
}

TEST(UnknownGpuModel, RefusedNamingTheLineTheKnownModelsAndTheFix) {
  GpuModelRegistry models;
  auto nodes = trace::parse_openb_nodes(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "a,64000,262144,8,H100\n"
      "cpu,64000,262144,0,\n"
      "b,64000,262144,8,H800\n"
      "c,64000,262144,8,H800\n",
      "nodes.csv", models);
  ASSERT_TRUE(nodes.ok()) << nodes.error();
  const power::PowerModel model = power::PowerModel::builtin();
  const Status s = power::check_gpu_models(model, nodes.value(), models, "--power-model FILE");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("nodes.csv:4: unknown GPU model \"H800\" (no figures in the "
                              "built-in power model); known: A10, A100, A100-80G, A10G, A40, B200,",
                              0),
            0u)
      << s.message();
  EXPECT_NE(s.message().find("; add it with --power-model FILE (an entry in \"gpus\""),
            std::string::npos)
      << s.message();
  // resolve() refuses the same node with the same words.
  auto resolved = model.resolve(nodes.value(), models);
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.error().find("nodes.csv:4: unknown GPU model \"H800\""), std::string::npos);
  // With figures for it (same_as), every node passes; CPU-only nodes never need GPU figures.
  auto with_h800 = power::PowerModel::parse(R"({"gpus": {"H100": {"idle_watts": 71,
      "max_watts": 700}, "H800": {"same_as": "H100"}}, "cpus": {"a": {"idle_watts": 1,
      "max_watts": 2, "cores_per_socket": 4}}, "default_cpu": "a"})",
                                            "m.json");
  ASSERT_TRUE(with_h800.ok()) << with_h800.error();
  EXPECT_TRUE(power::check_gpu_models(with_h800.value(), nodes.value(), models, "x").ok());
  // A node override naming figures makes the model's own entry unneeded.
  auto by_node = power::PowerModel::parse(R"({"gpus": {"H100": {"idle_watts": 71,
      "max_watts": 700}}, "cpus": {"a": {"idle_watts": 1, "max_watts": 2,
      "cores_per_socket": 4}}, "default_cpu": "a", "node_types": [{"gpu_model": "H800",
      "gpu": "H100"}]})",
                                          "m.json");
  ASSERT_TRUE(by_node.ok()) << by_node.error();
  EXPECT_TRUE(power::check_gpu_models(by_node.value(), nodes.value(), models, "x").ok());
}

}  // namespace
}  // namespace greensched
