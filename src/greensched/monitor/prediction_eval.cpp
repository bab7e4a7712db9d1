#include "greensched/monitor/prediction_eval.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "greensched/trace/quantiles.hpp"

namespace greensched::monitor {
namespace {

// Accumulates errors of (p50, p90, energy) predictions against actual figures.
class Scorer {
 public:
  void add(double p50_s, double p90_s, double actual_s, double pred_kwh, double actual_kwh) {
    log_err_.push_back(std::abs(std::log(p50_s / actual_s)));
    abs_h_.push_back(std::abs(p50_s - actual_s) / 3600.0);
    in_p50_ += actual_s <= p50_s;
    in_p90_ += actual_s <= p90_s;
    energy_abs_ += std::abs(pred_kwh - actual_kwh);
    if (pred_kwh > 0 && actual_kwh > 0)
      energy_log_.push_back(std::abs(std::log(pred_kwh / actual_kwh)));
  }
  PredictionMetrics metrics() const {
    PredictionMetrics m;
    m.jobs = static_cast<int64_t>(log_err_.size());
    if (m.jobs == 0) return m;
    const double n = static_cast<double>(m.jobs);
    const trace::Distribution le = trace::describe(log_err_);
    const trace::Distribution ah = trace::describe(abs_h_);
    m.median_abs_log_error = le.p50;
    m.mean_abs_log_error = le.mean;
    m.mae_hours = ah.mean;
    m.median_abs_error_hours = ah.p50;
    m.coverage_p50 = static_cast<double>(in_p50_) / n;
    m.coverage_p90 = static_cast<double>(in_p90_) / n;
    m.energy_mae_kwh = energy_abs_ / n;
    m.energy_median_abs_log_error = trace::describe(energy_log_).p50;
    return m;
  }

 private:
  std::vector<double> log_err_, abs_h_, energy_log_;
  int64_t in_p50_ = 0, in_p90_ = 0;
  double energy_abs_ = 0;
};

// Every reported metric once: its machine key, its label in the table, and its field.
struct MetricField {
  const char* key;
  const char* label;
  double PredictionMetrics::*field;
};
constexpr MetricField kMetricFields[] = {
    {"median_abs_log_error", "median |ln(pred/actual)| duration",
     &PredictionMetrics::median_abs_log_error},
    {"mean_abs_log_error", "mean |ln(pred/actual)| duration",
     &PredictionMetrics::mean_abs_log_error},
    {"mae_hours", "MAE duration (hours)", &PredictionMetrics::mae_hours},
    {"median_abs_error_hours", "median abs error (hours)",
     &PredictionMetrics::median_abs_error_hours},
    {"coverage_p50", "coverage of p50 (ideal 0.50)", &PredictionMetrics::coverage_p50},
    {"coverage_p90", "coverage of p90 (ideal 0.90)", &PredictionMetrics::coverage_p90},
    {"energy_mae_kwh", "MAE energy (kWh)", &PredictionMetrics::energy_mae_kwh},
    {"energy_median_abs_log_error", "median |ln(pred/actual)| energy",
     &PredictionMetrics::energy_median_abs_log_error},
};

nlohmann::json metrics_json(const PredictionMetrics& m) {
  nlohmann::json j{{"jobs", m.jobs}};
  for (const MetricField& f : kMetricFields) j[f.key] = m.*f.field;
  return j;
}

}  // namespace

Result<PredictionEvaluation> evaluate_time_split(std::span<const PodSpec> pods,
                                                 const JobEnergyModel& energy,
                                                 double train_fraction, int64_t min_support) {
  if (!(train_fraction > 0 && train_fraction < 1)) {
    return Error{"the training share must lie strictly between 0 and 1"};
  }
  std::vector<std::size_t> timed;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    if (trace::trace_duration_s(pods[i]) >= 0) timed.push_back(i);
  }
  if (timed.size() < 2) {
    return Error{
        "the pod list has no creation/deletion times (e.g. a 5-column multigpu "
        "variant): nothing to predict"};
  }
  std::stable_sort(timed.begin(), timed.end(), [&](std::size_t a, std::size_t b) {
    return pods[a].creation_time < pods[b].creation_time;
  });
  const auto train_n = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::floor(train_fraction * static_cast<double>(timed.size()))), 1,
      timed.size() - 1);

  PredictionEvaluation e;
  e.train_fraction = train_fraction;
  e.min_support = min_support;
  e.train_jobs = static_cast<int64_t>(train_n);
  e.test_jobs = static_cast<int64_t>(timed.size() - train_n);
  e.split_time_s = pods[timed[train_n]].creation_time;

  trace::DurationPredictor predictor(min_support);
  std::vector<double> train_durations, train_kwh;
  for (std::size_t k = 0; k < train_n; ++k) {
    const PodSpec& pod = pods[timed[k]];
    const double d = trace::trace_duration_s(pod);
    predictor.observe(pod, d);
    train_durations.push_back(d);
    train_kwh.push_back(energy.kwh(pod, d));
  }
  std::sort(train_durations.begin(), train_durations.end());
  std::sort(train_kwh.begin(), train_kwh.end());
  const double base_p50 = trace::quantile_sorted(train_durations, 0.5);
  const double base_p90 = trace::quantile_sorted(train_durations, 0.9);
  const double base_kwh = trace::quantile_sorted(train_kwh, 0.5);

  Scorer method, baseline;
  for (std::size_t k = train_n; k < timed.size(); ++k) {
    const PodSpec& pod = pods[timed[k]];
    const double actual = trace::trace_duration_s(pod);
    const double actual_kwh = energy.kwh(pod, actual);
    const trace::DurationPrediction p = predictor.predict(pod);
    ++e.level_counts[static_cast<std::size_t>(p.level)];
    method.add(p.p50_s, p.p90_s, actual, energy.kwh(pod, p.p50_s), actual_kwh);
    baseline.add(base_p50, base_p90, actual, base_kwh, actual_kwh);
  }
  e.method = method.metrics();
  e.baseline = baseline.metrics();
  return e;
}

