// The online target-workload estimator on hand-made arrival streams, fgd-online's options, and
// the drift arrival protocol.
#include <gtest/gtest.h>

#include <set>

#include "greensched/frag/target_workload.hpp"
#include "greensched/learn/arrivals.hpp"
#include "greensched/learn/fgd_online.hpp"
#include "greensched/learn/online_target.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "test_pod.hpp"

namespace greensched::learn {
namespace {

using testing::test_pod;

TEST(LearnOnline, UnboundedWindowMatchesTheTraceTarget) {
  const trace::Workload w = trace::builtin_openb_workload();
  OnlineTargetEstimator all(0);
  for (const PodSpec& p : w.pods) all.observe(p);
  const frag::TargetWorkload online = all.target();
  const frag::TargetWorkload offline = frag::build_target_workload(w.pods);
  ASSERT_EQ(online.shapes.size(), offline.shapes.size());
  EXPECT_EQ(online.covered_pods, offline.covered_pods);
  EXPECT_EQ(online.trace_pods, offline.trace_pods);
  for (std::size_t i = 0; i < online.shapes.size(); ++i) {
    EXPECT_EQ(online.shapes[i].cpu_milli, offline.shapes[i].cpu_milli) << i;
    EXPECT_EQ(online.shapes[i].gpu_milli, offline.shapes[i].gpu_milli) << i;
    EXPECT_EQ(online.shapes[i].num_gpu, offline.shapes[i].num_gpu) << i;
    EXPECT_EQ(online.shapes[i].count, offline.shapes[i].count) << i;
  }
}

// A window of 4 pods: after a a a b the target is {a: 3, b: 1}; after b b c more, the window
// holds b b b c, and a is gone.
TEST(LearnOnline, SlidingWindowForgetsOldShapes) {
  const PodSpec a = test_pod("", 1000, 1, 500);
  const PodSpec b = test_pod("", 2000, 1, 1000);
  const PodSpec c = test_pod("", 4000, 2, 1000);
  OnlineTargetEstimator est(4, 1.0);  // coverage 1.0: keep every shape in the window
  for (const PodSpec& p : {a, a, a, b}) est.observe(p);
  frag::TargetWorkload t = est.target();
  ASSERT_EQ(t.shapes.size(), 2U);
  EXPECT_EQ(t.shapes[0].gpu_milli, 500);  // a: 3 of 4, most popular first
  EXPECT_EQ(t.shapes[0].count, 3);
  EXPECT_EQ(t.shapes[1].count, 1);
  for (const PodSpec& p : {b, b, c}) est.observe(p);  // window now: b b b c
  t = est.target();
  EXPECT_EQ(est.observed(), 7U);
  EXPECT_EQ(est.in_window(), 4U);
  ASSERT_EQ(t.shapes.size(), 2U);
  EXPECT_EQ(t.shapes[0].cpu_milli, 2000);
  EXPECT_EQ(t.shapes[0].count, 3);
  EXPECT_EQ(t.shapes[1].num_gpu, 2);
  EXPECT_EQ(t.covered_pods, 4);
  for (const auto& s : t.shapes) EXPECT_NE(s.gpu_milli, 500);  // a has left the window
}

TEST(LearnOnline, CoverageCutKeepsMostPopularShapes) {
  OnlineTargetEstimator est(100, 0.5);
  for (int i = 0; i < 6; ++i) est.observe(test_pod("", 1000, 1, 300));
  for (int i = 0; i < 3; ++i) est.observe(test_pod("", 1000, 1, 700));
  est.observe(test_pod("", 0, 0, 0));
  const frag::TargetWorkload t = est.target();
  ASSERT_EQ(t.shapes.size(), 1U);  // 6 of 10 already cover half
  EXPECT_EQ(t.shapes[0].gpu_milli, 300);
  EXPECT_EQ(t.trace_pods, 10);
  EXPECT_EQ(t.distinct_shapes, 3U);
}

TEST(LearnOnline, FgdOnlineOptions) {
  auto d = parse_fgd_online_options("");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value().window, 2000U);
  auto w = parse_fgd_online_options("500/50");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w.value().window, 500U);
  EXPECT_EQ(w.value().refresh, 50U);
  EXPECT_EQ(parse_fgd_online_options("all").value().window, 0U);
  EXPECT_FALSE(parse_fgd_online_options("x").ok());
  EXPECT_FALSE(parse_fgd_online_options("0").ok());
  EXPECT_FALSE(parse_fgd_online_options("10/0").ok());
}

TEST(LearnOnline, DriftSwitchesListsPartWay) {
  const trace::Workload base = trace::builtin_openb_workload();
  DriftWorkload drift;
  drift.workload = base;
  // The second list: the same pods with 7 cores more, so each pod's origin is visible.
  drift.first_count = base.pods.size();
  for (PodSpec p : base.pods) {
    p.cpu_milli += 7;
    drift.workload.pods.push_back(p);
  }
  drift.workload.shape_count = trace::assign_shape_ids(drift.workload.pods);
  Rng rng(42);
  const std::vector<uint32_t> seq = drift_arrivals(drift, 1.3, 0.5, rng);
  int64_t cap = 0;
  for (const NodeSpec& n : base.nodes) cap += int64_t{n.gpu_count} * kGpuMilli;
  int64_t arrived = 0;
  bool switched = false;
  for (uint32_t i : seq) {
    const bool second = i >= drift.first_count;
    if (!second) {
      EXPECT_FALSE(switched) << "a first-list pod after the switch";
      EXPECT_LE(static_cast<double>(arrived), 0.5 * 1.3 * static_cast<double>(cap));
    }
    switched = switched || second;
    arrived += drift.workload.pods[i].total_gpu_milli();
  }
  EXPECT_TRUE(switched);
  EXPECT_LE(static_cast<double>(arrived), 1.3 * static_cast<double>(cap));
  EXPECT_GT(static_cast<double>(arrived), 1.29 * static_cast<double>(cap));
  Rng again(42);
  EXPECT_EQ(drift_arrivals(drift, 1.3, 0.5, again), seq);  // seeded: same sequence
}

// Arrivals through a bin are the prefix of any longer run of the same seed.
TEST(LearnOnline, ArrivalsThroughBinArePrefixes) {
  const trace::Workload w = trace::builtin_openb_workload();
  const auto to100 = arrivals_through_bin(w, 7, 100);
  const auto to120 = arrivals_through_bin(w, 7, 120);
  ASSERT_LT(to100.size(), to120.size());
  EXPECT_TRUE(std::equal(to100.begin(), to100.end(), to120.begin()));
}

}  // namespace
}  // namespace greensched::learn
