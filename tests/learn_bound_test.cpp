// The allocation bound on hand-made clusters whose optimum is worked out by hand: it is never
// below what any policy allocates, and equals the optimum where the cuts make it exact.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "greensched/learn/bound.hpp"
#include "greensched/learn/register.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/sim/metrics.hpp"
#include "greensched/sim/simulator.hpp"
#include "greensched/trace/workload.hpp"
#include "test_pod.hpp"

namespace greensched::learn {
namespace {

using testing::test_pod;

GpuModelId model(const trace::Workload& w, const char* name) {
  return *w.models.find(name);
}

NodeSpec node(std::string name, int64_t cpu, int gpus, GpuModelId m) {
  return NodeSpec{std::move(name), cpu, 262144, gpus, m};
}

// The most any built-in policy (and fgd-online) allocates when the pods arrive in order.
int64_t best_policy_allocation(trace::Workload w) {
  EXPECT_TRUE(register_learn_policies().ok());
  w.shape_count = trace::assign_shape_ids(w.pods);
  auto scenario = sim::make_scenario(w, power::PowerModel::builtin());
  EXPECT_TRUE(scenario.ok()) << scenario.error();
  std::vector<uint32_t> order(w.pods.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<std::string> policies;
  for (const auto& p : policy::policy_catalog()) policies.emplace_back(p.name);
  policies.emplace_back("fgd-online");
  int64_t best = 0;
  for (const std::string& p : policies) {
    for (uint64_t seed : {1, 2, 3}) {
      Rng rng(seed);
      auto r = sim::run_arrivals(scenario.value(), sim::RunSpec(p, seed, 1.0), order, rng);
      EXPECT_TRUE(r.ok()) << p << ": " << r.error();
      if (r.ok()) best = std::max(best, r.value().allocated_gpu_milli);
    }
  }
  return best;
}

double bound_of(const trace::Workload& w, bool integer = false) {
  BoundOptions o;
  o.integer = integer;
  auto b = allocation_upper_bound(w.nodes, w.pods, o);
  EXPECT_TRUE(b.ok()) << b.error();
  return b.ok() ? b.value().upper_bound_gpu_milli : -1;
}

// One node with two GPUs and three pods of 0.6 GPU: only one fits per GPU, so 1200 milli.
// The GPU-level cut (items above half a GPU, one per GPU) is what makes the LP exact.
TEST(LearnBound, SharesAboveHalfAGpuOnePerGpu) {
  trace::Workload w;
  w.nodes = {node("n", 32000, 2, model(w, "T4"))};
  w.pods = {test_pod("", 1000, 1, 600), test_pod("", 1000, 1, 600), test_pod("", 1000, 1, 600)};
  EXPECT_NEAR(bound_of(w), 1200, 1.0);
  EXPECT_NEAR(bound_of(w, true), 1200, 1.0);
  EXPECT_EQ(best_policy_allocation(w), 1200);
  BoundOptions no_cuts;
  no_cuts.packing_cuts = false;  // without the cuts the LP only sees 1800 <= 2000
  EXPECT_NEAR(allocation_upper_bound(w.nodes, w.pods, no_cuts).value().upper_bound_gpu_milli, 1800,
              1.0);
}

// Two whole-GPU pods of 6 cores on a 10-core node with 2 GPUs: CPU lets only one in.
TEST(LearnBound, CpuLimitsWholeGpuPods) {
  trace::Workload w;
  w.nodes = {node("n", 10000, 2, model(w, "T4"))};
  w.pods = {test_pod("", 6000, 1, 1000), test_pod("", 6000, 1, 1000)};
  EXPECT_NEAR(bound_of(w), 1000, 1.0);
  EXPECT_EQ(best_policy_allocation(w), 1000);
}

// Pods restricted to V100M16 while half the GPUs are T4: one of the two fits.
TEST(LearnBound, GpuModelRestriction) {
  trace::Workload w;
  const GpuModelId v100 = model(w, "V100M16");
  w.nodes = {node("t4", 32000, 1, model(w, "T4")), node("v100", 32000, 1, v100)};
  const GpuModelSet only_v100 = GpuModelSet{1} << v100;
  w.pods = {test_pod("", 1000, 1, 1000, only_v100), test_pod("", 1000, 1, 1000, only_v100)};
  EXPECT_NEAR(bound_of(w), 1000, 1.0);
  EXPECT_EQ(best_policy_allocation(w), 1000);
}

// Three 3-GPU pods on two 4-GPU nodes: one per node, so 6000 milli; the plain GPU capacity row
// alone would allow 8000.
TEST(LearnBound, MultiGpuPodsOnePerNode) {
  trace::Workload w;
  w.nodes = {node("a", 64000, 4, model(w, "V100M32")), node("b", 64000, 4, model(w, "V100M32"))};
  w.pods = {test_pod("", 1000, 3, 1000), test_pod("", 1000, 3, 1000), test_pod("", 1000, 3, 1000)};
  EXPECT_NEAR(bound_of(w), 6000, 1.0);
  EXPECT_EQ(best_policy_allocation(w), 6000);
}

// A pod bigger than every node never counts; CPU-only pods never count.
TEST(LearnBound, UnplaceableAndCpuOnlyPodsCountNothing) {
  trace::Workload w;
  w.nodes = {node("n", 8000, 2, model(w, "T4"))};
  PodSpec cpu_only = test_pod("", 4000, 0, 0);
  w.pods = {test_pod("", 16000, 1, 1000), cpu_only, test_pod("", 1000, 4, 1000)};
  EXPECT_EQ(bound_of(w), 0);
  EXPECT_EQ(best_policy_allocation(w), 0);
}

// A mixed case: the bound holds (>= every policy) and is at most the requests and capacity.
TEST(LearnBound, MixedClusterNeverBelowAnyPolicy) {
  trace::Workload w;
  const GpuModelId t4 = model(w, "T4");
  const GpuModelId v100 = model(w, "V100M16");
  w.nodes = {node("a", 16000, 2, t4), node("b", 32000, 4, v100), node("c", 8000, 1, v100),
             node("d", 64000, 8, model(w, "G2"))};
  for (int i = 0; i < 6; ++i) w.pods.push_back(test_pod("", 2000 + 1000 * i, 1, 250 + 120 * i));
  for (int i = 0; i < 4; ++i) w.pods.push_back(test_pod("", 4000, 1 + i % 3, 1000));
  w.pods.push_back(test_pod("", 3000, 1, 1000, GpuModelSet{1} << t4));
  w.pods.push_back(test_pod("", 30000, 2, 1000));
  const double lp = bound_of(w);
  const double ip = bound_of(w, true);
  int64_t requested = 0;
  for (const PodSpec& p : w.pods) requested += p.total_gpu_milli();
  EXPECT_GE(lp, static_cast<double>(best_policy_allocation(w)));
  EXPECT_LE(ip, lp + 1.0);  // integrality can only tighten
  EXPECT_GE(ip, static_cast<double>(best_policy_allocation(w)));
  EXPECT_LE(lp, static_cast<double>(std::min<int64_t>(requested, 15000)));
}

}  // namespace
}  // namespace greensched::learn