std::string prediction_table(const PredictionEvaluation& e) {
  std::string out = fmt::format(
      "job prediction: train on the first {:.0f} % of jobs by creation time ({} jobs), test on "
      "the remaining {} (created from t = {} s)\n",
      100 * e.train_fraction, e.train_jobs, e.test_jobs, e.split_time_s);
  out += fmt::format("{:<34} {:>12} {:>16}\n", "metric (test jobs)", "per-shape", "global median");
  for (const MetricField& f : kMetricFields) {
    out += fmt::format("{:<34} {:>12.3f} {:>16.3f}\n", f.label, e.method.*f.field,
                       e.baseline.*f.field);
  }
  out += "answered by group (min support " + std::to_string(e.min_support) + "):";
  for (std::size_t l = 0; l < e.level_counts.size(); ++l) {
    out += fmt::format(" {} {}", trace::DurationPredictor::level_name(static_cast<int>(l)),
                       e.level_counts[l]);
  }
  out += "\n";
  return out;
}

nlohmann::json prediction_json(const PredictionEvaluation& e) {
  nlohmann::json levels = nlohmann::json::object();
  for (std::size_t l = 0; l < e.level_counts.size(); ++l) {
    levels[trace::DurationPredictor::level_name(static_cast<int>(l))] = e.level_counts[l];
  }
  return {{"train_fraction", e.train_fraction},
          {"min_support", e.min_support},
          {"train_jobs", e.train_jobs},
          {"test_jobs", e.test_jobs},
          {"split_time_s", e.split_time_s},
          {"method", metrics_json(e.method)},
          {"baseline_global_median", metrics_json(e.baseline)},
          {"answered_by_group", levels}};
}

std::string prediction_csv(const PredictionEvaluation& e) {
  std::string out = "metric,per_shape,global_median\n";
  for (const MetricField& f : kMetricFields) {
    out += fmt::format("{},{:.6f},{:.6f}\n", f.key, e.method.*f.field, e.baseline.*f.field);
  }
  return out;
}

}  // namespace greensched::monitor
