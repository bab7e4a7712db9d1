#include <gtest/gtest.h>

#include "greensched/core/cluster.hpp"
#include "greensched/core/duration.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/core/words.hpp"
#include "test_pod.hpp"

namespace greensched {
namespace {

Cluster two_node_cluster() {
  return Cluster({NodeSpec{"a", 8000, 16000, 2, 0}, NodeSpec{"b", 4000, 8000, 0, kNoGpuModel}});
}

PodSpec pod(int64_t cpu, int64_t mem, int num_gpu, int32_t milli) {
  return testing::test_pod("", cpu, num_gpu, milli, 0, mem);
}

TEST(Cluster, StartsEmptyWithDerivedFields) {
  Cluster c = two_node_cluster();
  EXPECT_EQ(c.total_gpu_milli(), 2000);
  EXPECT_EQ(c.total_gpus(), 2);
  EXPECT_EQ(c.state(0).whole_free_gpus, 2);
  EXPECT_EQ(c.state(0).max_gpu_free_milli, 1000);
  EXPECT_EQ(c.state(1).gpu_free_total_milli, 0);
  EXPECT_EQ(c.total_cpu_milli(), 12000);
  EXPECT_EQ(c.allocated_cpu_milli(), 0);
}

TEST(Cluster, AllocateSharedThenReleaseRestoresState) {
  Cluster c = two_node_cluster();
  const NodeState before = c.state(0);
  ASSERT_TRUE(c.allocate(7, pod(1000, 2000, 1, 300), 0, 0b10).ok());
  EXPECT_EQ(c.state(0).gpu_free_milli[1], 700);
  EXPECT_EQ(c.state(0).cpu_free_milli, 7000);
  EXPECT_EQ(c.state(0).memory_free_mib, 14000);
  EXPECT_EQ(c.state(0).whole_free_gpus, 1);
  EXPECT_EQ(c.state(0).pods_by_tag[1], 1);
  EXPECT_EQ(c.allocated_gpu_milli(), 300);
  EXPECT_EQ(c.allocated_cpu_milli(), 1000);
  ASSERT_TRUE(c.allocation_of(7).has_value());
  EXPECT_EQ(c.allocation_of(7)->gpus, 0b10U);

  ASSERT_TRUE(c.release(7).ok());
  EXPECT_EQ(c.state(0).gpu_free_milli, before.gpu_free_milli);
  EXPECT_EQ(c.state(0).cpu_free_milli, before.cpu_free_milli);
  EXPECT_EQ(c.state(0).pods_by_tag[1], 0);
  EXPECT_EQ(c.allocated_gpu_milli(), 0);
  EXPECT_EQ(c.allocated_cpu_milli(), 0);
  EXPECT_FALSE(c.release(7).ok());
}

TEST(Cluster, AllocationRecordsAreReusedAndListedInIdOrder) {
  Cluster c = two_node_cluster();
  // Pods 5, 2, 9 placed; 5 leaves and 3 takes its record: every pod still reads its own.
  ASSERT_TRUE(c.allocate(5, pod(1000, 1000, 1, 1000), 0, 0b01).ok());
  ASSERT_TRUE(c.allocate(2, pod(500, 700, 0, 0), 1, 0).ok());
  ASSERT_TRUE(c.allocate(9, pod(200, 300, 1, 400), 0, 0b10).ok());
  ASSERT_TRUE(c.release(5).ok());
  EXPECT_FALSE(c.allocation_of(5).has_value());
  ASSERT_TRUE(c.allocate(3, pod(300, 100, 1, 1000), 0, 0b01).ok());
  EXPECT_FALSE(c.allocation_of(5).has_value());
  EXPECT_FALSE(c.allocate(3, pod(1, 1, 0, 0), 1, 0).ok());  // already placed
  std::vector<PodId> ids;
  std::vector<int64_t> cpu;
  c.for_each_allocation([&](PodId id, const Allocation& a) {
    ids.push_back(id);
    cpu.push_back(a.cpu_milli);
  });
  EXPECT_EQ(ids, (std::vector<PodId>{2, 3, 9}));
  EXPECT_EQ(cpu, (std::vector<int64_t>{500, 300, 200}));
  EXPECT_EQ(c.allocation_of(3)->gpus, 0b01U);
  EXPECT_EQ(c.allocation_of(9)->gpu_milli_each, 400);
  EXPECT_EQ(c.allocation_of(2)->node, 1);
  // Each node's pods, in id order (9 placed before 3 on node 0).
  EXPECT_EQ(std::vector<PodId>(c.pods_on(0).begin(), c.pods_on(0).end()),
            (std::vector<PodId>{3, 9}));
  EXPECT_EQ(std::vector<PodId>(c.pods_on(1).begin(), c.pods_on(1).end()), (std::vector<PodId>{2}));
  ASSERT_TRUE(c.release(3).ok());
  ASSERT_TRUE(c.release(2).ok());
  ASSERT_TRUE(c.release(9).ok());
  EXPECT_EQ(c.state(0).cpu_free_milli, 8000);
  EXPECT_EQ(c.state(0).whole_free_gpus, 2);
  EXPECT_FALSE(c.release(9).ok());
}

// Property: after random allocations (ids in any order, some refused) and releases, each
// node's pod index is its pods in id order, as the allocations say, in the cluster and a copy.
TEST(Cluster, PodIndexMatchesTheAllocations) {
  Rng rng(5);
  Cluster c({NodeSpec{"a", 16000, 32000, 4, 0}, NodeSpec{"b", 16000, 32000, 2, 0},
             NodeSpec{"c", 8000, 16000, 0, kNoGpuModel}});
  std::vector<PodId> placed;
  int refused = 0;
  for (int step = 0; step < 400; ++step) {
    if (!placed.empty() && rng.uniform(3) == 0) {
      const std::size_t k = rng.uniform(placed.size());
      ASSERT_TRUE(c.release(placed[k]).ok());
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      const auto id = static_cast<PodId>(rng.uniform(300));
      const auto node = static_cast<NodeIndex>(rng.uniform(3));
      const int gpu = static_cast<int>(rng.uniform(4));
      const bool gpu_pod = node != 2 && rng.uniform(2) == 0;
      const PodSpec p = gpu_pod ? pod(1000, 2000, 1, 250) : pod(1000, 2000, 0, 0);
      if (c.allocate(id, p, node, gpu_pod ? GpuMask{1} << gpu : 0).ok()) {
        placed.push_back(id);
      } else {
        ++refused;
      }
    }
    const Cluster copy = c;
    std::vector<std::vector<PodId>> want(3);
    c.for_each_allocation([&](PodId id, const Allocation& a) {
      want[static_cast<std::size_t>(a.node)].push_back(id);
    });
    for (NodeIndex n = 0; n < 3; ++n) {
      EXPECT_EQ(std::vector<PodId>(c.pods_on(n).begin(), c.pods_on(n).end()), want[n]);
      EXPECT_EQ(std::vector<PodId>(copy.pods_on(n).begin(), copy.pods_on(n).end()), want[n]);
    }
  }
  EXPECT_GT(refused, 20);  // full nodes, taken ids and absent GPUs were refused
  EXPECT_GT(placed.size(), 10U);
}

TEST(Cluster, VersionChangesOnEveryChange) {
  Cluster c = two_node_cluster();
  const uint32_t v0 = c.state(0).version;
  ASSERT_TRUE(c.allocate(0, pod(100, 100, 0, 0), 0, 0).ok());
  EXPECT_NE(c.state(0).version, v0);
}

TEST(Cluster, RefusesOvercommitWithoutChangingAnything) {
  Cluster c = two_node_cluster();
  ASSERT_TRUE(c.allocate(1, pod(1000, 1000, 1, 800), 0, 0b01).ok());
  const NodeState snapshot = c.state(0);
  EXPECT_FALSE(c.allocate(2, pod(1000, 1000, 1, 300), 0, 0b01).ok());  // GPU 0 has 200 left
  EXPECT_FALSE(c.allocate(3, pod(9000, 1000, 0, 0), 0, 0).ok());       // CPU
  EXPECT_FALSE(c.allocate(4, pod(100, 99999, 0, 0), 0, 0).ok());       // memory
  EXPECT_FALSE(c.allocate(5, pod(100, 100, 2, 1000), 0, 0b11).ok());   // GPU 0 not whole
  EXPECT_FALSE(c.allocate(6, pod(100, 100, 1, 1000), 0, 0b100).ok());  // GPU 2 absent
  EXPECT_FALSE(c.allocate(7, pod(100, 100, 1, 500), 0, 0b11).ok());    // two GPUs for one
  EXPECT_FALSE(c.allocate(8, pod(100, 100, 1, 500), 1, 0b01).ok());    // CPU-only node
  EXPECT_FALSE(c.allocate(1, pod(100, 100, 0, 0), 0, 0).ok());         // already placed
  EXPECT_FALSE(c.allocate(9, pod(100, 100, 0, 0), 5, 0).ok());         // no such node
  EXPECT_EQ(c.state(0).gpu_free_milli, snapshot.gpu_free_milli);
  EXPECT_EQ(c.state(0).cpu_free_milli, snapshot.cpu_free_milli);
  EXPECT_EQ(c.allocated_gpu_milli(), 800);
  EXPECT_EQ(c.allocated_cpu_milli(), 1000);
}

TEST(Cluster, RefusesGpuModelOutsideSpec) {
  Cluster c = two_node_cluster();  // node a has model id 0
  PodSpec p = pod(100, 100, 1, 500);
  p.gpu_spec = GpuModelSet{1} << 3;
  EXPECT_FALSE(c.allocate(1, p, 0, 0b01).ok());
  p.gpu_spec |= 1;
  EXPECT_TRUE(c.allocate(1, p, 0, 0b01).ok());
}

TEST(Rng, SameSeedSameStreamAndBoundedDraws) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.uniform(7);
    EXPECT_EQ(x, b.uniform(7));
    EXPECT_LT(x, 7U);
    differs = differs || x != c.uniform(7);
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, ShuffleIsAPermutationAndCoversAllPositions) {
  std::array<int, 5> seen_first{};
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng r(seed);
    std::array<int, 5> v{0, 1, 2, 3, 4};
    r.shuffle(std::span<int>(v));
    std::array<int, 5> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::array<int, 5>{0, 1, 2, 3, 4}));
    ++seen_first[v[0]];
  }
  for (int n : seen_first) EXPECT_GT(n, 10);
}

