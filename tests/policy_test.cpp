// Each policy's choice on a small cluster, with the scores computed by hand.
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include <fmt/format.h>

#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/filter.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "test_pod.hpp"

namespace greensched::policy {
namespace {

PodSpec pod(int64_t cpu, int num_gpu, int32_t milli, GpuModelSet spec = 0) {
  return testing::test_pod("", cpu, num_gpu, milli, spec, /*memory_mib=*/1000);
}

// Three T4 nodes (model id 0):
//   A: 2 GPUs, free [1000, 400] (a sharing pod of 600 on GPU 1), CPU free 28000 of 32000
//   B: 4 GPUs, all free, CPU free 64000
//   C: 2 GPUs, free [200, 1000] (a sharing pod of 800 on GPU 0), CPU free 14000 of 16000
// The pod to place: 300 milli of one GPU, 2000 CPU.
class ThreeNodes : public ::testing::Test {
 protected:
  ThreeNodes()
      : cluster_({NodeSpec{"A", 32000, 64000, 2, 0}, NodeSpec{"B", 64000, 64000, 4, 0},
                  NodeSpec{"C", 16000, 64000, 2, 0}}) {
    EXPECT_TRUE(cluster_.allocate(100, pod(4000, 1, 600), 0, 0b10).ok());
    EXPECT_TRUE(cluster_.allocate(101, pod(2000, 1, 800), 2, 0b01).ok());
  }

  Decision place(std::string_view name, const PodSpec& p, std::vector<uint32_t> rank = {0, 1, 2},
                 std::shared_ptr<frag::FragmentationModel> model = nullptr) {
    PolicyContext context;
    context.frag = std::move(model);
    context.shape_count = 1;
    auto made = make_policy(name, context);
    EXPECT_TRUE(made.ok());
    policy_ = std::move(made.value());
    Scheduler s(*policy_, std::move(rank));
    Rng rng(1);
    Decision d = s.schedule(cluster_, p, rng);
    for (const Candidate& c : s.last_candidates()) scores_[c.node] = c.score;
    return d;
  }

