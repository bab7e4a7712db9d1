// Explanations checked word for word on hand-computed scenarios, and the narrator's HTTP
// client against a local server.
#include <gtest/gtest.h>

#include <httplib.h>
#include "greensched/defrag/move_planner.hpp"

#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "greensched/explain/explanation.hpp"
#include "greensched/explain/narrator.hpp"
#include "greensched/explain/question.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/sim/decision_record.hpp"
#include "test_pod.hpp"

namespace greensched::explain {
namespace {

using testing::test_pod;

const power::NodePower kT4{power::GpuPower{10, 70}, power::CpuPower{"c", 15, 120, 16}, "T4"};

// Runs one scheduling cycle for `p` and renders its record.
struct Scenario {
  explicit Scenario(std::vector<NodeSpec> nodes) : cluster(std::move(nodes)) {}

  void place(PodId id, const PodSpec& p, NodeIndex node, GpuMask gpus) {
    placed.emplace(id, p);
    ASSERT_TRUE(cluster.allocate(id, placed.at(id), node, gpus).ok());
  }

  nlohmann::json decide(const std::string& policy_spec, const PodSpec& p,
                        std::vector<uint32_t> rank, bool with_models) {
    policy::PolicyContext context;
    if (with_models) {
      frag = std::make_shared<frag::FragmentationModel>(
          frag::build_target_workload(std::vector<PodSpec>{test_pod("t", 2000, 1, 600)}));
      power = std::make_shared<const std::vector<power::NodePower>>(cluster.size(), kT4);
    }
    context.frag = frag;
    context.power = power;
    context.shape_count = 1;
    auto made = policy::make_policy(policy_spec, context);
    EXPECT_TRUE(made.ok());
    policy_ = std::move(made.value());
    policy_->capture_terms(true);
    policy::Scheduler s(*policy_, std::move(rank));
    Rng rng(1);
    policy::FilterCounts counts;
    const policy::Decision d = s.schedule(cluster, p, rng, &counts);
    sim::RecordInputs in;
    in.cluster = &cluster;
    in.models = &models;
    in.scheduler = &s;
    in.counts = &counts;
    in.frag = frag.get();
    in.power = power.get();
    in.pod_of = [this](PodId id) -> const PodSpec* {
      auto it = placed.find(id);
      return it == placed.end() ? nullptr : &it->second;
    };
    return sim::make_record(in, p, d, 7);
  }

