// The learned policy: its model file is validated with errors naming the key, it is reachable
// by name through the registry, with FGD's weights it makes exactly FGD's decisions, and the
// shipped models load and run. Also: run_arrivals reproduces run_inflation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "greensched/frag/target_workload.hpp"
#include "greensched/learn/features.hpp"
#include "greensched/learn/linear_model.hpp"
#include "greensched/learn/register.hpp"
#include "greensched/learn/score_memo.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/sim/simulator.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/workload.hpp"
#include "scratch_dir.hpp"
#include "test_pod.hpp"

namespace greensched::learn {
namespace {

std::string error_of(std::string_view json) {
  auto m = parse_linear_model(json, "m.json");
  return m.ok() ? std::string("(parsed)") : m.error();
}

TEST(LearnModel, ErrorsNameTheKey) {
  EXPECT_EQ(error_of("[1]"), "m.json: the model must be a JSON object");
  EXPECT_EQ(error_of("{"), "m.json: not valid JSON");
  EXPECT_EQ(error_of(R"({"weights": {}})"), "m.json: format: missing");
  EXPECT_EQ(error_of(R"({"format": "x", "weights": {}})"),
            "m.json: format: expected \"greensched-learned-policy/1\"");
  const std::string head = R"({"format": "greensched-learned-policy/1", )";
  EXPECT_EQ(error_of(head + R"("wieghts": {}})"),
            "m.json: wieghts: unknown key (known: format, description, weights, load_weights, "
            "resolution, training)");
  EXPECT_EQ(error_of(head + R"("load_weights": {}})"), "m.json: weights: missing");
  EXPECT_NE(error_of(head + R"("weights": {"sharing": {"fgd": 1}}})")
                .find("m.json: weights.sharing.fgd: unknown feature (known: fgd_score,"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("weights": {"shared": {}}})")
                .find("m.json: weights.shared: unknown pod class (known: cpu_only, sharing"),
            std::string::npos);
  EXPECT_EQ(error_of(head + R"("weights": {"cpu_only": {}, "sharing": {}, "one_gpu": {}}})"),
            "m.json: weights.multi_gpu: missing");
  const std::string all = R"("cpu_only": {}, "sharing": {}, "one_gpu": {}, "multi_gpu": )";
  EXPECT_EQ(error_of(head + R"("weights": {)" + all + R"({"cpu_left": "x"}}})"),
            "m.json: weights.multi_gpu.cpu_left: not a finite number");
  EXPECT_EQ(error_of(head + R"("weights": {)" + all + R"({}}, "resolution": 0})"),
            "m.json: resolution: not a positive number");
  EXPECT_EQ(
      error_of(head + R"("weights": {)" + all + R"({}}, "load_weights": {"x": {}}})").substr(0, 46),
      "m.json: load_weights.x: unknown pod class (kno");
  auto ok = parse_linear_model(head + R"("weights": {)" + all + R"({"gpu_left": -0.5}}})", "m");
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(ok.value().weights[kMultiGpuPod][kGpuLeft], -0.5);
  EXPECT_EQ(ok.value().weights[kSharingPod][kGpuLeft], 0.0);  // left out: 0
}

TEST(LearnModel, SaveAndLoadRoundTrip) {
  LinearModel m = LinearModel::fgd();
  m.weights[kSharingPod][kShareOnUsedGpu] = 0.0123456789;
  m.load_weights[kOneGpuPod][kOpensNode] = -1.5;
  m.resolution = 0.02;
  m = m.rounded();
  const testing::ScratchDir scratch;
  const std::string path = scratch.file("m.json");
  ASSERT_TRUE(save_linear_model(m, path).ok());
  auto back = load_linear_model(path);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().parameters(), m.parameters());
  EXPECT_EQ(back.value().resolution, 0.02);
  EXPECT_EQ(back.value().weights[kSharingPod][kShareOnUsedGpu], 0.0123457);
  EXPECT_FALSE(load_linear_model(path + ".missing").ok());
}

TEST(LearnPolicy, RegistrySpecForms) {
  EXPECT_TRUE(register_learn_policies().ok());
  const testing::ScratchDir scratch;
  const std::string path = scratch.file("fgd.json");
  ASSERT_TRUE(save_linear_model(LinearModel::fgd(), path).ok());
  auto single = policy::parse_policy_spec("learned:" + path);
  ASSERT_TRUE(single.ok()) << single.error();
  ASSERT_EQ(single.value().size(), 1U);
  EXPECT_EQ(single.value()[0].name, "learned=" + path);
  auto mix = policy::parse_policy_spec("learned=" + path + ":300+fgd:700");
  ASSERT_TRUE(mix.ok()) << mix.error();
  ASSERT_EQ(mix.value().size(), 2U);
  EXPECT_EQ(mix.value()[0].weight, 300);
  EXPECT_EQ(mix.value()[1].name, "fgd");
  EXPECT_TRUE(sim::parse_policy_list("fgd,learned:" + path + ",fgd-online=500").ok());
  // Built-in specs behave as before.
  EXPECT_EQ(policy::parse_policy_spec("pwr:200+fgd:800").value()[0].weight, 200);
  EXPECT_FALSE(policy::parse_policy_spec("pwr:x").ok());
  EXPECT_FALSE(policy::parse_policy_spec("nope").ok());
  EXPECT_FALSE(policy::register_policy_factory("fgd", "", {}).ok());  // built-in name

  const trace::Workload w = trace::builtin_openb_workload();
  auto scenario = sim::make_scenario(w, power::PowerModel::builtin());
  ASSERT_TRUE(scenario.ok());
  auto missing =
      sim::run_inflation(scenario.value(), sim::RunSpec("learned:/nonexistent.json", 1, 0.2));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), "/nonexistent.json: cannot open the model file");
  EXPECT_FALSE(sim::run_inflation(scenario.value(), sim::RunSpec("learned", 1, 0.2)).ok());
}