  Cluster cluster_;
  std::unique_ptr<Policy> policy_;
  std::map<NodeIndex, int64_t> scores_;
  const PodSpec shared_ = pod(2000, 1, 300);
};

TEST_F(ThreeNodes, BestFitNormalisesAndPicksTightestNode) {
  // raw: A int(100 * (1 - (0.5*26000/128000 + 0.5*1100/8000))) = 82, B 52, C 89;
  // min-max: A (82-52)*100/37 = 81, B 0, C 100.
  const Decision d = place("bestfit", shared_);
  EXPECT_EQ(scores_[0], 81);
  EXPECT_EQ(scores_[1], 0);
  EXPECT_EQ(scores_[2], 100);
  EXPECT_EQ(d.node, 2);
  EXPECT_EQ(d.gpus, 0b10U);  // GPU 0 of C has only 200 left
}

TEST_F(ThreeNodes, DotProductTieGoesToTieOrder) {
  // A: int(100 * (1 - (0.21875*0.015625 + 0.175*0.0375) / 2)) = 99, B 98, C 99.
  Decision d = place("dotprod", shared_);
  EXPECT_EQ(scores_[0], 99);
  EXPECT_EQ(scores_[1], 98);
  EXPECT_EQ(scores_[2], 99);
  EXPECT_EQ(d.node, 0);
  EXPECT_EQ(d.gpus, 0b10U);  // tightest GPU that fits: 400 left on GPU 1
  d = place("dotprod", shared_, {2, 1, 0});
  EXPECT_EQ(d.node, 2);
}

TEST_F(ThreeNodes, GpuPackingPrefersPartlyUsedGpu) {
  // A fits on partly used GPU 1: 100 - (400*100/1000)/10 = 96; B all free: max(33-4, 4) = 29;
  // C must use its whole free GPU: max(50-1, 33) = 49.
  const Decision d = place("packing", shared_);
  EXPECT_EQ(scores_[0], 96);
  EXPECT_EQ(scores_[1], 29);
  EXPECT_EQ(scores_[2], 49);
  EXPECT_EQ(d.node, 0);
}

TEST_F(ThreeNodes, GpuClusteringGroupsSameTag) {
  // A hosts only sharing pods: 25*(8000-1400)/8000 = 20, +75 = 95; B empty: 12 + 25 = 37;
  // C only sharing pods: 25*6800/8000 = 21, +75 = 96.
  Decision d = place("clustering", shared_);
  EXPECT_EQ(scores_[0], 95);
  EXPECT_EQ(scores_[1], 37);
  EXPECT_EQ(scores_[2], 96);
  EXPECT_EQ(d.node, 2);
  // A whole-GPU pod has another tag: A and C host only other tags (0 bonus), B is empty.
  d = place("clustering", pod(1000, 1, 1000));
  EXPECT_EQ(scores_[0], 20);
  EXPECT_EQ(scores_[1], 37);
  EXPECT_EQ(scores_[2], 21);
  EXPECT_EQ(d.node, 1);
  // CPU-only pods score 0 everywhere; the tie order decides.
  d = place("clustering", pod(1000, 0, 0), {1, 0, 2});
  EXPECT_EQ(d.node, 1);
}

TEST_F(ThreeNodes, FgdMinimisesFragmentationAndPicksTheGpu) {
  // Target workload: one shape, 600 milli on one GPU with 2000 CPU.
  std::vector<PodSpec> target_pods = {pod(2000, 1, 600)};
  auto model = std::make_shared<frag::FragmentationModel>(frag::build_target_workload(target_pods));
  // A: F before = 400 (GPU 1 cannot host 600). On GPU 1 -> [1000, 100]: F = 100,
  //    score int(100 * sigmoid(0.3)) = 57; on GPU 0 -> [700, 400]: F = 400, score 50.
  // B: 0 -> 0, score 50.  C: 200 -> 200, score 50.
  const Decision d = place("fgd", shared_, {2, 1, 0}, model);
  EXPECT_EQ(scores_[0], 57);
  EXPECT_EQ(scores_[1], 50);
  EXPECT_EQ(scores_[2], 50);
  EXPECT_EQ(d.node, 0);
  EXPECT_EQ(d.gpus, 0b10U);
}

TEST_F(ThreeNodes, FgdKeepsFirstGpuAmongEqualScores) {
  // On B every GPU gives the same score; the first index wins.
  std::vector<PodSpec> target_pods = {pod(2000, 1, 600)};
  auto model = std::make_shared<frag::FragmentationModel>(frag::build_target_workload(target_pods));
  PolicyContext context;
  context.frag = model;
  context.shape_count = 1;
  auto made = make_policy("fgd", context);
  ASSERT_TRUE(made.ok());
  Rng rng(1);
  EXPECT_EQ(made.value()->select_gpus(cluster_, 1, shared_, rng), 0b1U);
}

TEST_F(ThreeNodes, RandomPicksOnlyFeasibleNodesAndAllOfThem) {
  std::set<NodeIndex> chosen;
  auto made = make_policy("random", {});
  ASSERT_TRUE(made.ok());
  Scheduler s(*made.value(), {0, 1, 2});
  const PodSpec two_gpus = pod(1000, 2, 1000);  // only B has two whole GPUs
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed);
    chosen.insert(s.schedule(cluster_, shared_, rng).node);
    EXPECT_EQ(s.schedule(cluster_, two_gpus, rng).node, 1);
  }
  EXPECT_EQ(chosen, (std::set<NodeIndex>{0, 1, 2}));
}

