// Acceptance (e): job duration and energy prediction from shape and QoS, scored on a
// time-ordered split of the default trace (first 70 % by creation time to train), must beat
// a global-median baseline; the online predictions the multi-cluster agents can use see only
// jobs finished before each submission.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "greensched/monitor/job_energy.hpp"
#include "greensched/monitor/prediction_eval.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/job_predictor.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "test_data.hpp"
#include "test_pod.hpp"

namespace greensched::monitor {
namespace {

PodSpec pod(int64_t cpu, int num_gpu, int32_t milli, Qos qos, int64_t created = -1,
            int64_t deleted = -1) {
  PodSpec p = testing::test_pod("p", cpu, num_gpu, milli);
  p.qos = qos;
  p.creation_time = created;
  p.deletion_time = deleted;
  return p;
}

TEST(DurationPredictor, QuantilesWithFallbacks) {
  trace::DurationPredictor predictor(3, 1234);
  const PodSpec shared = pod(4000, 1, 500, Qos::kLS);
  EXPECT_EQ(predictor.predict(shared).level, 5);  // no history: the prior
  EXPECT_DOUBLE_EQ(predictor.predict(shared).p50_s, 1234);
  for (double d : {100.0, 200.0, 300.0, 400.0, 500.0}) predictor.observe(shared, d);
  trace::DurationPrediction p = predictor.predict(shared);
  EXPECT_EQ(p.level, 0);
  EXPECT_EQ(p.support, 5);
  EXPECT_DOUBLE_EQ(p.p50_s, 300);
  EXPECT_DOUBLE_EQ(p.p90_s, 500);  // nearest rank: ceil(0.9 x 5) = 5th
  // Same shape, other memory: level 1. Other share of a GPU, same kind and QoS: level 2.
  PodSpec more_memory = shared;
  more_memory.memory_mib = 4096;
  EXPECT_EQ(predictor.predict(more_memory).level, 1);
  EXPECT_EQ(predictor.predict(pod(8000, 1, 250, Qos::kLS)).level, 2);
  // Other kind, same QoS: level 3; other QoS: everything (level 4).
  EXPECT_EQ(predictor.predict(pod(8000, 0, 0, Qos::kLS)).level, 3);
  EXPECT_EQ(predictor.predict(pod(8000, 0, 0, Qos::kBE)).level, 4);
  // A group below the minimum support falls back to a coarser one.
  const PodSpec multi = pod(32000, 4, 1000, Qos::kLS);
  predictor.observe(multi, 1e6);
  p = predictor.predict(multi);
  EXPECT_EQ(p.level, 3);           // the multi-GPU groups hold one job; QoS LS holds six
  EXPECT_DOUBLE_EQ(p.p50_s, 300);  // of 100..500 and 1e6: ceil(0.5 x 6) = 3rd
}

TEST(DurationPredictor, OnlineUsesOnlyJobsFinishedBeforeSubmission) {
  std::vector<PodSpec> pods;
  for (int i = 0; i < 10; ++i) pods.push_back(pod(1000, 0, 0, Qos::kBE, i * 100, i * 100 + 50));
  pods.push_back(pod(1000, 0, 0, Qos::kBE, 1000, 100000));  // long, finishes late
  pods.push_back(pod(1000, 0, 0, Qos::kBE, 1010, 1060));
  auto a = trace::predict_durations_online(pods, 1);
  EXPECT_EQ(a[0], 3600);  // nothing finished yet: the prior
  EXPECT_EQ(a[1], 50);    // the first job (0-50) finished at 50 <= 100
  EXPECT_EQ(a[11], 50);   // the long job had not finished by 1010: it is not used
  // Changing how long a job runs changes no prediction made before it finished.
  pods[10].deletion_time = 2000000;
  pods[0].deletion_time = 80;
  auto b = trace::predict_durations_online(pods, 1);
  EXPECT_EQ(b[11], a[11]);
  EXPECT_EQ(b[1], 80);
}

TEST(PredictionEval, BeatsTheGlobalMedianOnTheDefaultTrace) {
  GREENSCHED_REQUIRE_OPENB();
  GpuModelRegistry models;
  auto pods =
      trace::read_openb_pods(greensched::testing::openb_path("openb_pod_list_default.csv"), models);
  ASSERT_TRUE(pods.ok()) << pods.error();
  auto energy = JobEnergyModel::make(power::PowerModel::builtin(), models);
  ASSERT_TRUE(energy.ok()) << energy.error();
  auto e = evaluate_time_split(pods.value(), energy.value());
  ASSERT_TRUE(e.ok()) << e.error();
  const PredictionEvaluation& r = e.value();
  EXPECT_EQ(r.train_jobs, 5706);
  EXPECT_EQ(r.test_jobs, 2446);
  // Per-shape quantiles beat the global median on log error, hours and kWh.
  EXPECT_LT(r.method.median_abs_log_error, r.baseline.median_abs_log_error);
  EXPECT_LT(r.method.median_abs_log_error, 0.9 * r.baseline.median_abs_log_error);
  EXPECT_LT(r.method.mae_hours, r.baseline.mae_hours);
  EXPECT_LT(r.method.energy_mae_kwh, r.baseline.energy_mae_kwh);
  EXPECT_LT(r.method.energy_median_abs_log_error, r.baseline.energy_median_abs_log_error);
  // Its p90 covers roughly 90 % of the test jobs.
  EXPECT_GT(r.method.coverage_p90, 0.8);
  EXPECT_LT(r.method.coverage_p90, 0.97);
  int64_t answered = 0;
  for (int64_t n : r.level_counts) answered += n;
  EXPECT_EQ(answered, r.test_jobs);
  EXPECT_FALSE(prediction_table(r).empty());
  EXPECT_TRUE(prediction_json(r).contains("baseline_global_median"));
}

TEST(PredictionEval, UntimedTraceIsAnErrorValue) {
  GpuModelRegistry models;
  std::vector<PodSpec> pods = {pod(1000, 0, 0, Qos::kUnknown), pod(1000, 1, 1000, Qos::kUnknown)};
  auto energy = JobEnergyModel::make(power::PowerModel::builtin(), models);
  ASSERT_TRUE(energy.ok());
  auto e = evaluate_time_split(pods, energy.value());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("no creation/deletion times"), std::string::npos);
}

TEST(JobEnergy, ChargesGpusAtMaxAndVcpus) {
  GpuModelRegistry models;
  auto energy = JobEnergyModel::make(power::PowerModel::builtin(), models, "G2");
  ASSERT_TRUE(energy.ok());
  // Default CPU Xeon E5-2682 v4: 120 W per 16-core socket = 3.75 W per vCPU. G2 = A10: 150 W.
  EXPECT_DOUBLE_EQ(energy.value().watts(pod(4000, 1, 500, Qos::kLS)), 75 + 15);
  PodSpec t4 = pod(0, 2, 1000, Qos::kLS);
  t4.gpu_spec = GpuModelSet{1} << *models.find("T4");
  EXPECT_DOUBLE_EQ(energy.value().watts(t4), 140);
  EXPECT_DOUBLE_EQ(energy.value().kwh(t4, 3600), 0.14);
  EXPECT_FALSE(JobEnergyModel::make(power::PowerModel::builtin(), models, "nope").ok());
}

// With --predict-durations the agents decide on predicted durations while jobs still run for
// their true ones: an agent that ignores durations gives exactly the same run.
TEST(FleetPrediction, JobsRunTheirTrueDurations) {
  trace::Workload w = trace::builtin_openb_workload();
  std::vector<PodSpec> pods;
  for (std::size_t i = 0; i < w.pods.size(); i += 20) pods.push_back(w.pods[i]);
  trace::assign_synthetic_times(pods, 7, 10);
  const uint32_t shapes = trace::assign_shape_ids(pods);
  const multi::Fleet fleet = multi::builtin_fleet();
  multi::MultiOptions options;
  options.agent = "local";
  auto truth = multi::run_fleet(fleet, pods, shapes, options);
  options.predict_durations = true;
  auto predicted = multi::run_fleet(fleet, pods, shapes, options);
  ASSERT_TRUE(truth.ok() && predicted.ok());
  EXPECT_DOUBLE_EQ(truth.value().energy_kwh, predicted.value().energy_kwh);
  EXPECT_DOUBLE_EQ(truth.value().carbon_kg, predicted.value().carbon_kg);
  options.agent = "green";
  auto green = multi::run_fleet(fleet, pods, shapes, options);
  ASSERT_TRUE(green.ok()) << green.error();
  EXPECT_EQ(green.value().jobs, static_cast<int64_t>(pods.size()));
  EXPECT_EQ(green.value().jobs_never_started, 0);
}

}  // namespace
}  // namespace greensched::monitor