// run_arrivals over the inflation sequence is run_inflation; FGD's weights are FGD.
using testing::test_pod;

// cpu_starved_gain by hand. Target: three 1-GPU pods with 8 vCPU and one half-GPU pod with
// 4 vCPU, so 28 vCPU serve 3.5 GPUs: 8 vCPU per GPU. A node with 24 vCPU and 4 free GPUs has
// CPU for 3 of them: 1 starved GPU before any placement.
TEST(ScoreMemo, ComputesEachKeyOncePerPass) {
  ScoreMemo memo;
  int computed = 0;
  const auto value_of = [&](int64_t v) {
    return [&computed, v] {
      ++computed;
      return v;
    };
  };
  memo.begin_pass(3);
  EXPECT_EQ(memo.get({1, 2, 3}, value_of(10)), 10);
  EXPECT_EQ(memo.get({1, 2, 4}, value_of(20)), 20);
  EXPECT_EQ(memo.get({1, 2, 3}, value_of(99)), 10);  // stored, not recomputed
  EXPECT_EQ(computed, 2);
  // A new pass forgets the old one.
  memo.begin_pass(3);
  EXPECT_EQ(memo.get({1, 2, 3}, value_of(30)), 30);
  EXPECT_EQ(computed, 3);
  // Many keys in one pass (colliding slots probe on): each kept apart.
  memo.begin_pass(1000);
  for (uint64_t k = 0; k < 1000; ++k) {
    EXPECT_EQ(memo.get({k % 7, k, 0}, value_of(static_cast<int64_t>(k))), static_cast<int64_t>(k));
  }
  for (uint64_t k = 0; k < 1000; ++k) {
    EXPECT_EQ(memo.get({k % 7, k, 0}, value_of(-1)), static_cast<int64_t>(k));
  }
  EXPECT_EQ(computed, 1003);
}

