// Training smoke test: on a small cluster where FGD cannot see what matters (memory: half the
// pods need a big-memory node, and FGD places the others at random among equal scores), a few
// CEM generations must find weights that beat FGD. Also: a resumed training ends exactly where
// an uninterrupted one does.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "greensched/learn/trainer.hpp"
#include "greensched/trace/workload.hpp"
#include "scratch_dir.hpp"

namespace greensched::learn {
namespace {

// 10 nodes with 256 GiB and 10 with 32 GiB, 2 GPUs each; 20 pods of one GPU and 117 GiB (two
// fit a big node) and 20 of one GPU and 8 GiB. Everything fits only if the small pods leave
// the big nodes to the big pods.
trace::Workload memory_trap() {
  trace::Workload w;
  const GpuModelId v100 = *w.models.find("V100M16");
  for (int i = 0; i < 10; ++i) {
    w.nodes.push_back(NodeSpec{"big" + std::to_string(i), 64000, 262144, 2, v100});
    w.nodes.push_back(NodeSpec{"small" + std::to_string(i), 64000, 32768, 2, v100});
  }
  for (int i = 0; i < 20; ++i) {
    PodSpec big;
    big.name = "big" + std::to_string(i);
    big.cpu_milli = 4000;
    big.memory_mib = 120000;
    big.num_gpu = 1;
    big.gpu_milli = 1000;
    PodSpec small = big;
    small.name = "small" + std::to_string(i);
    small.memory_mib = 8192;
    w.pods.push_back(big);
    w.pods.push_back(small);
  }
  w.shape_count = trace::assign_shape_ids(w.pods);
  return w;
}

TrainOptions smoke_options() {
  TrainOptions o;
  o.trace_names = {"memory-trap"};
  o.generations = 4;
  o.pairs = 4;
  o.cem.population = 8;
  o.cem.elite = 2;
  o.init_sigma = 0.05;
  o.resolution = 1e-6;
  o.seed = 3;
  o.seed_low = 1000;
  o.seed_high = 1999;
  o.jobs = 2;
  return o;
}

TEST(LearnTrain, SmokeTrainingBeatsTheInitialWeights) {
  const trace::Workload w = memory_trap();
  const TrainOptions o = smoke_options();
  auto r = train({&w}, o, nullptr, "");
  ASSERT_TRUE(r.ok()) << r.error();
  const TrainResult& result = r.value();
  ASSERT_EQ(result.checkpoint.history.size(), 4U);
  EXPECT_EQ(result.checkpoint.history.front().mean_model, 0.0);  // starts as FGD
  EXPECT_GT(result.checkpoint.history.back().mean_model, 1.0);   // > 1 point over FGD
  EXPECT_GT(result.trainable, 0);
  EXPECT_LT(result.trainable, static_cast<int>(LinearModel::kParameterCount));  // some frozen
  // On seeds it never saw, the trained model allocates more than FGD.
  double fgd = 0, learned = 0;
  for (uint64_t seed = 5000; seed < 5006; ++seed) {
    fgd += score_run(w, nullptr, seed, 1.01).value().alloc_pct;
    learned += score_run(w, &result.model, seed, 1.01).value().alloc_pct;
  }
  EXPECT_GT(learned, fgd + 6.0);  // mean over 6 seeds: at least one point better
  EXPECT_TRUE(result.model.training.contains("mean_model_objective_by_generation"));
}

TEST(LearnTrain, ResumedTrainingEqualsUninterrupted) {
  const trace::Workload w = memory_trap();
  TrainOptions o = smoke_options();
  o.generations = 2;
  auto straight = train({&w}, o, nullptr, "");
  ASSERT_TRUE(straight.ok()) << straight.error();

  const testing::ScratchDir scratch;
  const std::string ckpt = scratch.file("ckpt.json");
  TrainOptions first = o;
  first.generations = 1;
  auto part = train({&w}, first, nullptr, ckpt);
  ASSERT_TRUE(part.ok()) << part.error();
  // The generation count is not part of what must match; everything else is.
  auto loaded = load_checkpoint(ckpt);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded.value().state.generation, 1);
  auto resumed = train({&w}, o, &loaded.value(), ckpt);
  ASSERT_TRUE(resumed.ok()) << resumed.error();
  EXPECT_EQ(resumed.value().checkpoint.state.mean, straight.value().checkpoint.state.mean);
  EXPECT_EQ(resumed.value().checkpoint.state.sigma, straight.value().checkpoint.state.sigma);
  ASSERT_EQ(resumed.value().checkpoint.history.size(), 2U);
  EXPECT_EQ(resumed.value().checkpoint.history[1].mean_model,
            straight.value().checkpoint.history[1].mean_model);

  TrainOptions other = o;
  other.seed = 4;
  EXPECT_FALSE(train({&w}, other, &loaded.value(), "").ok());  // options differ
  TrainOptions reserved = o;
  reserved.seed_low = 40;
  reserved.seed_high = 60;
  auto refused = train({&w}, reserved, nullptr, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("42-51"), std::string::npos);
}

}  // namespace
}  // namespace greensched::learn
