#include "greensched/learn/evaluation.hpp"

#include <cmath>
#include <mutex>

#include "greensched/core/parallel_for.hpp"
#include "greensched/sim/metrics.hpp"

namespace greensched::learn {

Result<std::vector<sim::RunResult>> run_policies(const sim::Scenario& scenario,
                                                 const DriftWorkload* drift, const EvalPlan& plan,
                                                 const EvalProgressFn& progress) {
  std::vector<sim::RunSpec> specs;
  for (const std::string& p : plan.policies) {
    for (uint64_t seed : plan.seeds) specs.emplace_back(p, seed, plan.tune);
  }
  std::vector<std::optional<sim::RunResult>> results(specs.size());
  std::mutex progress_mutex;
  std::size_t done = 0;
  Status s = parallel_for(specs.size(), plan.jobs, [&](std::size_t i) -> Status {
    Result<sim::RunResult> r = Error{""};
    if (drift != nullptr && plan.drift_switch) {
      Rng rng(specs[i].seed);
      const std::vector<uint32_t> arrivals =
          drift_arrivals(*drift, specs[i].tune, *plan.drift_switch, rng);
      r = sim::run_arrivals(scenario, specs[i], arrivals, rng);
    } else {
      r = sim::run_inflation(scenario, specs[i]);
    }
    if (!r.ok()) return Error{r.error()};
    results[i] = std::move(r.value());
    std::lock_guard<std::mutex> lock(progress_mutex);
    ++done;
    if (progress) progress(done, specs.size(), *results[i]);
    return Status::Ok();
  });
  if (!s.ok()) return Error{s.message()};
  std::vector<sim::RunResult> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

Result<std::vector<BoundResult>> bounds_per_seed(const trace::Workload& workload,
                                                 const DriftWorkload* drift, const EvalPlan& plan,
                                                 int pct, const BoundOptions& options) {
  auto seeds = bounds_and_packings_per_seed(workload, drift, plan, pct, options, false);
  if (!seeds.ok()) return Error{seeds.error()};
  std::vector<BoundResult> out;
  out.reserve(seeds.value().size());
  for (SeedBound& s : seeds.value()) out.push_back(std::move(s.bound));
  return out;
}

Result<std::vector<SeedBound>> bounds_and_packings_per_seed(const trace::Workload& workload,
                                                            const DriftWorkload* drift,
                                                            const EvalPlan& plan, int pct,
                                                            const BoundOptions& options,
                                                            bool pack) {
  std::vector<SeedBound> out(plan.seeds.size());
  Status s = parallel_for(plan.seeds.size(), plan.jobs, [&](std::size_t i) -> Status {
    std::vector<uint32_t> arrivals;
    if (drift != nullptr && plan.drift_switch) {
      Rng rng(plan.seeds[i]);
      arrivals = drift_arrivals(*drift, plan.tune, *plan.drift_switch, rng);
      int64_t cap = 0;
      for (const NodeSpec& n : workload.nodes) cap += int64_t{n.gpu_count} * kGpuMilli;
      int64_t arrived = 0;
      std::size_t keep = 0;
      for (; keep < arrivals.size(); ++keep) {
        arrived += workload.pods[arrivals[keep]].total_gpu_milli();
        if (std::llround(static_cast<double>(arrived) / static_cast<double>(cap) * 100.0) > pct)
          break;
      }
      arrivals.resize(keep);
    } else {
      arrivals = arrivals_through_bin(workload, plan.seeds[i], pct);
    }
    std::vector<PodSpec> pods;
    pods.reserve(arrivals.size());
    for (uint32_t a : arrivals) pods.push_back(workload.pods[a]);
    BoundOptions bound_options = options;
    bound_options.keep_solution = options.keep_solution || pack;
    auto b = allocation_upper_bound(workload.nodes, pods, bound_options);
    if (!b.ok()) return Error{b.error()};
    out[i].bound = std::move(b.value());
    if (pack) {
      PackingOptions packing_options;
      packing_options.lp = &out[i].bound;
      packing_options.keep_placements = false;
      auto p = pack_offline(workload.nodes, pods, packing_options);
      if (!p.ok()) return Error{p.error()};
      out[i].packing = std::move(p.value());
      if (!options.keep_solution) out[i].bound.solution.clear();
    }
    return Status::Ok();
  });
  if (!s.ok()) return Error{s.message()};
  return out;
}

std::vector<PolicySummary> summarize(const std::vector<sim::RunResult>& results, int pct) {
  std::vector<PolicySummary> out;
  std::vector<int> counts;
  for (const sim::RunResult& r : results) {
    std::size_t i = 0;
    while (i < out.size() && out[i].policy != r.spec.policy) ++i;
    if (i == out.size()) {
      out.push_back(PolicySummary());
      out.back().policy = r.spec.policy;
      counts.push_back(0);
    }
    PolicySummary& s = out[i];
    const auto p = sim::point_at(r.curve, pct);
    const double alloc = p ? p->alloc_gpu_pct : 0.0;
    const double gpus = static_cast<double>(r.cluster_gpu_milli) / kGpuMilli;
    s.alloc_pct.push_back(alloc);
    s.mean_alloc_pct += alloc;
    s.mean_unallocated_gpus += gpus * (100.0 - alloc) / 100.0;
    s.mean_power_watts += p ? p->power_watts : 0.0;
    s.mean_failed_pods += static_cast<double>(r.pods_failed);
    s.mean_wall_seconds += r.wall_seconds;
    ++counts[i];
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double n = counts[i];
    out[i].mean_alloc_pct /= n;
    out[i].mean_unallocated_gpus /= n;
    out[i].mean_power_watts /= n;
    out[i].mean_failed_pods /= n;
    out[i].mean_wall_seconds /= n;
  }
  return out;
}

}  // namespace greensched::learn