  Cluster cluster;
  GpuModelRegistry models;
  std::map<PodId, PodSpec> placed;
  std::shared_ptr<frag::FragmentationModel> frag;
  std::shared_ptr<const std::vector<power::NodePower>> power;
  std::unique_ptr<policy::Policy> policy_;
};

// A: 2 GPUs free [1000, 400], 28 of 32 vCPU free; B: 4 free GPUs, 64 vCPU; C: [200, 1000],
// 14 of 16 vCPU free. The pod: 2 vCPU, 0.3 of a GPU.
Scenario three_nodes() {
  Scenario s({NodeSpec{"A", 32000, 64000, 2, 0}, NodeSpec{"B", 64000, 64000, 4, 0},
              NodeSpec{"C", 16000, 64000, 2, 0}});
  s.place(100, test_pod("a0", 4000, 1, 600), 0, 0b10);
  s.place(101, test_pod("c0", 2000, 1, 800), 2, 0b01);
  return s;
}

TEST(Explain, PlacedWithAMargin) {
  Scenario s = three_nodes();
  // BestFit raw A 82, B 52, C 89; normalised A 81, B 0, C 100.
  const nlohmann::json r = s.decide("bestfit", test_pod("p", 2000, 1, 300), {0, 1, 2}, false);
  EXPECT_EQ(explain_text(r),
            "Pod p (2 vCPU, 1 GiB memory, 0.3 of one GPU) was placed on C, GPU 1, by bestfit.\n"
            "It scored 100, 19 points above the runner-up A (81).\n"
            "Score terms on C: bestfit raw score 89, normalised 100.\n"
            "All 3 nodes could host it.\n");
}

TEST(Explain, PlacedByTheTieOrderWithFragmentationAndPower) {
  Scenario s = three_nodes();
  // DotProduct: A 99, B 98, C 99; A comes first in the tie order. On A's GPU 1 (400 left) the
  // 600-milli target shape loses its stranded 400 -> 100: -300; on C nothing changes. A's
  // socket and GPU 1 are already on: +0 W; on C, GPU 1 powers up: +60 W.
  const nlohmann::json r = s.decide("dotprod", test_pod("p", 2000, 1, 300), {0, 1, 2}, true);
  EXPECT_EQ(explain_text(r),
            "Pod p (2 vCPU, 1 GiB memory, 0.3 of one GPU) was placed on A, GPU 1, by dotprod.\n"
            "It tied with the runner-up C at 99; the run's fixed tie order put A first.\n"
            "Score terms on A: dotprod raw score 99, normalised 99.\n"
            "The placement changes the node's GPU fragmentation by -300 milli-GPU; on the "
            "runner-up it would have changed by 0.\n"
            "It adds 0 W to the node's power (the runner-up: 60 W).\n"
            "All 3 nodes could host it.\n");
}

TEST(Explain, MixShowsEachWeightedTerm) {
  Scenario s = three_nodes();
  // pwr raw A 0, B -165, C -60 -> normalised 100, 0, 63; fgd A 57, B 50, C 50.
  // Totals: A 200*100 + 800*57 = 65600, B 40000, C 200*63 + 800*50 = 52600.
  const nlohmann::json r =
      s.decide("pwr:200+fgd:800", test_pod("p", 2000, 1, 300), {0, 1, 2}, true);
  EXPECT_EQ(explain_text(r),
            "Pod p (2 vCPU, 1 GiB memory, 0.3 of one GPU) was placed on A, GPU 1, by "
            "pwr:200+fgd:800.\n"
            "It scored 65600, 13000 points above the runner-up C (52600).\n"
            "Score terms on A: pwr 100 (raw 0) x weight 200 + fgd 57 (raw 57) x weight 800.\n"
            "The placement changes the node's GPU fragmentation by -300 milli-GPU; on the "
            "runner-up it would have changed by 0.\n"
            "It adds 0 W to the node's power (the runner-up: 60 W).\n"
            "All 3 nodes could host it.\n");
}

TEST(Explain, FailedByFragmentationWithBothCounterfactuals) {
  // X: two GPUs with 600 free each (1200 in total); Y: one GPU with 300 free.
  Scenario s({NodeSpec{"X", 16000, 64000, 2, 0}, NodeSpec{"Y", 16000, 64000, 1, 0}});
  s.place(1, test_pod("x0", 1000, 1, 400), 0, 0b01);
  s.place(2, test_pod("x1", 1000, 1, 400), 0, 0b10);
  s.place(3, test_pod("y0", 1000, 1, 700), 1, 0b01);
  const nlohmann::json r = s.decide("fgd", test_pod("q", 1000, 1, 800), {0, 1}, true);
  EXPECT_EQ(explain_text(r),
            "Pod q (1 vCPU, 1 GiB memory, 0.8 of one GPU) could not be placed.\n"
            "0/2 nodes are available: 2 insufficient GPU share on any single GPU.\n"
            "1 node has enough free GPU in total but split across GPUs (fragmentation), e.g. X.\n"
            "Smallest change: it would fit on X if it asked for 0.6 of a GPU instead of 0.8 of a "
            "GPU (25% less).\n"
            "Or moving pod x0 (1 vCPU, 0.4 of one GPU) off X would make room there.\n");
  const nlohmann::json facts = explain_facts(r);
  EXPECT_EQ(facts["nodes_total"], 2);
  EXPECT_EQ(facts["reason_counts"]["insufficient GPU share on any single GPU"], 2);
  EXPECT_FALSE(facts["placed"].get<bool>());
}

// The same cluster with moves allowed: x0 leaves GPU 0 of X for GPU 1, which frees GPU 0 for q.
TEST(Explain, RescuedByAMove) {
  Scenario s({NodeSpec{"X", 16000, 64000, 2, 0}, NodeSpec{"Y", 16000, 64000, 1, 0}});
  s.place(1, test_pod("x0", 1000, 1, 400), 0, 0b01);
  s.place(2, test_pod("x1", 1000, 1, 400), 0, 0b10);
  s.place(3, test_pod("y0", 1000, 1, 700), 1, 0b01);
  const PodSpec q = test_pod("q", 1000, 1, 800);
  nlohmann::json r = s.decide("fgd", q, {0, 1}, true);
  policy::Scheduler scheduler(*s.policy_, {0, 1});
  Rng rng(1);
  const auto pod_of = [&](PodId id) -> const PodSpec* {
    auto it = s.placed.find(id);
    return it == s.placed.end() ? nullptr : &it->second;
  };
  defrag::MovePlanner planner(pod_of);
  auto plan = planner.fit(s.cluster, 9, q, scheduler, rng, {});
  ASSERT_TRUE(plan.has_value());
  r["rescued_by_moves"] = sim::rescue_json(*plan, s.cluster, pod_of);
  ASSERT_TRUE(check_decision_record(r).ok());
  EXPECT_FALSE(is_failed_placement(r));
  EXPECT_TRUE(record_about_pod(r, "x0"));
  EXPECT_FALSE(record_about_pod(r, "y0"));
  EXPECT_EQ(explain_text(r),
            "Pod q (1 vCPU, 1 GiB memory, 0.8 of one GPU) fit no node as the cluster stood (2 "
            "insufficient GPU share on any single GPU); one running pod was moved to make room, "
            "and it was placed on X, GPU 0, by fgd.\n"
            "Pod x0 (1 vCPU, 0.4 of one GPU) moved from X (GPU 0) to X (GPU 1).\n"
            "On X the moves freed 0.4 of one GPU on the GPUs it took, and 0 vCPU.\n");
  EXPECT_EQ(explain_facts(r)["rescued_by_moves"]["moves"].size(), 1U);
}

// A drain: node X's one pod goes to Y, which the sleep of X pays for by the estimate.
TEST(Explain, DrainedNode) {
  Scenario s({NodeSpec{"X", 16000, 64000, 2, 0}, NodeSpec{"Y", 16000, 64000, 2, 0}});
  s.place(1, test_pod("x0", 2000, 1, 500), 1, 0b10);  // where the drain put it
  const auto pod_of = [&](PodId id) -> const PodSpec* {
    auto it = s.placed.find(id);
    return it == s.placed.end() ? nullptr : &it->second;
  };
  const std::vector<defrag::Move> moves = {defrag::Move{1, 0, 0b01, 1, 0b10, 500}};
  sim::DrainEstimate e;
  e.spared_j = 3.6e6 * 2.5;
  e.moved_saving_j = 3.6e6 * 1.25;
  e.lost_j = 3.6e6 * 0.5;
  e.kept_awake_j = 0;
  const nlohmann::json r =
      sim::drain_record("fgd-energy", 0, moves, {600}, s.cluster, pod_of, e, 7, 3600, 40000);
  ASSERT_TRUE(check_decision_record(r).ok()) << check_decision_record(r).message();
  EXPECT_FALSE(is_failed_placement(r));
  EXPECT_TRUE(record_about_pod(r, "x0"));
  EXPECT_FALSE(record_about_pod(r, "y0"));
  EXPECT_EQ(explain_text(r),
            "At 3600 s, node X was emptied so that it could sleep: its one pod would have kept "
            "it awake until 40000 s.\n"
            "Pod x0 (2 vCPU, 0.5 of one GPU) moved from X (GPU 0) to Y (GPU 1), losing 600 s of "
            "run since its last checkpoint.\n"
            "Estimated: 2.5 kWh of idle power spared, 1.25 kWh saved by running the pods beside "
            "others, 0.5 kWh of lost run time and 0 kWh for nodes kept awake longer; 3.25 kWh "
            "saved in all.\n");
  EXPECT_DOUBLE_EQ(explain_facts(r)["estimate"]["net_kwh"].get<double>(), 3.25);
  nlohmann::json bad = r;
  bad.erase("busy_until_s");
  EXPECT_FALSE(check_decision_record(bad).ok());
}

TEST(Explain, FailedOnCpuWithoutGpu) {
  Scenario s({NodeSpec{"Z", 8000, 64000, 1, 0}});
  s.place(5, test_pod("z0", 7000, 0, 0), 0, 0);
  const nlohmann::json r = s.decide("bestfit", test_pod("r", 2000, 0, 0), {0}, false);
  EXPECT_EQ(explain_text(r),
            "Pod r (2 vCPU, 1 GiB memory, no GPU) could not be placed.\n"
            "0/1 nodes are available: 1 insufficient cpu.\n"
            "Smallest change: it would fit on Z if it asked for 1 vCPU instead of 2 vCPU (50% "
            "less).\n"
            "Or moving pod z0 (7 vCPU, no GPU) off Z would make room there.\n");
}

nlohmann::json fleet_record() {
  const auto option = [](const char* site, int64_t offset, double ci, double g) {
    return nlohmann::json{{"site", site},      {"start_offset_s", offset},
                          {"forecast_ci", ci}, {"expected_g", g},
                          {"cost", g + 1},     {"kw", 0.5}};
  };
  return {{"kind", "dispatch"},
          {"agent", "green"},
          {"pod", "j1"},
          {"qos", "BE"},
          {"request",
           {{"cpu_milli", 2000},
            {"memory_mib", 2048},
            {"num_gpu", 1},
            {"gpu_milli", 500},
            {"gpu_spec", nlohmann::json::array()}}},
          {"home_site", "de"},
          {"site", "gb"},
          {"submit_s", 1000},
          {"submit_utc", "2023-01-01 00:16:40"},
          {"deferred_s", 3620},
          {"transfer_s", 20},
          {"slack_s", 43200},
          {"reason", "moves to gb: 40 g expected"},
          {"carbon_now", {{"de", 331.2}, {"gb", 120.0}}},
          {"alternatives",
           nlohmann::json::array({option("de", 0, 330.4, 110.0), option("gb", 3620, 80.0, 40.0)})},
          {"home_now", option("de", 0, 330.4, 110.0)},
          {"now_best", option("gb", 20, 120.0, 60.0)},
          {"chosen_node", "gb/n7"},
          {"start_s", 4700},
          {"end_s", 8300},
          {"run_ci", 96.4}};
}

// Why this site and start, against home now and against starting at once (40 g against 110 g
// is 70 g, 64 % less; against 60 g, 20 g, 33 %), and what then happened.
// A placed pod's record holds what its chart draws: each GPU of the chosen node as it was
// before the pod, by index. C had c0's 800 milli on GPU 0; the pod goes to C's GPU 1.
TEST(DecisionRecord, PlacedPodCarriesTheChosenNodesGpusBefore) {
  Scenario s = three_nodes();
  const nlohmann::json r = s.decide("bestfit", test_pod("p", 2000, 1, 300), {0, 1, 2}, false);
  ASSERT_EQ(r["chosen_node"], "C");
  EXPECT_EQ(r["chosen_gpus"], nlohmann::json::array({1}));
  EXPECT_EQ(r["chosen_gpus_before"], nlohmann::json::array({800, 0}));
  EXPECT_FALSE(r.contains("reason_counts_by_type"));
  EXPECT_TRUE(parse_decision_record(r.dump(), "r").ok());
}

// A failed pod's record counts the nodes that refused it by GPU model and reason, the same
// nodes as reason_counts. W (T4) lacks CPU; X (T4, 0.6 free on each GPU) and Y (V100M16, 0.3
// free) lack a GPU with 0.8 free; Z has no GPU.
TEST(DecisionRecord, FailedPodCountsReasonsByGpuType) {
  GpuModelRegistry registry;
  const GpuModelId t4 = registry.find("T4").value();
  const GpuModelId v100 = registry.find("V100M16").value();
  Scenario s({NodeSpec{"W", 500, 64000, 1, t4}, NodeSpec{"X", 16000, 64000, 2, t4},
              NodeSpec{"Y", 16000, 64000, 1, v100}, NodeSpec{"Z", 16000, 64000, 0, kNoGpuModel}});
  s.place(1, test_pod("x0", 1000, 1, 400), 1, 0b01);
  s.place(2, test_pod("x1", 1000, 1, 400), 1, 0b10);
  s.place(3, test_pod("y0", 1000, 1, 700), 2, 0b01);
  const nlohmann::json r = s.decide("bestfit", test_pod("q", 1000, 1, 800), {0, 1, 2, 3}, false);
  ASSERT_TRUE(r["chosen_node"].is_null());
  const std::string share = "insufficient GPU share on any single GPU";
  EXPECT_EQ(r["reason_counts_by_type"],
            nlohmann::json({{"T4", {{"insufficient cpu", 1}, {share, 1}}},
                            {"V100M16", {{share, 1}}},
                            {"no GPU", {{"node has no GPU", 1}}}}));
  EXPECT_EQ(r["reason_counts"],
            nlohmann::json({{"insufficient cpu", 1}, {share, 2}, {"node has no GPU", 1}}));
  EXPECT_FALSE(r.contains("chosen_gpus_before"));
  EXPECT_TRUE(parse_decision_record(r.dump(), "r").ok());
}

// The record checker names a new field of the wrong type.
TEST(DecisionRecord, TheChartFieldsAreChecked) {
  const std::string head =
      "{\"pod\":\"p\",\"request\":{\"cpu_milli\":1000,\"num_gpu\":0,\"gpu_milli\":0},";
  for (const auto& [fields, key] : std::vector<std::pair<std::string, std::string>>{
           {"\"chosen_node\":\"n\",\"policy\":\"f\",\"chosen_gpus_before\":\"x\"}",
            "chosen_gpus_before"},
           {"\"chosen_node\":\"n\",\"policy\":\"f\",\"chosen_gpus_before\":[0,\"x\"]}",
            "chosen_gpus_before[1]"},
           {"\"reason_counts_by_type\":[1]}", "reason_counts_by_type"},
           {"\"reason_counts_by_type\":{\"T4\":3}}", "reason_counts_by_type.T4"},
           {"\"reason_counts_by_type\":{\"T4\":{\"insufficient cpu\":\"x\"}}}",
            "reason_counts_by_type.T4.insufficient cpu"}}) {
    auto r = parse_decision_record(head + fields, "d.jsonl:1");
    ASSERT_FALSE(r.ok()) << fields;
    EXPECT_EQ(r.error().rfind("d.jsonl:1: " + key + ":", 0), 0u) << r.error();
  }
  EXPECT_TRUE(parse_decision_record(head + "\"chosen_node\":\"n\",\"policy\":\"f\","
                                           "\"chosen_gpus_before\":[0,250.5]}",
                                    "d")
                  .ok());
  EXPECT_TRUE(parse_decision_record(
                  head + "\"reason_counts_by_type\":{\"T4\":{\"insufficient cpu\":2}}}", "d")
                  .ok());
}

TEST(Explain, DispatchRecord) {
  const nlohmann::json r = fleet_record();
  EXPECT_EQ(explain_text(r),
            "Job j1 (BE, 2 vCPU, 2 GiB memory, 0.5 of one GPU) was submitted at de on "
            "2023-01-01 00:16:40 UTC and went to gb, deferred 3620 s.\n"
            "The green agent's reason: moves to gb: 40 g expected.\n"
            "At gb from +3620 s it expected 40 g at 80 gCO2/kWh forecast, the best by the green "
            "agent's measure of the 2 sites it priced.\n"
            "Against staying at de and starting now (110 g at 330 gCO2/kWh forecast), that is 70 "
            "g (64%) less expected.\n"
            "Against the best start without waiting (gb from +20 s: 60 g at 120 gCO2/kWh "
            "forecast), that is 20 g (33%) less expected.\n"
            "Grid carbon intensity at submission (gCO2/kWh): de 331, gb 120.\n"
            "Best option per site: de from +0 s: 110 g at 330 gCO2/kWh forecast; gb from +3620 "
            "s: 40 g at 80 gCO2/kWh forecast.\n"
            "It used 3620 s of its 43200 s slack.\n"
            "It started on gb/n7 3700 s after its submission; over its run of 3600 s the grid at "
            "gb averaged 96 gCO2/kWh against 80 forecast.\n");
  const nlohmann::json facts = explain_facts(r);
  EXPECT_DOUBLE_EQ(facts["saving_vs_home_g"].get<double>(), 70.0);
  EXPECT_NEAR(facts["saving_vs_home_pct"].get<double>(), 63.64, 0.01);
  EXPECT_DOUBLE_EQ(facts["saving_vs_now_g"].get<double>(), 20.0);
  EXPECT_EQ(facts["waited_s"], 3700);
  EXPECT_FALSE(facts.contains("forecast"));
}

// A job that waits no longer than its data's move is not deferred; an agent that estimates no
// grams (carbon-forecast) is compared by intensity; a job sent again at its latest start says
// where from, and one that never started says so.
TEST(Explain, DispatchRecordVariants) {
  nlohmann::json r = fleet_record();
  r["deferred_s"] = 20;
  r["alternatives"][1]["start_offset_s"] = 20;
  r.erase("now_best");
  r.erase("start_s");
  r.erase("end_s");
  r.erase("run_ci");
  std::string text = explain_text(r);
  EXPECT_NE(text.find("went to gb, to start once its data has moved (20 s).\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("without waiting"), std::string::npos) << text;
  EXPECT_EQ(text.find("started at"), std::string::npos) << text;

  r = fleet_record();
  for (nlohmann::json* o :
       {&r["home_now"], &r["now_best"], &r["alternatives"][0], &r["alternatives"][1]}) {
    o->erase("expected_g");
  }
  text = explain_text(r);
  EXPECT_NE(text.find("it expected 80 gCO2/kWh forecast, the lowest forecast of the 2 sites"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(330 gCO2/kWh forecast), that is a forecast 250 gCO2/kWh (76%) lower."),
            std::string::npos)
      << text;
  EXPECT_TRUE(explain_facts(r).contains("saving_vs_home_gco2_per_kwh"));

  r = fleet_record();
  r["site"] = "fr";
  r["redispatch"] = {
      {"at_s", 44200}, {"from_site", "gb"}, {"site", "fr"}, {"reason", "stays at fr now"}};
  r["start_s"] = nullptr;
  r.erase("end_s");
  r.erase("run_ci");
  text = explain_text(r);
  EXPECT_NE(text.find("went to gb, deferred 3620 s."), std::string::npos) << text;
  EXPECT_NE(text.find("It had not started at gb by its latest start, 43200 s after its "
                      "submission, and was sent again, to fr: stays at fr now.\nIt had not "
                      "started when the run ended.\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(check_decision_record(r).ok());
  r["redispatch"].erase("from_site");
  EXPECT_EQ(check_decision_record(r).message(), "redispatch.from_site: missing");
  r = fleet_record();
  r["forecast"] = {{"step_s", 3600}, {"from_s", 1000}, {"sites", {{"de", {1, "x"}}}}};
  EXPECT_FALSE(check_decision_record(r).ok());
}

// A question's names pick the records: the pods it names, else the nodes and sites; a fleet
// node counts by its own name too.
TEST(Explain, AQuestionsNamesPickItsRecords) {
  EXPECT_EQ(
      question_names("Why was builtin-pod-0042 not put on builtin-node-7? And de-lu, "
                     "default/train-1 or GPU 3 at 3600 s."),
      (std::set<std::string>{"builtin-pod-0042", "builtin-node-7", "de-lu", "default/train-1"}));
  const nlohmann::json r = fleet_record();
  EXPECT_EQ(question_match(r, {"j1"}), 2);
  EXPECT_EQ(question_match(r, {"n7"}), 1);  // gb/n7
  EXPECT_EQ(question_match(r, {"de"}), 1);
  EXPECT_EQ(question_match(r, {"fr"}), 0);
  const nlohmann::json one = question_facts("why j1?", {r});
  EXPECT_EQ(one["question"], "why j1?");
  EXPECT_EQ(one["pod"], "j1");
  const nlohmann::json two = question_facts("why?", {r, r});
  EXPECT_EQ(two["decisions"].size(), 2u);
  EXPECT_EQ(two["sentences"].size(), 2 * one["sentences"].size());
  EXPECT_FALSE(two["decisions"][0].contains("sentences"));
}

// Several runs share a --record file: every record gets its run first, the name JSON-escaped;
// a line that is not an object is dropped.
TEST(Explain, RecordsCarryTheirRun) {
  const std::string tagged =
      sim::tag_run_records("{\"pod\":\"a\"}\n\n{\"pod\":\"b\"}", "policy", "pwr:200+fgd:800", 42);
  EXPECT_EQ(tagged,
            "{\"run\":{\"policy\":\"pwr:200+fgd:800\",\"seed\":42},\"pod\":\"a\"}\n"
            "{\"run\":{\"policy\":\"pwr:200+fgd:800\",\"seed\":42},\"pod\":\"b\"}\n");
  const std::string quoted = sim::tag_run_records("{\"step\":0}\n", "agent", "a\"b", 7);
  EXPECT_EQ(quoted, "{\"run\":{\"agent\":\"a\\\"b\",\"seed\":7},\"step\":0}\n");
  const nlohmann::json parsed = nlohmann::json::parse(quoted);
  EXPECT_EQ(parsed["run"]["agent"], "a\"b");
  EXPECT_EQ(parsed["run"]["seed"], 7);
  EXPECT_EQ(parsed["step"], 0);
  EXPECT_EQ(sim::tag_run_records("", "agent", "local", 1), "");
}

// A local OpenAI-compatible endpoint; /props (llama.cpp's) when props_ is set.
class NarratorServer : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Post("/v1/chat/completions",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   bodies_.push_back(req.body);
                   last_auth_ = req.get_header_value("Authorization");
                   if (delay_ms_ > 0)
                     std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
                   const bool image = req.body.find("image_url") != std::string::npos;
                   res.status = image && refuse_images_ ? 500 : status_;
                   res.set_content(reply_, "application/json");
                 });
    server_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      ++models_asked_;
      res.set_content(models_, "application/json");
    });
    server_.Get("/props", [this](const httplib::Request&, httplib::Response& res) {
      if (props_.empty()) {
        res.status = 404;
        return;
      }
      res.set_content(props_, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }
  NarratorConfig config() const {
    NarratorConfig c;
    c.url = "http://127.0.0.1:" + std::to_string(port_);
    c.model = "m1";
    c.api_key = "k";
    c.timeout_s = 5;
    return c;
  }
  static NarratorInfo prose(const char* model = "m1") {
    NarratorInfo i;
    i.model = model;
    return i;
  }
  nlohmann::json last_body() const { return nlohmann::json::parse(bodies_.back()); }
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  int status_ = 200;
  int delay_ms_ = 0;
  int models_asked_ = 0;
  bool refuse_images_ = false;
  std::string models_ = R"({"object":"list","data":[{"id":"smol","object":"model"}]})";
  std::string props_;
  std::string reply_ =
      R"({"choices":[{"message":{"role":"assistant","content":"In short: it fit best."},"finish_reason":"stop"}]})";
  std::vector<std::string> bodies_;
  std::string last_auth_;
};

// The request asks for a reproducible, bounded answer: temperature 0, a seed, max_tokens.
TEST_F(NarratorServer, SendsFactsAndReturnsTheReplyWithItsFinishReason) {
  auto told = narrate(config(), prose(), {{"pod", "p"}}, "Pod p was placed.\n");
  ASSERT_TRUE(told.ok()) << told.error();
  EXPECT_EQ(told.value().text, "In short: it fit best.");
  EXPECT_EQ(told.value().finish_reason, "stop");
  EXPECT_FALSE(told.value().asked_json);
  const nlohmann::json body = last_body();
  EXPECT_EQ(body["model"], "m1");
  EXPECT_EQ(body["temperature"], 0);
  EXPECT_EQ(body["seed"], 42);
  EXPECT_EQ(body["max_tokens"], 400);
  EXPECT_FALSE(body.contains("response_format"));
  EXPECT_NE(body["messages"][1]["content"].get<std::string>().find("Pod p was placed."),
            std::string::npos);
  EXPECT_EQ(last_auth_, "Bearer k");
  EXPECT_EQ(models_asked_, 0);
}

// Without a model name, the first the server lists is asked; the probe reads who serves it.
TEST_F(NarratorServer, TheModelDefaultsToTheFirstTheServerLists) {
  NarratorConfig c = config();
  c.model.clear();
  auto model = narrator_model(c);
  ASSERT_TRUE(model.ok()) << model.error();
  EXPECT_EQ(model.value(), "smol");
  c.url += "/v1";
  auto info = probe_narrator(c);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info.value().model, "smol");
  EXPECT_FALSE(info.value().placeholders);  // an unknown server: prose
  EXPECT_FALSE(info.value().vision);
  ASSERT_TRUE(narrate(c, info.value(), {}, "x").ok());
  EXPECT_EQ(last_body()["model"], "smol");
  EXPECT_EQ(models_asked_, 2);
  // A model named that the server does not list is asked anyway.
  c.model = "other";
  info = probe_narrator(c);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info.value().model, "other");
}

// llama.cpp's server (/props) gets the placeholder JSON schema; its modalities say whether the
// chart goes along.
TEST_F(NarratorServer, LlamaCppGetsTheSchemaAndImagesWhereItSaysItTakesThem) {
  props_ = R"({"default_generation_settings":{"n_ctx":4096},"modalities":{"vision":false}})";
  auto info = probe_narrator(config());
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info.value().server, "llama.cpp");
  EXPECT_TRUE(info.value().placeholders);
  EXPECT_FALSE(info.value().vision);
  const nlohmann::json facts = {{"pod", "p"}, {"score", 87}, {"sentences", {"Pod p scored 87."}}};
  auto told = narrate(config(), info.value(), facts, "Pod p scored 87.\n", "PNGDATA");
  ASSERT_TRUE(told.ok()) << told.error();
  EXPECT_TRUE(told.value().asked_json);
  nlohmann::json body = last_body();
  EXPECT_EQ(body["response_format"]["type"], "json_schema");
  const nlohmann::json& keys =
      body["response_format"]["json_schema"]["schema"]["properties"]["facts"]["items"]["enum"];
  EXPECT_EQ(keys, nlohmann::json({"pod", "score"}));
  const std::string user = body["messages"][1]["content"].get<std::string>();
  EXPECT_NE(user.find("{pod} = p\n{score} = 87\n"), std::string::npos) << user;
  EXPECT_NE(user.find("Pod {pod} scored {score}."), std::string::npos) << user;
  EXPECT_EQ(bodies_.back().find("image_url"), std::string::npos);  // vision false: no image

  // Vision: the chart goes as a data URL; a server that refuses it is asked again without.
  props_ = R"({"build_info":"b1","modalities":{"vision":true}})";
  info = probe_narrator(config());
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info.value().vision);
  told = narrate(config(), info.value(), facts, "Pod p scored 87.\n", "PNG");
  ASSERT_TRUE(told.ok()) << told.error();
  EXPECT_TRUE(told.value().notes.empty());
  EXPECT_EQ(last_body()["messages"][1]["content"][1]["image_url"]["url"],
            "data:image/png;base64,UE5H");
  refuse_images_ = true;
  bodies_.clear();
  told = narrate(config(), info.value(), facts, "Pod p scored 87.\n", "PNG");
  ASSERT_TRUE(told.ok()) << told.error();
  ASSERT_EQ(bodies_.size(), 2u);
  EXPECT_EQ(bodies_.back().find("image_url"), std::string::npos);
  EXPECT_EQ(
      told.value().notes,
      std::vector<std::string>{"the narrator refused the chart (HTTP 500); sent the text only"});
  // A model that lists its input modalities says so there too; prose when asked for it.
  props_.clear();
  models_ =
      R"({"data":[{"id":"m1","owned_by":"vllm","architecture":{"input_modalities":["text","image"]}}]})";
  info = probe_narrator(config());
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info.value().vision);
  EXPECT_TRUE(info.value().placeholders);
  NarratorConfig c = config();
  c.mode = NarratorMode::kProse;
  EXPECT_FALSE(probe_narrator(c).value().placeholders);
}

