// Reproduces the published GPU allocation figures of the FGD paper (ATC'23) on the real openb
// trace: default pod list, GPU node list, seeds 42-51, tune 1.3, allocation at 100 % arrival.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "greensched/explain/explanation.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/policy/filter.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/workload.hpp"
#include "test_data.hpp"

namespace greensched {
namespace {

TEST(Reproduction, PublishedAllocationAtFullArrival) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = trace::load_openb_workload(testing::openb_path("openb_node_list_gpu_node.csv"),
                                      testing::openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  const std::map<std::string, std::pair<double, double>> published = {
      // policy -> (published %, tolerance in percentage points)
      {"fgd", {95.23, 0.6}},        {"bestfit", {92.86, 0.6}}, {"packing", {91.78, 0.6}},
      {"clustering", {91.65, 0.6}}, {"dotprod", {90.62, 0.6}}, {"random", {86.30, 1.5}},
  };
  sim::ExperimentPlan plan;
  plan.policies = {"random", "dotprod", "clustering", "packing", "bestfit", "fgd"};
  for (uint64_t seed = 42; seed <= 51; ++seed) plan.seeds.push_back(seed);
  plan.tune = 1.3;
  auto results = sim::run_experiments(w.value(), plan);
  ASSERT_TRUE(results.ok()) << results.error();

  std::map<std::string, double> mean;
  for (const sim::RunResult& r : results.value()) {
    auto p = sim::point_at(r.curve, 100);
    ASSERT_TRUE(p.has_value()) << r.spec.policy << " seed " << r.spec.seed;
    mean[r.spec.policy] += p->alloc_gpu_pct / 10.0;
    EXPECT_EQ(r.pods_arrived, r.pods_scheduled + r.pods_failed);
  }
  for (const auto& [policy, expected] : published) {
    EXPECT_NEAR(mean[policy], expected.first, expected.second) << policy;
    RecordProperty(policy, std::to_string(mean[policy]));
  }
  // FGD > BestFit > {Packing, Clustering} > DotProduct > Random.
  EXPECT_GT(mean["fgd"], mean["bestfit"]);
  EXPECT_GT(mean["bestfit"], std::max(mean["packing"], mean["clustering"]));
  EXPECT_GT(std::min(mean["packing"], mean["clustering"]), mean["dotprod"]);
  EXPECT_GT(mean["dotprod"], mean["random"]);

  // Seed 42 alone, FGD: 95.14 at 100 % and 95.29 at 130 % arrival.
  for (const sim::RunResult& r : results.value()) {
    if (r.spec.policy != "fgd" || r.spec.seed != 42) continue;
    EXPECT_NEAR(sim::point_at(r.curve, 100)->alloc_gpu_pct, 95.14, 0.6);
    EXPECT_NEAR(sim::point_at(r.curve, 130)->alloc_gpu_pct, 95.29, 0.6);
  }
}

TEST(Reproduction, InflationGrowsTheDefaultTraceToAbout10866Pods) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = trace::load_openb_workload(testing::openb_path("openb_node_list_gpu_node.csv"),
                                      testing::openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  sim::ExperimentPlan plan;
  plan.policies = {"bestfit"};
  plan.seeds = {42, 43, 44};
  auto r = sim::run_experiments(w.value(), plan);
  ASSERT_TRUE(r.ok());
  for (const sim::RunResult& run : r.value()) {
    // The stop rule ends at the first overshooting draw: a few dozen pods either way.
    EXPECT_NEAR(static_cast<double>(run.pods_arrived), 10866.0, 150.0);
    // The per-GPU stop rule lets a last k-GPU pod overshoot by at most (k - 1) GPUs.
    EXPECT_LE(static_cast<double>(run.arrived_gpu_milli), 1.3 * 6212000.0 + 7000.0);
  }
}

// PWR (Lettich et al., CCGrid'25) mixed with FGD as in the paper, pwr:200+fgd:800, against FGD
// alone on the default trace, seeds 42-51, tune 1.3. The paper reports about 13-16 % less
// power with allocation close to FGD's. With the paper's node power model the saving is 13-14 %
// while GPUs remain free (10-80 % arrival) and shrinks once nearly every GPU is in use: about
// 4.5 % at 100 % arrival, where the mix allocates about 2 points less than FGD.
TEST(Reproduction, PwrFgdMixSavesPowerCloseToFgdAllocation) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = trace::load_openb_workload(testing::openb_path("openb_node_list_gpu_node.csv"),
                                      testing::openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  sim::ExperimentPlan plan;
  plan.policies = {"fgd", "pwr:200+fgd:800"};
  for (uint64_t seed = 42; seed <= 51; ++seed) plan.seeds.push_back(seed);
  auto results = sim::run_experiments(w.value(), plan);
  ASSERT_TRUE(results.ok()) << results.error();

  std::map<std::string, std::map<int, double>> power, alloc;  // policy -> bin -> mean
  for (const sim::RunResult& r : results.value()) {
    for (int pct = 10; pct <= 100; pct += 10) {
      auto p = sim::point_at(r.curve, pct);
      ASSERT_TRUE(p.has_value());
      power[r.spec.policy][pct] += p->power_watts / 10.0;
      alloc[r.spec.policy][pct] += p->alloc_gpu_pct / 10.0;
    }
  }
  for (int pct = 10; pct <= 80; pct += 10) {
    const double saving = 1.0 - power["pwr:200+fgd:800"][pct] / power["fgd"][pct];
    EXPECT_GT(saving, 0.08) << "at " << pct << " % arrival";
    EXPECT_LT(saving, 0.20) << "at " << pct << " % arrival";
  }
  const double saving_at_100 = 1.0 - power["pwr:200+fgd:800"][100] / power["fgd"][100];
  RecordProperty("power_saving_at_100_pct", std::to_string(saving_at_100));
  // Measured 0.04504 (seeds 42-51 give the same runs on any machine and worker count); the
  // band leaves room for floating-point summation order only, not for a changed policy.
  EXPECT_NEAR(saving_at_100, 0.0450, 0.003);
  EXPECT_NEAR(alloc["pwr:200+fgd:800"][100], alloc["fgd"][100], 2.5);
  EXPECT_LT(alloc["pwr:200+fgd:800"][100], alloc["fgd"][100]);
}

// The 4-region study on real 2023 carbon data: DE-LU, GB, US-CAL-CISO, SG, each a quarter of
// the openb GPU cluster; the default pod list replayed over its span; idle nodes powered down
// after 30 minutes.
TEST(Reproduction, MultiClusterForecastingAgentsCutCarbonWithoutBreakingLsJobs) {
  GREENSCHED_REQUIRE_OPENB();
  const std::string data = testing::shared_data_dir();
  auto fleet = multi::load_fleet(
      std::string(GREENSCHED_SOURCE_DIR) + "/examples/fleet-4-regions.json", data);
  ASSERT_TRUE(fleet.ok()) << fleet.error();
  auto pods =
      trace::read_openb_pods(data + "/openb/openb_pod_list_default.csv", fleet.value().models);
  ASSERT_TRUE(pods.ok()) << pods.error();
  const uint32_t shapes = trace::assign_shape_ids(pods.value());
  std::map<std::string, multi::MultiResult> results;
  for (const std::string& agent : multi::agent_names()) {
    for (bool oracle : {false, true}) {
      if (oracle && agent != "carbon-forecast" && agent != "green") continue;
      multi::MultiOptions options;
      options.agent = agent;
      options.oracle = oracle;
      options.power_down_idle_s = 1800;
      auto r = multi::run_fleet(fleet.value(), pods.value(), shapes, options);
      ASSERT_TRUE(r.ok()) << r.error();
      results[r.value().agent] = std::move(r.value());
    }
  }
  const double local = results.at("local").carbon_kg;
  for (const char* agent : {"carbon-forecast", "green"}) {
    const multi::MultiResult& r = results.at(agent);
    EXPECT_LE(r.carbon_kg, 0.85 * local) << agent;
    EXPECT_EQ(r.ls_slo_violations, 0) << agent;
    EXPECT_EQ(r.jobs_never_started, 0) << agent;
    // Exact forecasts, but still one job at a time on a fleet that changes under the agent: the
    // oracle run may end a little above the forecasting one (0.14 % for green here), never far.
    EXPECT_LE(results.at(std::string(agent) + " (oracle)").carbon_kg, 1.01 * r.carbon_kg) << agent;
    RecordProperty(agent, std::to_string(1.0 - r.carbon_kg / local));
  }
}

// Explanations of the first 20 pods FGD could not place on the default trace: the reason
// counts cover every node, and the fragmentation diagnosis holds on the cluster state rebuilt
// from the records' own placements.
TEST(Reproduction, FailedPodExplanationsMatchTheClusterState) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = trace::load_openb_workload(testing::openb_path("openb_node_list_gpu_node.csv"),
                                      testing::openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  auto scenario = sim::make_scenario(w.value(), power::PowerModel::builtin());
  ASSERT_TRUE(scenario.ok());
  sim::RunSpec spec("fgd", 42, 1.3);
  spec.record = true;
  auto run = sim::run_inflation(scenario.value(), spec);
  ASSERT_TRUE(run.ok()) << run.error();

  std::map<std::string, NodeIndex> node_index;
  for (std::size_t n = 0; n < w.value().nodes.size(); ++n) {
    node_index[w.value().nodes[n].name] = static_cast<NodeIndex>(n);
  }
  const auto pod_from = [&](const nlohmann::json& req) {
    PodSpec p;
    p.cpu_milli = req["cpu_milli"];
    p.memory_mib = req["memory_mib"];
    p.num_gpu = req["num_gpu"];
    p.gpu_milli = req["gpu_milli"];
    for (const auto& m : req["gpu_spec"]) {
      p.gpu_spec |= GpuModelSet{1} << *w.value().models.find(m.get<std::string>());
    }
    return p;
  };
  Cluster cluster(w.value().nodes);
  std::istringstream lines(run.value().records);
  int failed = 0;
  for (std::string line; std::getline(lines, line) && failed < 20;) {
    const nlohmann::json r = nlohmann::json::parse(line);
    const PodSpec p = pod_from(r["request"]);
    if (!r["chosen_node"].is_null()) {
      GpuMask mask = 0;
      for (const auto& g : r["chosen_gpus"]) mask |= GpuMask{1} << g.get<int>();
      ASSERT_TRUE(cluster
                      .allocate(static_cast<PodId>(r["step"].get<int64_t>()), p,
                                node_index.at(r["chosen_node"]), mask)
                      .ok());
      continue;
    }
    ++failed;
    const nlohmann::json facts = explain::explain_facts(r);
    int64_t sum = 0;
    for (const auto& [reason, n] : facts["reason_counts"].items()) sum += n.get<int64_t>();
    EXPECT_EQ(sum, 1213) << r["pod"];
    EXPECT_EQ(facts["nodes_total"], 1213);
    // Recount on the rebuilt state.
    std::map<std::string, int64_t> reasons;
    int64_t split = 0;
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster.size()); ++n) {
      const policy::FilterReason why = policy::filter_node(cluster.spec(n), cluster.state(n), p);
      ASSERT_NE(why, policy::FilterReason::kFits) << r["pod"] << " fits " << cluster.spec(n).name;
      ++reasons[std::string(policy::describe(why))];
      if ((why == policy::FilterReason::kInsufficientGpuShare ||
           why == policy::FilterReason::kInsufficientWholeGpus) &&
          cluster.state(n).gpu_free_total_milli >= p.total_gpu_milli()) {
        ++split;
      }
    }
    for (const auto& [reason, n] : reasons) EXPECT_EQ(facts["reason_counts"][reason], n) << reason;
    EXPECT_EQ(facts["diagnosis"]["split_gpu_nodes"], split) << r["pod"];
    for (const auto& ex : facts["diagnosis"]["split_gpu_examples"]) {
      const NodeIndex n = node_index.at(ex.get<std::string>());
      EXPECT_GE(cluster.state(n).gpu_free_total_milli, p.total_gpu_milli());
      EXPECT_LT(cluster.state(n).max_gpu_free_milli, p.shares_gpu() ? p.gpu_milli : kGpuMilli + 1);
    }
    EXPECT_FALSE(explain::explain_text(r).empty());
  }
  EXPECT_EQ(failed, 20);
}

}  // namespace
}  // namespace greensched
