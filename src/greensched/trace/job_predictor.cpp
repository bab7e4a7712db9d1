#include "greensched/trace/job_predictor.hpp"

#include <algorithm>
#include <numeric>
#include <queue>

#include "greensched/core/pod.hpp"
#include "greensched/trace/quantiles.hpp"

namespace greensched::trace {

DurationPredictor::DurationPredictor(int64_t min_support, double prior_s)
    : min_support_(std::max<int64_t>(min_support, 1)), prior_s_(prior_s) {}

DurationPredictor::Key DurationPredictor::key(const PodSpec& pod, int level) {
  const auto qos = static_cast<int64_t>(pod.qos);
  const auto spec = static_cast<int64_t>(pod.gpu_spec);
  switch (level) {
    case 0:
      return {pod.cpu_milli, pod.memory_mib, pod.num_gpu, pod.gpu_milli, spec, qos};
    case 1:
      return {pod.cpu_milli, -1, pod.num_gpu, pod.gpu_milli, spec, qos};
    case 2:
      return {static_cast<int64_t>(pod_kind(pod)), -1, -1, -1, -1, qos};
    case 3:
      return {-1, -1, -1, -1, -1, qos};
    default:
      return {-1, -1, -1, -1, -1, -1};
  }
}

void DurationPredictor::observe(const PodSpec& pod, double duration_s) {
  const double d = std::max(duration_s, 1.0);
  for (int level = 0; level < kGroupLevels; ++level) {
    std::vector<double>& v = groups_[level][key(pod, level)];
    v.insert(std::upper_bound(v.begin(), v.end(), d), d);
  }
  ++history_;
}

DurationPrediction DurationPredictor::predict(const PodSpec& pod) const {
  for (int level = 0; level < kGroupLevels; ++level) {
    auto it = groups_[level].find(key(pod, level));
    if (it == groups_[level].end()) continue;
    const std::vector<double>& v = it->second;
    const auto n = static_cast<int64_t>(v.size());
    if (n < min_support_ && level + 1 < kGroupLevels) continue;
    return DurationPrediction{quantile_sorted(v, 0.5), quantile_sorted(v, 0.9), level, n};
  }
  return DurationPrediction{prior_s_, prior_s_, kGroupLevels, 0};
}

const char* DurationPredictor::level_name(int level) {
  static const char* kNames[] = {
      "shape+memory+qos", "shape+qos", "kind+qos", "qos", "all", "prior"};
  return level >= 0 && level <= kGroupLevels ? kNames[level] : "?";
}

double trace_duration_s(const PodSpec& pod) {
  if (pod.creation_time < 0 || pod.deletion_time < 0) return -1;
  return std::max<double>(static_cast<double>(pod.deletion_time - pod.creation_time), 1.0);
}

std::vector<int64_t> predict_durations_online(std::span<const PodSpec> pods, int64_t min_support) {
  std::vector<std::size_t> order(pods.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return pods[a].creation_time < pods[b].creation_time;
  });
  // Pods submitted but not yet finished, by deletion time.
  using Pending = std::pair<int64_t, std::size_t>;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> running;
  DurationPredictor predictor(min_support);
  std::vector<int64_t> out(pods.size(), 1);
  for (std::size_t i : order) {
    const PodSpec& pod = pods[i];
    if (pod.creation_time >= 0) {
      while (!running.empty() && running.top().first <= pod.creation_time) {
        const PodSpec& done = pods[running.top().second];
        predictor.observe(done, trace_duration_s(done));
        running.pop();
      }
    }
    out[i] = std::max<int64_t>(1, static_cast<int64_t>(std::llround(predictor.predict(pod).p50_s)));
    if (trace_duration_s(pod) >= 0) running.emplace(pod.deletion_time, i);
  }
  return out;
}

}  // namespace greensched::trace