TEST_F(NarratorServer, FailuresAreErrors) {
  status_ = 500;
  EXPECT_FALSE(narrate(config(), prose(), {}, "x").ok());
  status_ = 200;
  reply_ = R"({"choices":[]})";
  EXPECT_FALSE(narrate(config(), prose(), {}, "x").ok());
  reply_ = "not json";
  auto not_json = narrate(config(), prose(), {}, "x");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().rfind("narrator: reply: invalid JSON: ", 0), 0u) << not_json.error();
  NarratorConfig bad = config();
  bad.url = "ftp://x";
  EXPECT_FALSE(narrate(bad, prose(), {}, "x").ok());
  bad = config();
  bad.url = "http://127.0.0.1:1";  // nothing listens
  bad.timeout_s = 2;
  EXPECT_FALSE(narrate(bad, prose(), {}, "x").ok());
  EXPECT_FALSE(probe_narrator(bad).ok());
  // Slower than the timeout.
  reply_ = R"({"choices":[{"message":{"content":"late"},"finish_reason":"stop"}]})";
  delay_ms_ = 2500;
  bad = config();
  bad.timeout_s = 1;
  auto slow = narrate(bad, prose(), {}, "x");
  ASSERT_FALSE(slow.ok());
  EXPECT_NE(slow.error().find("Read"), std::string::npos) << slow.error();
}

TEST(Narrator, MalformedUrlsAreNamed) {
  EXPECT_EQ(narrator_url_problem("http://127.0.0.1:8080"), "");
  EXPECT_EQ(narrator_url_problem("https://api.example.com/v1"), "");
  EXPECT_EQ(narrator_url_problem("ftp://x"),
            "narrator URL 'ftp://x' must start with http:// or https://");
  EXPECT_EQ(narrator_url_problem("127.0.0.1:8080"),
            "narrator URL '127.0.0.1:8080' must start with http:// or https://");
  EXPECT_EQ(narrator_url_problem("http://:8080"), "narrator URL 'http://:8080' names no host");
}

}  // namespace
}  // namespace greensched::explain