// Durations: units add up, a bare number is in the option's own unit, bad text is refused
// with the text quoted; format_duration gives the shortest spelling back.
TEST(Duration, UnitsAndBareNumbers) {
  EXPECT_EQ(parse_duration("12h", 1).value(), 43200);
  EXPECT_EQ(parse_duration("30m", 3600).value(), 1800);
  EXPECT_EQ(parse_duration("1h30m", 1).value(), 5400);
  EXPECT_EQ(parse_duration("2d", 1).value(), 172800);
  EXPECT_EQ(parse_duration("1.5h", 1).value(), 5400);
  EXPECT_EQ(parse_duration("12", 3600).value(), 43200);  // multi --slack: hours
  EXPECT_EQ(parse_duration("600", 1).value(), 600);      // --ls-bound: seconds
  EXPECT_EQ(parse_duration("0", 3600).value(), 0);
  for (const char* bad : {"", "h", "3x", "1h30", "-5", "1..5h", "abc"}) {
    EXPECT_FALSE(parse_duration(bad, 1).ok()) << bad;
  }
  EXPECT_NE(parse_duration("3x", 1).error().find("'3x'"), std::string::npos);
  EXPECT_EQ(format_duration(43200), "12h");
  EXPECT_EQ(format_duration(600), "10m");
  EXPECT_EQ(format_duration(90), "90s");
  EXPECT_EQ(format_duration(5400), "1h30m");
  EXPECT_EQ(format_duration(86400), "1d");
  EXPECT_EQ(format_duration(0), "0s");
  for (double s : {1.0, 59.0, 60.0, 3599.0, 3600.0, 3661.0, 86399.0, 90000.0}) {
    EXPECT_EQ(parse_duration(format_duration(s), 1).value(), s) << s;  // round trip
  }
}

TEST(Words, Plural) {
  EXPECT_EQ(plural(1, "day", "days"), "1 day");
  EXPECT_EQ(plural(3, "day", "days"), "3 days");
  EXPECT_EQ(plural(0.5, "day", "days"), "0.5 days");
  EXPECT_EQ(plural(0, "seed", "seeds"), "0 seeds");
}

}  // namespace
}  // namespace greensched
