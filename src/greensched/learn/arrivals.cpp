#include "greensched/learn/arrivals.hpp"

#include <cmath>
#include <span>

#include <fmt/format.h>

#include "greensched/trace/inflation.hpp"
#include "greensched/trace/openb_reader.hpp"

namespace greensched::learn {
namespace {

int64_t cluster_gpu_milli(const trace::Workload& w) {
  int64_t total = 0;
  for (const NodeSpec& n : w.nodes) total += int64_t{n.gpu_count} * kGpuMilli;
  return total;
}

}  // namespace

std::vector<uint32_t> arrivals_through_bin(const trace::Workload& workload, uint64_t seed,
                                           int pct) {
  const int64_t cap = cluster_gpu_milli(workload);
  if (cap <= 0) return {};
  // Long enough to pass (pct + 0.5) %: inflation stops only within one GPU of its target.
  const double tune = (pct + 0.5) / 100.0 + static_cast<double>(2 * kGpuMilli) / cap;
  Rng rng(seed);
  std::vector<uint32_t> seq = trace::inflate(workload.pods, tune, cap, rng);
  int64_t arrived = 0;
  std::size_t keep = 0;
  for (; keep < seq.size(); ++keep) {
    arrived += workload.pods[seq[keep]].total_gpu_milli();
    const double pct_now = static_cast<double>(arrived) / static_cast<double>(cap) * 100.0;
    if (std::llround(pct_now) > pct) break;
  }
  seq.resize(keep);
  return seq;
}

Result<DriftWorkload> load_drift_workload(const std::string& nodes_path,
                                          const std::string& first_pods,
                                          const std::string& second_pods) {
  auto first = trace::load_openb_workload(nodes_path, first_pods);
  if (!first.ok()) return Error{first.error()};
  DriftWorkload d;
  d.workload = std::move(first.value());
  auto second = trace::read_openb_pods(second_pods, d.workload.models);
  if (!second.ok()) return Error{second.error()};
  d.first_count = d.workload.pods.size();
  for (PodSpec& p : second.value()) d.workload.pods.push_back(std::move(p));
  d.workload.shape_count = trace::assign_shape_ids(d.workload.pods);
  d.workload.pods_source = fmt::format("{} then {}", first_pods, second_pods);
  return d;
}

std::vector<uint32_t> drift_arrivals(const DriftWorkload& drift, double tune,
                                     double switch_fraction, Rng& rng) {
  const trace::Workload& w = drift.workload;
  const int64_t cap = cluster_gpu_milli(w);
  const std::span<const PodSpec> all(w.pods);
  const std::span<const PodSpec> first = all.subspan(0, drift.first_count);
  const std::span<const PodSpec> second = all.subspan(drift.first_count);
  std::vector<uint32_t> out;
  int64_t arrived = 0;
  // Appends `order` (offset into `all`) while the arrived requests stay within `limit`.
  const auto take = [&](const std::vector<uint32_t>& order, uint32_t offset, double limit) {
    for (const uint32_t i : order) {
      const int64_t next = arrived + all[offset + i].total_gpu_milli();
      if (static_cast<double>(next) > limit) return;
      arrived = next;
      out.push_back(offset + i);
    }
  };
  const double end = tune * static_cast<double>(cap);
  take(trace::inflate(first, tune, cap, rng), 0, switch_fraction * end);
  take(trace::inflate(second, tune, cap, rng), static_cast<uint32_t>(drift.first_count), end);
  return out;
}

}  // namespace greensched::learn
