// Evaluation of the job duration and energy predictor on a time-ordered split of a trace:
// train on the first share of pods by creation time, predict the rest, and compare with a
// trivial baseline that predicts the training set's global median (and p90) for every job.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/monitor/job_energy.hpp"
#include "greensched/trace/job_predictor.hpp"

namespace greensched::monitor {

struct PredictionMetrics {
  int64_t jobs = 0;
  double median_abs_log_error = 0;  // median |ln(predicted p50 / actual)|
  double mean_abs_log_error = 0;
  double mae_hours = 0;  // mean |predicted p50 - actual|
  double median_abs_error_hours = 0;
  double coverage_p50 = 0;  // share of test jobs with actual <= predicted p50 (ideal 0.5)
  double coverage_p90 = 0;  // ... <= predicted p90 (ideal 0.9)
  double energy_mae_kwh = 0;
  double energy_median_abs_log_error = 0;
};

struct PredictionEvaluation {
  double train_fraction = 0.7;
  int64_t min_support = 5;
  int64_t train_jobs = 0;
  int64_t test_jobs = 0;
  int64_t split_time_s = 0;  // creation time of the first test job
  PredictionMetrics method;
  PredictionMetrics baseline;
  std::array<int64_t, trace::DurationPredictor::kGroupLevels + 1>
      level_counts{};  // test jobs per level
};

Result<PredictionEvaluation> evaluate_time_split(std::span<const PodSpec> pods,
                                                 const JobEnergyModel& energy,
                                                 double train_fraction = 0.7,
                                                 int64_t min_support = 5);

std::string prediction_table(const PredictionEvaluation& e);
nlohmann::json prediction_json(const PredictionEvaluation& e);
std::string prediction_csv(const PredictionEvaluation& e);

}  // namespace greensched::monitor