TEST_F(ThreeNodes, FilterReasons) {
  const NodeSpec& a = cluster_.spec(0);
  const NodeState& sa = cluster_.state(0);
  EXPECT_EQ(filter_node(a, sa, shared_), FilterReason::kFits);
  EXPECT_EQ(filter_node(a, sa, pod(2000, 2, 1000)), FilterReason::kInsufficientWholeGpus);
  EXPECT_EQ(filter_node(cluster_.spec(2), cluster_.state(2), pod(100, 1, 900)),
            FilterReason::kFits);
  EXPECT_EQ(filter_node(cluster_.spec(2), cluster_.state(2), pod(100, 2, 1000)),
            FilterReason::kInsufficientWholeGpus);
  EXPECT_EQ(filter_node(a, sa, pod(29000, 0, 0)), FilterReason::kInsufficientCpu);
  PodSpec big_memory = shared_;
  big_memory.memory_mib = 70000;
  EXPECT_EQ(filter_node(a, sa, big_memory), FilterReason::kInsufficientMemory);
  EXPECT_EQ(filter_node(a, sa, pod(100, 1, 500, GpuModelSet{1} << 6)),
            FilterReason::kGpuModelNotAllowed);
  EXPECT_EQ(filter_node(a, sa, pod(100, 1, 500, (GpuModelSet{1} << 6) | 1)), FilterReason::kFits);
  // D's only GPU has 700 left after a 300 share; E has no GPU.
  Cluster c({NodeSpec{"D", 8000, 8000, 1, 0}, NodeSpec{"E", 8000, 8000, 0, kNoGpuModel}});
  ASSERT_TRUE(c.allocate(1, pod(100, 1, 300), 0, 1).ok());
  EXPECT_EQ(filter_node(c.spec(0), c.state(0), pod(100, 1, 800)),
            FilterReason::kInsufficientGpuShare);
  EXPECT_EQ(filter_node(c.spec(1), c.state(1), pod(100, 1, 800)), FilterReason::kNoGpu);
}

TEST_F(ThreeNodes, MultiGpuPodTakesFirstWholeGpus) {
  const Decision d = place("bestfit", pod(1000, 2, 1000));
  EXPECT_EQ(d.node, 1);
  EXPECT_EQ(d.gpus, 0b11U);
  EXPECT_EQ(d.feasible_nodes, 1);
}

TEST_F(ThreeNodes, NoFeasibleNode) {
  const Decision d = place("fgd", pod(1000, 8, 1000), {0, 1, 2},
                           std::make_shared<frag::FragmentationModel>(frag::TargetWorkload{}));
  EXPECT_EQ(d.node, -1);
  EXPECT_EQ(d.feasible_nodes, 0);
}

TEST(Registry, UnknownPolicyIsAnErrorListingKnownOnes) {
  auto made = make_policy("nope", {});
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().find("fgd"), std::string::npos);
  EXPECT_FALSE(make_policy("fgd", {}).ok());  // needs a fragmentation model
  EXPECT_EQ(policy_catalog().size(), 8U);
}

TEST(TieRank, IsAPermutation) {
  Rng rng(3);
  std::vector<uint32_t> rank = random_tie_rank(100, rng);
  std::set<uint32_t> unique(rank.begin(), rank.end());
  EXPECT_EQ(unique.size(), 100U);
  EXPECT_EQ(*unique.rbegin(), 99U);
}

}  // namespace
}  // namespace greensched::policy

