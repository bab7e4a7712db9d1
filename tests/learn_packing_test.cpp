// The offline packing beside the allocation bound: hand-made clusters whose best packing is
// worked out by hand, and properties on random small instances (never above the bound or the
// requests, every placement valid on a fresh cluster, the same packing every time).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/learn/bound.hpp"
#include "greensched/learn/offline_packing.hpp"
#include "greensched/trace/workload.hpp"
#include "test_pod.hpp"

namespace greensched::learn {
namespace {

using testing::test_pod;

GpuModelId model_of(const trace::Workload& w, const char* name) {
  return *w.models.find(name);
}

NodeSpec gpu_node(std::string name, int64_t cpu, int gpus, GpuModelId m) {
  return NodeSpec{std::move(name), cpu, 262144, gpus, m};
}

OfflinePacking pack(const trace::Workload& w, bool repair = true) {
  PackingOptions o;
  o.repair = repair;
  auto p = pack_offline(w.nodes, w.pods, o);
  EXPECT_TRUE(p.ok()) << p.error();
  return p.ok() ? p.value() : OfflinePacking();
}

int64_t method_milli(const OfflinePacking& p, const std::string& name) {
  for (const PackingMethod& m : p.methods) {
    if (m.name == name) return m.allocated_gpu_milli;
  }
  ADD_FAILURE() << "no method " << name;
  return -1;
}

double lp_bound(const trace::Workload& w, bool integer = false) {
  BoundOptions o;
  o.integer = integer;
  auto b = allocation_upper_bound(w.nodes, w.pods, o);
  EXPECT_TRUE(b.ok()) << b.error();
  return b.ok() ? b.value().upper_bound_gpu_milli : -1;
}

TEST(LearnPacking, MethodsInOrder) {
  const auto names = packing_method_names();
  ASSERT_EQ(names.size(), 3U);
  EXPECT_EQ(names[0], "bfd");
  EXPECT_EQ(names[1], "fgd-sorted");
  EXPECT_EQ(names[2], "lp-rounding");
}

// Two nodes of two GPUs; pods of 0.5, 1, 0.5 and 2 GPUs arrive in that order. Taking the
// emptier node each time strands the 2-GPU pod (0.5 on a, 1 on b, 0.5 on a: no node has two
// free GPUs left). Largest first, the 2-GPU pod takes a node, the 1-GPU pod and both halves
// (on one GPU, the tightest) the other: everything, 4000 milli, which is the bound.
TEST(LearnPacking, LargestFirstPacksWhatOnlineOrderFragments) {
  trace::Workload w;
  const GpuModelId t4 = model_of(w, "T4");
  w.nodes = {gpu_node("a", 32000, 2, t4), gpu_node("b", 32000, 2, t4)};
  w.pods = {test_pod("half-1", 1000, 1, 500), test_pod("one", 1000, 1, 1000),
            test_pod("half-2", 1000, 1, 500), test_pod("two", 1000, 2, 1000)};
  const OfflinePacking p = pack(w, false);
  ASSERT_EQ(p.methods.size(), 3U);
  EXPECT_EQ(p.cluster_gpu_milli, 4000);
  EXPECT_EQ(p.requested_gpu_milli, 4000);
  for (const PackingMethod& m : p.methods) {
    EXPECT_EQ(m.allocated_gpu_milli, 4000) << m.name;
    EXPECT_EQ(m.pods_placed, 4) << m.name;
  }
  EXPECT_EQ(p.best, 0U);  // bfd, the first among equals
  EXPECT_DOUBLE_EQ(p.alloc_pct(), 100.0);
  EXPECT_NEAR(lp_bound(w), 4000, 1.0);
  // Best fit: the two halves share one GPU of the node the 1-GPU pod is on.
  const PackingMethod& bfd = p.methods[0];
  ASSERT_EQ(bfd.placements.size(), 4U);
  EXPECT_EQ(bfd.placements[0].node, bfd.placements[2].node);
  EXPECT_EQ(bfd.placements[0].gpus, bfd.placements[2].gpus);
  EXPECT_NE(bfd.placements[3].node, bfd.placements[1].node);
}

// One node of 10 cores and two GPUs: two 1-GPU pods of 6 cores cannot both have it; the best
// is one of them and the 0.6-GPU pod of 4 cores, 1600 milli, as the bound says.
TEST(LearnPacking, CpuBindsOnOneNode) {
  trace::Workload w;
  w.nodes = {gpu_node("n", 10000, 2, model_of(w, "T4"))};
  w.pods = {test_pod("", 6000, 1, 1000), test_pod("", 6000, 1, 1000), test_pod("", 4000, 1, 600)};
  const OfflinePacking p = pack(w);
  for (const PackingMethod& m : p.methods) {
    EXPECT_EQ(m.allocated_gpu_milli, 1600) << m.name;
    EXPECT_EQ(m.pods_placed, 2) << m.name;
  }
  EXPECT_NEAR(lp_bound(w), 1600, 1.0);
}

// Two nodes of two GPUs, 8 and 16 cores; two 1-GPU pods of 8 cores and two of 2 cores. Best
// fit puts the first 8-core pod on the 8-core node (equal free GPUs, less free CPU), which
// leaves that node's second GPU without CPU: 3000 milli. The 8-core pods together on the
// 16-core node and the 2-core pods on the other take all four GPUs, the bound's 4000.
TEST(LearnPacking, CpuStrandsAGpuUnderBestFit) {
  trace::Workload w;
  const GpuModelId t4 = model_of(w, "T4");
  w.nodes = {gpu_node("small", 8000, 2, t4), gpu_node("large", 16000, 2, t4)};
  w.pods = {test_pod("", 8000, 1, 1000), test_pod("", 8000, 1, 1000), test_pod("", 2000, 1, 1000),
            test_pod("", 2000, 1, 1000)};
  EXPECT_EQ(method_milli(pack(w, false), "bfd"), 3000);
  const OfflinePacking p = pack(w);
  EXPECT_GE(p.allocated_gpu_milli(), 3000);
  EXPECT_LE(static_cast<double>(p.allocated_gpu_milli()), lp_bound(w));
  EXPECT_NEAR(lp_bound(w), 4000, 1.0);
}

// A 1-GPU pod restricted to V100M16 and a larger (more CPU) one that takes any model; one V100
// node (listed first) and one T4 node. Best fit alone gives the V100 to the unrestricted pod
// (a tie broken by node order) and strands the restricted one: 1000 milli. The repair pass
// moves the unrestricted pod to the T4 to make room: 2000. The LP puts each shape on its
// model, so its rounding needs no repair.
TEST(LearnPacking, GpuModelRestrictionRepairedByAMove) {
  trace::Workload w;
  const GpuModelId v100 = model_of(w, "V100M16");
  w.nodes = {gpu_node("v100", 32000, 1, v100), gpu_node("t4", 32000, 1, model_of(w, "T4"))};
  w.pods = {test_pod("any", 4000, 1, 1000),
            test_pod("v100-only", 2000, 1, 1000, GpuModelSet{1} << v100)};
  const OfflinePacking heuristics = pack(w, false);
  EXPECT_EQ(method_milli(heuristics, "bfd"), 1000);
  EXPECT_EQ(method_milli(heuristics, "lp-rounding"), 2000);
  const OfflinePacking p = pack(w);
  for (const PackingMethod& m : p.methods) EXPECT_EQ(m.allocated_gpu_milli, 2000) << m.name;
  EXPECT_EQ(p.methods[0].heuristic_gpu_milli, 1000);
  EXPECT_EQ(p.methods[0].repairs, 1);
  ASSERT_EQ(p.methods[0].placements.size(), 2U);
  EXPECT_EQ(p.methods[0].placements[0].node, 1);  // "any" moved to the T4
  EXPECT_EQ(p.methods[0].placements[1].node, 0);
  EXPECT_NEAR(lp_bound(w), 2000, 1.0);
}

// The solution passed in is the one lp-rounding uses: the same packing as solving it inside.
TEST(LearnPacking, GivenLpSolutionGivesTheSamePacking) {
  trace::Workload w;
  const GpuModelId t4 = model_of(w, "T4");
  const GpuModelId v100 = model_of(w, "V100M32");
  w.nodes = {gpu_node("a", 16000, 2, t4), gpu_node("b", 64000, 4, v100),
             gpu_node("c", 64000, 4, v100), gpu_node("d", 8000, 2, t4)};
  for (int i = 0; i < 8; ++i) w.pods.push_back(test_pod("", 1000 + 1500 * i, 1, 200 + 100 * i));
  for (int i = 0; i < 4; ++i) w.pods.push_back(test_pod("", 6000, 1 + i % 2, 1000));
  BoundOptions keep;
  keep.keep_solution = true;
  auto lp = allocation_upper_bound(w.nodes, w.pods, keep);
  ASSERT_TRUE(lp.ok()) << lp.error();
  EXPECT_FALSE(lp.value().solution.empty());
  double flowed = 0;
  for (const BoundFlow& f : lp.value().solution) {
    flowed += f.pods * f.num_gpu * f.gpu_milli;
    EXPECT_GT(f.pods, 0.0);
  }
  EXPECT_NEAR(flowed, lp.value().upper_bound_gpu_milli, 2.0);
  PackingOptions given;
  given.lp = &lp.value();
  auto a = pack_offline(w.nodes, w.pods, given);
  auto b = pack_offline(w.nodes, w.pods);
  ASSERT_TRUE(a.ok() && b.ok());
  for (std::size_t i = 0; i < a.value().methods.size(); ++i) {
    EXPECT_EQ(a.value().methods[i].allocated_gpu_milli, b.value().methods[i].allocated_gpu_milli);
  }
}

// Nothing to pack: no GPU pods, or no nodes with GPUs.
TEST(LearnPacking, NothingToPack) {
  trace::Workload w;
  w.nodes = {gpu_node("n", 8000, 2, model_of(w, "T4"))};
  w.pods = {test_pod("cpu", 4000, 0, 0), test_pod("huge", 16000, 1, 1000)};
  const OfflinePacking p = pack(w);
  EXPECT_EQ(p.allocated_gpu_milli(), 0);
  for (const PackingMethod& m : p.methods) EXPECT_EQ(m.pods_placed, 0) << m.name;
  w.nodes = {NodeSpec{"cpu-only", 64000, 262144, 0, kNoGpuModel}};
  w.pods = {test_pod("", 1000, 1, 500)};
  EXPECT_EQ(pack(w).allocated_gpu_milli(), 0);
}

// A random small instance: up to 5 nodes of three models, up to 24 pods of every kind, some
// restricted to one model.
trace::Workload random_instance(uint64_t seed) {
  Rng rng(seed);
  trace::Workload w;
  const GpuModelId models[] = {model_of(w, "T4"), model_of(w, "V100M16"), model_of(w, "G2")};
  const int gpu_counts[] = {1, 2, 4, 8};
  const int64_t cpus[] = {8000, 16000, 32000, 64000};
  const int nodes = 1 + static_cast<int>(rng.uniform(5));
  for (int n = 0; n < nodes; ++n) {
    w.nodes.push_back(NodeSpec{"n" + std::to_string(n), cpus[rng.uniform(4)],
                               65536 * (1 + static_cast<int64_t>(rng.uniform(2))),
                               gpu_counts[rng.uniform(4)], models[rng.uniform(3)]});
  }
  const int pods = 1 + static_cast<int>(rng.uniform(24));
  for (int i = 0; i < pods; ++i) {
    const int64_t cpu = 1000 * (1 + static_cast<int64_t>(rng.uniform(16)));
    const int64_t memory = 4096 * (1 + static_cast<int64_t>(rng.uniform(8)));
    const GpuModelSet spec =
        rng.uniform(5) == 0 ? GpuModelSet{1} << models[rng.uniform(3)] : GpuModelSet{0};
    switch (rng.uniform(4)) {
      case 0:
        w.pods.push_back(test_pod("", cpu, 0, 0, 0, memory));
        break;
      case 1:
        w.pods.push_back(
            test_pod("", cpu, 1, 50 * (1 + static_cast<int32_t>(rng.uniform(19))), spec, memory));
        break;
      case 2:
        w.pods.push_back(test_pod("", cpu, 1, 1000, spec, memory));
        break;
      default:
        w.pods.push_back(test_pod("", cpu, gpu_counts[1 + rng.uniform(3)], 1000, spec, memory));
        break;
    }
  }
  return w;
}

TEST(LearnPacking, RandomInstancesBelowTheBoundValidAndDeterministic) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("instance seed " + std::to_string(seed));
    const trace::Workload w = random_instance(seed);
    const OfflinePacking p = pack(w);
    ASSERT_EQ(p.methods.size(), 3U);
    const double lp = lp_bound(w);
    const double ip = lp_bound(w, true);
    int64_t best = 0;
    for (const PackingMethod& m : p.methods) {
      SCOPED_TRACE(m.name);
      EXPECT_LE(static_cast<double>(m.allocated_gpu_milli), lp);
      EXPECT_LE(static_cast<double>(m.allocated_gpu_milli), ip);
      EXPECT_LE(m.allocated_gpu_milli, p.requested_gpu_milli);
      EXPECT_LE(m.allocated_gpu_milli, p.cluster_gpu_milli);
      EXPECT_LE(m.heuristic_gpu_milli, m.allocated_gpu_milli);  // repairs only add
      best = std::max(best, m.allocated_gpu_milli);
      // Every placement holds on a fresh cluster, and they add up to the figure.
      Cluster fresh(w.nodes);
      ASSERT_EQ(static_cast<int64_t>(m.placements.size()), m.pods_placed);
      for (const PackedPod& placed : m.placements) {
        ASSERT_LT(placed.pod, w.pods.size());
        EXPECT_TRUE(w.pods[placed.pod].needs_gpu());
        const Status s = fresh.allocate(placed.pod, w.pods[placed.pod], placed.node, placed.gpus);
        EXPECT_TRUE(s.ok()) << s.message();
      }
      EXPECT_EQ(fresh.allocated_gpu_milli(), m.allocated_gpu_milli);
    }
    EXPECT_EQ(p.allocated_gpu_milli(), best);
    // The same inputs, the same packing.
    const OfflinePacking again = pack(w);
    for (std::size_t i = 0; i < p.methods.size(); ++i) {
      EXPECT_EQ(again.methods[i].allocated_gpu_milli, p.methods[i].allocated_gpu_milli);
      ASSERT_EQ(again.methods[i].placements.size(), p.methods[i].placements.size());
      for (std::size_t k = 0; k < p.methods[i].placements.size(); ++k) {
        EXPECT_EQ(again.methods[i].placements[k].pod, p.methods[i].placements[k].pod);
        EXPECT_EQ(again.methods[i].placements[k].node, p.methods[i].placements[k].node);
        EXPECT_EQ(again.methods[i].placements[k].gpus, p.methods[i].placements[k].gpus);
      }
    }
    EXPECT_EQ(again.best, p.best);
  }
}

}  // namespace
}  // namespace greensched::learn
