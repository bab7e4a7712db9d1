#include <gtest/gtest.h>

#include "greensched/core/rng.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/workload.hpp"
#include "test_data.hpp"
#include "test_pod.hpp"

namespace greensched::frag {
namespace {

PodSpec pod(int64_t cpu, int num_gpu, int32_t milli, GpuModelSet spec = 0) {
  return testing::test_pod("", cpu, num_gpu, milli, spec, /*memory_mib=*/1);
}

// Target: 3 x (1 CPU, one GPU at 500 milli) and 1 CPU-only pod; covered = 4.
TargetWorkload small_target() {
  std::vector<PodSpec> pods = {pod(1000, 1, 500), pod(1000, 1, 500), pod(1000, 1, 500),
                               pod(2000, 0, 0)};
  return build_target_workload(pods, 1.0);
}

TEST(TargetWorkload, MostPopularFirstUntilCoverage) {
  std::vector<PodSpec> pods;
  for (int i = 0; i < 5; ++i) pods.push_back(pod(1000, 1, 500));
  for (int i = 0; i < 3; ++i) pods.push_back(pod(1000, 1, 1000));
  pods.push_back(pod(4000, 2, 1000));
  pods.push_back(pod(500, 0, 0));
  const TargetWorkload at80 = build_target_workload(pods, 0.8);
  ASSERT_EQ(at80.shapes.size(), 2U);  // 5 + 3 = 8 >= 8
  EXPECT_EQ(at80.shapes[0].count, 5);
  EXPECT_EQ(at80.shapes[0].gpu_milli, 500);
  EXPECT_EQ(at80.shapes[1].count, 3);
  EXPECT_EQ(at80.covered_pods, 8);
  EXPECT_EQ(at80.distinct_shapes, 4U);
  EXPECT_DOUBLE_EQ(at80.popularity(0), 5.0 / 8.0);

  const TargetWorkload at95 = build_target_workload(pods, 0.95);  // 9 < 9.5: all four
  EXPECT_EQ(at95.shapes.size(), 4U);
  // Equal counts: the smaller key (cpu 500, CPU-only) first.
  EXPECT_EQ(at95.shapes[2].cpu_milli, 500);
  EXPECT_EQ(at95.shapes[3].num_gpu, 2);
}

TEST(TargetWorkload, IgnoresMemory) {
  std::vector<PodSpec> pods = {pod(1000, 1, 500), pod(1000, 1, 500)};
  pods[1].memory_mib = 999;
  EXPECT_EQ(build_target_workload(pods).shapes.size(), 1U);
}

TEST(Fragmentation, HandComputedSharedShape) {
  FragmentationModel m(small_target());
  const int32_t gpus[] = {1000, 300};
  // Shape 500: fits on GPU0, GPU1 (300 < 500) is stranded: 300. CPU-only shape: all 1300.
  // F = (3 * 300 + 1 * 1300) / 4 = 550.
  EXPECT_EQ(m.scaled_frag(0, 2, 4000, gpus), 3 * 300 + 1300);
  EXPECT_DOUBLE_EQ(m.to_gpu_milli(m.scaled_frag(0, 2, 4000, gpus)), 550.0);
  // Too little CPU for the GPU shape: all free GPU counts. (3 * 1300 + 1300) / 4 = 1300.
  EXPECT_DOUBLE_EQ(m.to_gpu_milli(m.scaled_frag(0, 2, 500, gpus)), 1300.0);
  // No GPU fits 500: all free counts.
  const int32_t small[] = {300, 200};
  EXPECT_DOUBLE_EQ(m.to_gpu_milli(m.scaled_frag(0, 2, 4000, small)), 500.0);
  // A full node is not fragmented.
  const int32_t full[] = {0, 0};
  EXPECT_EQ(m.scaled_frag(0, 2, 4000, full), 0);
}

TEST(Fragmentation, MultiGpuAndModelConstraints) {
  std::vector<PodSpec> pods = {pod(1000, 2, 1000), pod(1000, 1, 500, GpuModelSet{1} << 5)};
  FragmentationModel m(build_target_workload(pods, 1.0));
  // Node model 5: two whole GPUs fit the 2-GPU shape, 600 stranded for it; the 500 shape fits
  // and nothing is below 500. Scaled F = 1 * 600 + 1 * 0.
  const int32_t a[] = {1000, 1000, 600};
  EXPECT_EQ(m.scaled_frag(5, 3, 8000, a), 600 + 0);
  // Only one whole GPU: the 2-GPU shape cannot be hosted, all 2200 counts.
  const int32_t b[] = {1000, 600, 600};
  EXPECT_EQ(m.scaled_frag(5, 3, 8000, b), 2200 + 0);
  // Model 4 is not in the second shape's spec: all free counts for it.
  EXPECT_EQ(m.scaled_frag(4, 3, 8000, a), 600 + 2600);
}

TEST(Fragmentation, IdenticalNodesShareOneState) {
  FragmentationModel m(small_target());
  Cluster c({NodeSpec{"a", 4000, 100, 2, 0}, NodeSpec{"b", 4000, 100, 2, 0}});
  EXPECT_EQ(m.node_state(c, 0), m.node_state(c, 1));
  ASSERT_TRUE(c.allocate(0, pod(1000, 1, 700), 0, 0b01).ok());
  ASSERT_TRUE(c.allocate(1, pod(1000, 1, 700), 1, 0b10).ok());
  // Same multiset of free shares on different GPU indices: still one state.
  EXPECT_EQ(m.node_state(c, 0), m.node_state(c, 1));
  EXPECT_EQ(m.state(m.node_state(c, 0)).frag_scaled,
            m.scaled_frag(0, 2, 3000, c.state(0).gpu_free_milli.data()));
}

TEST(Fragmentation, IncrementalClusterValueMatchesRecomputation) {
  FragmentationModel m(small_target());
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(NodeSpec{"n", 16000, 100000, 1 + i % 4, 0});
  Cluster c(nodes);
  ClusterFragmentation cf(m, c);
  Rng rng(7);
  for (PodId id = 0; id < 40; ++id) {
    const auto n = static_cast<NodeIndex>(rng.uniform(nodes.size()));
    const int32_t milli = static_cast<int32_t>(100 * (1 + rng.uniform(9)));
    for (int g = 0; g < nodes[n].gpu_count; ++g) {
      if (c.state(n).gpu_free_milli[g] >= milli &&
          c.allocate(id, pod(500, 1, milli), n, GpuMask{1} << g).ok()) {
        cf.update(c, n);
        break;
      }
    }
    int64_t sum = 0;
    for (NodeIndex k = 0; k < static_cast<NodeIndex>(nodes.size()); ++k) {
      sum += m.scaled_frag(0, nodes[k].gpu_count, c.state(k).cpu_free_milli,
                           c.state(k).gpu_free_milli.data());
    }
    EXPECT_DOUBLE_EQ(cf.gpu_milli(), m.to_gpu_milli(sum));
  }
}

TEST(TargetWorkload, OpenbDefaultKeeps35Of91Shapes) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = trace::load_openb_workload(testing::openb_path("openb_node_list_gpu_node.csv"),
                                      testing::openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  const TargetWorkload t = build_target_workload(w.value().pods);
  EXPECT_EQ(t.distinct_shapes, 91U);
  EXPECT_EQ(t.shapes.size(), 35U);
  EXPECT_GE(t.covered_pods, static_cast<int64_t>(0.95 * 8152));
}

}  // namespace
}  // namespace greensched::frag
