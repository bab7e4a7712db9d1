#include <gtest/gtest.h>

#include <sstream>

#include <fmt/format.h>

#include "greensched/report/results_writer.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/sim/metrics.hpp"
#include "greensched/trace/builtin_workload.hpp"

namespace greensched::sim {
namespace {

TEST(ArrivalCurve, BinsByRoundedArrivalAndAveragesEvents) {
  ArrivalCurve curve(1000, 2);
  curve.record(4, 4, 10.0);    // 0.4 %  -> bin 0
  curve.record(6, 6, 20.0);    // 0.6 %  -> bin 1
  curve.record(14, 10, 30.0);  // 1.4 %  -> bin 1
  const std::vector<CurvePoint> points = curve.points();
  ASSERT_EQ(points.size(), 3U);
  EXPECT_EQ(points[0].events, 1);
  EXPECT_DOUBLE_EQ(points[0].alloc_gpu_pct, 0.4);
  EXPECT_EQ(points[1].events, 2);
  EXPECT_DOUBLE_EQ(points[1].alloc_gpu_pct, (0.6 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(points[1].frag_gpu_milli, 25.0);
  EXPECT_EQ(points[2].events, 0);
  EXPECT_FALSE(point_at(points, 2).has_value());
  EXPECT_TRUE(point_at(points, 1).has_value());
}

TEST(SeedList, ListsAndRanges) {
  auto s = parse_seed_list("42-44,7,1-1");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value(), (std::vector<uint64_t>{42, 43, 44, 7, 1}));
  EXPECT_FALSE(parse_seed_list("44-42").ok());
  EXPECT_FALSE(parse_seed_list("x").ok());
  EXPECT_FALSE(parse_seed_list("").ok());
  EXPECT_FALSE(parse_seed_list("1,,2").ok());
}

TEST(PolicyList, AllExpandsAndUnknownIsAnError) {
  auto all = parse_policy_list("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all.value().size(), 8U);
  auto two = parse_policy_list("fgd,bestfit");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two.value(), (std::vector<std::string>{"fgd", "bestfit"}));
  auto mix = parse_policy_list("pwr:200+fgd:800,fgd");
  ASSERT_TRUE(mix.ok());
  EXPECT_EQ(mix.value(), (std::vector<std::string>{"pwr:200+fgd:800", "fgd"}));
  EXPECT_FALSE(parse_policy_list("pwr:x+fgd").ok());
  auto bad = parse_policy_list("fgd,nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("nope"), std::string::npos);
}

// Every 8th node and pod of the built-in workload: the same mix at an eighth of the size,
// which keeps these tests fast under sanitizers.
trace::Workload small_workload() {
  trace::Workload w = trace::builtin_openb_workload();
  std::vector<NodeSpec> nodes;
  for (std::size_t i = 0; i < w.nodes.size(); i += 8) nodes.push_back(w.nodes[i]);
  std::vector<PodSpec> pods;
  for (std::size_t i = 0; i < w.pods.size(); i += 8) pods.push_back(w.pods[i]);
  w.nodes = std::move(nodes);
  w.pods = std::move(pods);
  w.shape_count = trace::assign_shape_ids(w.pods);
  return w;
}

TEST(Simulator, RunInvariants) {
  const trace::Workload w = small_workload();
  auto scenario = make_scenario(w, power::PowerModel::builtin());
  ASSERT_TRUE(scenario.ok());
  for (const char* policy :
       {"random", "dotprod", "clustering", "packing", "bestfit", "fgd", "pwr", "pwr:200+fgd:800"}) {
    auto r = run_inflation(scenario.value(), RunSpec(policy, 5, 1.3));
    ASSERT_TRUE(r.ok()) << r.error();
    const RunResult& res = r.value();
    EXPECT_EQ(res.pods_scheduled + res.pods_failed, res.pods_arrived) << policy;
    EXPECT_LE(res.allocated_gpu_milli, res.cluster_gpu_milli) << policy;
    // The stop rule checks the per-GPU share, so a k-GPU pod may overshoot by (k - 1) GPUs.
    EXPECT_LE(static_cast<double>(res.arrived_gpu_milli),
              1.3 * static_cast<double>(res.cluster_gpu_milli) + 7 * kGpuMilli)
        << policy;
    EXPECT_GT(res.pods_failed, 0) << policy;  // 130 % of capacity cannot all fit
    double last_alloc = 0;
    for (const CurvePoint& p : res.curve) {
      if (p.events == 0) continue;
      EXPECT_LE(p.alloc_gpu_pct, p.arrived_pct + 0.5 + 1e-9) << policy;
      EXPECT_GE(p.alloc_gpu_pct + 1e-9, last_alloc) << policy;  // pods never leave
      last_alloc = p.alloc_gpu_pct;
    }
  }
}

TEST(Simulator, FgdBeatsRandomOnTheBuiltinWorkload) {
  const trace::Workload w = small_workload();
  auto scenario = make_scenario(w, power::PowerModel::builtin());
  ASSERT_TRUE(scenario.ok());
  auto fgd = run_inflation(scenario.value(), RunSpec("fgd", 1, 1.3));
  auto rnd = run_inflation(scenario.value(), RunSpec("random", 1, 1.3));
  ASSERT_TRUE(fgd.ok() && rnd.ok());
  EXPECT_GT(point_at(fgd.value().curve, 100)->alloc_gpu_pct,
            point_at(rnd.value().curve, 100)->alloc_gpu_pct + 2.0);
}

ExperimentPlan make_plan(std::vector<std::string> policies, std::vector<uint64_t> seeds,
                         double tune, int jobs) {
  ExperimentPlan plan;
  plan.policies = std::move(policies);
  plan.seeds = std::move(seeds);
  plan.tune = tune;
  plan.jobs = jobs;
  return plan;
}

std::string csv_without_timing(const std::vector<RunResult>& results) {
  std::ostringstream curves, summary;
  report::write_curves_csv(curves, results);
  report::write_summary_csv(summary, results);
  std::string s = summary.str();
  // wall_seconds is the last column: drop it from every line.
  std::string out;
  std::istringstream lines(s);
  for (std::string line; std::getline(lines, line);) out += line.substr(0, line.rfind(',')) + "\n";
  return curves.str() + out;
}

TEST(Experiment, SameSeedsGiveByteIdenticalOutputForAnyWorkerCount) {
  const trace::Workload w = small_workload();
  ExperimentPlan one = make_plan({"fgd", "random", "bestfit"}, {3, 4}, 1.2, 1);
  ExperimentPlan two = one;
  two.jobs = 2;
  auto a = run_experiments(w, one);
  auto b = run_experiments(w, two);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a.value().size(), 6U);
  EXPECT_EQ(a.value()[0].spec.policy, "fgd");
  EXPECT_EQ(a.value()[1].spec.seed, 4U);
  EXPECT_EQ(csv_without_timing(a.value()), csv_without_timing(b.value()));
  // A different seed changes the outcome.
  ExperimentPlan other = one;
  other.seeds = {5, 6};
  auto c = run_experiments(w, other);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(csv_without_timing(a.value()), csv_without_timing(c.value()));
}

TEST(Experiment, UnknownPolicyFailsCleanly) {
  const trace::Workload w = small_workload();
  auto r = run_experiments(w, make_plan({"nope"}, {1}, 1.0, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("nope"), std::string::npos);
}

TEST(ResultsWriter, CurvesHaveOneRowPerBinWithRequiredColumns) {
  const trace::Workload w = small_workload();
  auto r = run_experiments(w, make_plan({"bestfit"}, {1}, 1.3, 1));
  ASSERT_TRUE(r.ok());
  std::ostringstream curves;
  report::write_curves_csv(curves, r.value());
  std::istringstream lines(curves.str());
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("policy,seed,arrived_gpu_pct,alloc_gpu_pct,frag_gpu_milli", 0), 0U);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind(fmt::format("bestfit,1,{},", rows), 0), 0U) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 131);  // bins 0..130
}

}  // namespace
}  // namespace greensched::sim
