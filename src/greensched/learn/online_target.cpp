#include "greensched/learn/online_target.hpp"

#include <algorithm>
#include <vector>

namespace greensched::learn {

OnlineTargetEstimator::OnlineTargetEstimator(std::size_t window, double coverage)
    : window_(window), coverage_(coverage) {}

void OnlineTargetEstimator::observe(const PodSpec& pod) {
  const int num_gpu = pod.needs_gpu() ? pod.num_gpu : 0;
  const int32_t milli = pod.needs_gpu() ? pod.gpu_milli : 0;
  const Key key{pod.cpu_milli, num_gpu, milli, pod.gpu_spec};
  ++observed_;
  ++counts_[key];
  if (window_ == 0) return;  // unbounded: no pod ever leaves
  recent_.push_back(key);
  if (recent_.size() > window_) {
    auto it = counts_.find(recent_.front());
    if (--it->second == 0) counts_.erase(it);
    recent_.pop_front();
  }
}

frag::TargetWorkload OnlineTargetEstimator::target() const {
  std::vector<frag::TargetShape> all;
  all.reserve(counts_.size());
  int64_t pods = 0;
  for (const auto& [key, count] : counts_) {
    const auto& [cpu, num_gpu, milli, spec] = key;
    all.push_back(frag::TargetShape{cpu, num_gpu, milli, spec, count});
    pods += count;
  }
  // The map is in key order, so a stable sort by count keeps key order among equals, exactly
  // as build_target_workload orders the trace's shapes.
  std::stable_sort(
      all.begin(), all.end(),
      [](const frag::TargetShape& a, const frag::TargetShape& b) { return a.count > b.count; });
  frag::TargetWorkload tw;
  tw.trace_pods = pods;
  tw.distinct_shapes = all.size();
  const double wanted = coverage_ * static_cast<double>(pods);
  for (const frag::TargetShape& s : all) {
    if (static_cast<double>(tw.covered_pods) >= wanted) break;
    tw.shapes.push_back(s);
    tw.covered_pods += s.count;
  }
  return tw;
}

}  // namespace greensched::learn