namespace greensched::policy {
namespace {

// The scheduler's column pass agrees with filter_node on random states and pods, and the
// cluster's free GPU share per model with the sum over its nodes.
TEST(FilterFastPath, AgreesWithFilterNodeOnRandomStates) {
  Rng rng(11);
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 40; ++i) {
    nodes.push_back(NodeSpec{fmt::format("n{}", i), int64_t{8000} * (1 + i % 4),
                             int64_t{16000} * (1 + i % 3), static_cast<int>(rng.uniform(9)),
                             static_cast<GpuModelId>(rng.uniform(3))});
    if (nodes.back().gpu_count == 0) nodes.back().model = kNoGpuModel;
  }
  Cluster c(nodes);
  PodId next = 0;
  for (int step = 0; step < 3000; ++step) {
    PodSpec p;
    p.cpu_milli = static_cast<int64_t>(rng.uniform(12000));
    p.memory_mib = static_cast<int64_t>(rng.uniform(20000));
    const uint64_t kind = rng.uniform(4);
    p.num_gpu = kind == 0 ? 0 : kind == 1 ? 1 : static_cast<int>(1 + rng.uniform(8));
    p.gpu_milli = kind == 0 ? 0 : kind == 1 ? static_cast<int32_t>(1 + rng.uniform(999)) : 1000;
    p.gpu_spec = rng.uniform(4) == 0 ? GpuModelSet{1} << rng.uniform(3) : 0;
    if (rng.uniform(50) == 0) p.memory_mib = int64_t{1} << 40;  // beyond the 32-bit columns
    std::vector<NodeIndex> expected, fitting(c.size());
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
      if (filter_node(c.spec(n), c.state(n), p) == FilterReason::kFits) expected.push_back(n);
    }
    fitting.resize(fitting_nodes(c, p, fitting));
    ASSERT_EQ(fitting, expected) << "step " << step;
    std::array<int64_t, 3> free_by_model{};
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
      if (c.spec(n).model != kNoGpuModel) {
        free_by_model[c.spec(n).model] += c.state(n).gpu_free_total_milli;
      }
    }
    for (GpuModelId m = 0; m < 3; ++m) {
      ASSERT_EQ(c.free_gpu_milli_of_model(m), free_by_model[m]) << "model " << int{m};
    }
    // Change the cluster: place the pod somewhere it fits, free a pod, or flip a node.
    const auto n = static_cast<NodeIndex>(rng.uniform(c.size()));
    if (rng.uniform(5) == 0 && c.state(n).pods == 0) {
      ASSERT_TRUE(c.set_online(n, !c.state(n).online).ok());
    } else if (filter_node(c.spec(n), c.state(n), p) == FilterReason::kFits) {
      GpuMask mask = 0;
      if (p.needs_gpu()) {
        for (int g = 0, taken = 0; g < c.spec(n).gpu_count && taken < p.num_gpu; ++g) {
          if (c.state(n).gpu_free_milli[g] >= p.gpu_milli) {
            mask |= GpuMask{1} << g;
            ++taken;
          }
        }
      }
      ASSERT_TRUE(c.allocate(next++, p, n, mask).ok());
    } else if (next > 0) {
      (void)c.release(static_cast<PodId>(rng.uniform(next)));
    }
  }
}

}  // namespace
}  // namespace greensched::policy

namespace greensched::policy {
namespace {

// Min-max normalisation: (raw - low) * 100 / (high - low), truncated; all equal gives
// `all_equal`. Small and huge ranges (the 32-bit and 64-bit division paths) agree with it.
TEST(NormalizeMinMax, HandComputedAndBothRanges) {
  std::vector<Candidate> c(3);
  c[0].raw = -7;
  c[1].raw = 3;
  c[2].raw = 0;
  normalize_min_max(c);
  EXPECT_EQ(c[0].score, 0);
  EXPECT_EQ(c[1].score, 100);
  EXPECT_EQ(c[2].score, 70);  // 7 * 100 / 10
  for (Candidate& x : c) x.raw = 5;
  normalize_min_max(c, 42);
  EXPECT_EQ(c[1].score, 42);
  Rng rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t span = trial % 2 == 0 ? int64_t{1000} : int64_t{1} << 50;
    std::vector<Candidate> v(1 + rng.uniform(20));
    for (Candidate& x : v) x.raw = static_cast<int64_t>(rng.uniform(span)) - span / 2;
    normalize_min_max(v);
    int64_t low = v[0].raw, high = v[0].raw;
    for (const Candidate& x : v) low = std::min(low, x.raw), high = std::max(high, x.raw);
    for (const Candidate& x : v) {
      ASSERT_EQ(x.score, high == low ? 0 : (x.raw - low) * 100 / (high - low));
    }
  }
}

}  // namespace
}  // namespace greensched::policy