TEST(LearnFeatures, CpuStarvedGainByHand) {
  GpuModelRegistry models;
  const GpuModelId v100 = models.find("V100M16").value();
  std::vector<PodSpec> trace = {test_pod("", 8000, 1, 1000), test_pod("", 8000, 1, 1000),
                                test_pod("", 8000, 1, 1000), test_pod("", 4000, 1, 500)};
  const uint32_t shapes = trace::assign_shape_ids(trace);
  auto frag = std::make_shared<frag::FragmentationModel>(frag::build_target_workload(trace, 1.0));
  const std::vector<NodeSpec> nodes = {NodeSpec{"n", 24000, 65536, 4, v100}};
  auto figures = power::PowerModel::builtin().resolve(nodes, models);
  ASSERT_TRUE(figures.ok()) << figures.error();
  FeatureExtractor fx(frag, shapes,
                      std::make_shared<const std::vector<power::NodePower>>(figures.value()));
  Cluster cluster(nodes);
  const auto gain = [&](const PodSpec& pod) {
    fx.begin(cluster, pod);
    return fx.options(cluster, 0, pod).base[kCpuStarvedGain];
  };
  EXPECT_DOUBLE_EQ(gain(test_pod("", 8000, 0, 0)), -1.0);     // 16 vCPU serve 2 of 4 free GPUs
  EXPECT_DOUBLE_EQ(gain(test_pod("", 8000, 1, 1000)), 0.0);   // 16 vCPU serve 2 of 3
  EXPECT_DOUBLE_EQ(gain(test_pod("", 2000, 1, 1000)), 0.75);  // 22 vCPU serve 2.75 of 3
  EXPECT_DOUBLE_EQ(gain(test_pod("", 0, 2, 1000)), 1.0);      // 24 vCPU serve all 2 left
}

TEST(LearnPolicy, FgdWeightsMakeFgdsDecisions) {
  EXPECT_TRUE(register_learn_policies().ok());
  const trace::Workload w = trace::builtin_openb_workload();
  auto scenario = sim::make_scenario(w, power::PowerModel::builtin());
  ASSERT_TRUE(scenario.ok());
  const testing::ScratchDir scratch;
  const std::string path = scratch.file("fgd.json");
  ASSERT_TRUE(save_linear_model(LinearModel::fgd(), path).ok());
  for (uint64_t seed : {42}) {
    auto reference = sim::run_inflation(scenario.value(), sim::RunSpec("fgd", seed, 1.05));
    auto mine = sim::run_inflation(scenario.value(), sim::RunSpec("fgd", seed, 1.05));
    auto learned =
        sim::run_inflation(scenario.value(), sim::RunSpec("learned=" + path, seed, 1.05));
    ASSERT_TRUE(reference.ok() && mine.ok() && learned.ok());
    const auto& ref = reference.value();
    for (const auto* r : {&mine.value(), &learned.value()}) {
      EXPECT_EQ(r->pods_scheduled, ref.pods_scheduled);
      EXPECT_EQ(r->allocated_gpu_milli, ref.allocated_gpu_milli);
      ASSERT_EQ(r->curve.size(), ref.curve.size());
      for (std::size_t i = 0; i < ref.curve.size(); ++i) {
        EXPECT_EQ(r->curve[i].alloc_gpu_pct, ref.curve[i].alloc_gpu_pct) << i;
        EXPECT_EQ(r->curve[i].power_watts, ref.curve[i].power_watts) << i;
      }
    }
  }
}

// The shipped learned models (models/learned-*.json; models/ also holds the RL baseline's
// files) load, validate and run; each says what it was trained on.
TEST(LearnPolicy, ShippedModelsRun) {
  EXPECT_TRUE(register_learn_policies().ok());
  const std::string dir = std::string(GREENSCHED_SOURCE_DIR) + "/models";
  const trace::Workload w = trace::builtin_openb_workload();
  auto scenario = sim::make_scenario(w, power::PowerModel::builtin());
  ASSERT_TRUE(scenario.ok());
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("learned-") || entry.path().extension() != ".json") continue;
    ++models;
    auto m = load_linear_model(entry.path().string());
    ASSERT_TRUE(m.ok()) << m.error();
    ASSERT_TRUE(m.value().training.contains("traces")) << entry.path();
    for (const auto& t : m.value().training["traces"]) {
      EXPECT_EQ(t.get<std::string>().find("42-51"), std::string::npos);
    }
    const auto pool = m.value().training["seed_pool"];
    EXPECT_TRUE(pool[0].get<uint64_t>() > 51 || pool[1].get<uint64_t>() < 42) << entry.path();
    auto r = sim::run_inflation(scenario.value(),
                                sim::RunSpec("learned:" + entry.path().string(), 42, 1.0));
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_GT(r.value().pods_scheduled, 0);
  }
  EXPECT_GE(models, 1);
}

}  // namespace
}  // namespace greensched::learn
