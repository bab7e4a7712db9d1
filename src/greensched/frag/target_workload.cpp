#include "greensched/frag/target_workload.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace greensched::frag {

TargetWorkload build_target_workload(std::span<const PodSpec> pods, double coverage) {
  std::map<std::tuple<int64_t, int, int32_t, GpuModelSet>, int64_t> counts;
  for (const PodSpec& p : pods) {
    const int num_gpu = p.needs_gpu() ? p.num_gpu : 0;
    const int32_t milli = p.needs_gpu() ? p.gpu_milli : 0;
    ++counts[std::make_tuple(p.cpu_milli, num_gpu, milli, p.gpu_spec)];
  }
  std::vector<TargetShape> all;
  all.reserve(counts.size());
  for (const auto& [key, count] : counts) {
    const auto& [cpu, num_gpu, milli, spec] = key;
    all.push_back(TargetShape{cpu, num_gpu, milli, spec, count});
  }
  // counts is ordered by key, so a stable sort by count keeps key order among equals.
  std::stable_sort(all.begin(), all.end(),
                   [](const TargetShape& a, const TargetShape& b) { return a.count > b.count; });

  TargetWorkload tw;
  tw.trace_pods = static_cast<int64_t>(pods.size());
  tw.distinct_shapes = all.size();
  const double wanted = coverage * static_cast<double>(pods.size());
  for (const TargetShape& s : all) {
    if (static_cast<double>(tw.covered_pods) >= wanted) break;
    tw.shapes.push_back(s);
    tw.covered_pods += s.count;
  }
  return tw;
}

}  // namespace greensched::frag
