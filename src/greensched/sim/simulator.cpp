#include "greensched/sim/simulator.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/sim/decision_record.hpp"
#include "greensched/trace/inflation.hpp"

namespace greensched::sim {

Result<Scenario> make_scenario(const trace::Workload& workload,
                               const power::PowerModel& power_model) {
  Scenario s;
  s.workload = &workload;
  s.target = frag::build_target_workload(workload.pods);
  auto figures = power_model.resolve(workload.nodes, workload.models);
  if (!figures.ok()) return Error{figures.error()};
  s.power = std::make_shared<const std::vector<power::NodePower>>(std::move(figures.value()));
  s.pue = power_model.pue();
  return s;
}

Result<RunResult> run_inflation(const Scenario& scenario, const RunSpec& spec,
                                const PolicyMaker& make) {
  // One generator drives, in this order: the pod shuffle and tuning sample, the node tie
  // order, and the policy's own draws.
  Rng rng(spec.seed);
  const int64_t capacity = Cluster(scenario.workload->nodes).total_gpu_milli();
  const std::vector<uint32_t> arrivals =
      trace::inflate(scenario.workload->pods, spec.tune, capacity, rng);
  return run_arrivals(scenario, spec, arrivals, rng, make);
}

Result<RunResult> run_arrivals(const Scenario& scenario, const RunSpec& spec,
                               std::span<const uint32_t> arrivals, Rng& rng,
                               const PolicyMaker& make) {
  const auto start = std::chrono::steady_clock::now();
  const trace::Workload& workload = *scenario.workload;
  RunResult result;
  result.spec = spec;

  Cluster cluster(workload.nodes);
  result.cluster_gpu_milli = cluster.total_gpu_milli();

  auto model = std::make_shared<frag::FragmentationModel>(scenario.target);
  policy::PolicyContext context;
  context.frag = model;
  context.shape_count = workload.shape_count;
  context.power = scenario.power;
  context.gpu_select = spec.gpu_select;
  auto policy = make ? make(context) : policy::make_policy(spec.policy, context);
  if (!policy.ok()) return Error{policy.error()};
  policy::Scheduler scheduler(*policy.value(), policy::random_tie_rank(cluster.size(), rng));
  frag::ClusterFragmentation fragmentation(*model, cluster);
  power::ClusterPower power(*scenario.power, cluster);
  ArrivalCurve curve(cluster.total_gpu_milli(),
                     static_cast<int>(std::ceil(spec.tune * 100.0 - 1e-9)));

  // Power per GPU model, kept current, and summed over the events of the 100 % bin.
  const auto group_name = [&](std::size_t n) {
    const std::string& name = (*scenario.power)[n].gpu_name;
    return name.empty() ? std::string("none") : name;
  };
  std::map<std::string, int> group_of_name;  // GPU model -> index, in name order
  for (std::size_t n = 0; n < cluster.size(); ++n) group_of_name.emplace(group_name(n), 0);
  int next_group = 0;
  for (auto& [name, index] : group_of_name) index = next_group++;
  std::vector<int> group(cluster.size());
  for (std::size_t n = 0; n < cluster.size(); ++n) group[n] = group_of_name.at(group_name(n));
  std::vector<double> group_watts(group_of_name.size(), 0.0);
  for (std::size_t n = 0; n < cluster.size(); ++n) {
    group_watts[group[n]] += power.node_watts(static_cast<NodeIndex>(n));
  }
  std::vector<double> group_sum_at_100(group_of_name.size(), 0.0);
  int64_t events_at_100 = 0;

  // Decision records (off by default: the fast path pays nothing).
  policy::FilterCounts counts;
  RecordInputs record_inputs;
  if (spec.record) {
    policy.value()->capture_terms(true);
    record_inputs.cluster = &cluster;
    record_inputs.models = &workload.models;
    record_inputs.scheduler = &scheduler;
    record_inputs.counts = &counts;
    record_inputs.frag = model.get();
    record_inputs.power = scenario.power.get();
    record_inputs.pod_of = [&](PodId id) -> const PodSpec* {
      return id < arrivals.size() ? &workload.pods[arrivals[id]] : nullptr;
    };
  }

  // Moves: the budget is a share of the pods placed so far.
  std::optional<defrag::MovePlanner> planner;
  if (spec.migrate_budget_pct > 0) {
    planner.emplace([&](PodId id) -> const PodSpec* {
      return id < arrivals.size() ? &workload.pods[arrivals[id]] : nullptr;
    });
  }
  const auto track = [&](NodeIndex n) {
    fragmentation.update(cluster, n);
    const double before = power.node_watts(n);
    power.update(cluster, n);
    group_watts[group[n]] += power.node_watts(n) - before;
  };

  PodId step = 0;
  for (const uint32_t index : arrivals) {
    const PodSpec& pod = workload.pods[index];
    policy::Decision d = scheduler.schedule(cluster, pod, rng, spec.record ? &counts : nullptr);
    // The record sees the cycle as it was, before any move.
    nlohmann::json record;
    if (spec.record) record = make_record(record_inputs, pod, d, step);
    std::optional<defrag::FitPlan> plan;
    if (d.node < 0 && planner && pod.needs_gpu()) {
      const auto allowed = static_cast<int64_t>(spec.migrate_budget_pct / 100.0 *
                                                static_cast<double>(result.pods_scheduled));
      defrag::PlannerLimits limits = spec.move_limits;
      limits.max_moves =
          static_cast<int>(std::min<int64_t>(limits.max_moves, allowed - result.pods_migrated));
      plan = planner->fit(cluster, step, pod, scheduler, rng, limits);
    }
    if (spec.record) {
      if (plan) record["rescued_by_moves"] = rescue_json(*plan, cluster, record_inputs.pod_of);
      result.records += record.dump();
      result.records += '\n';
    }
    ++result.pods_arrived;
    result.arrived_gpu_milli += pod.total_gpu_milli();
    if (plan) {
      // The planner has carried the moves and the placement out.
      for (const defrag::Move& m : plan->moves) {
        track(m.from);
        track(m.to);
        result.migrated_gpu_milli += m.gpu_milli;
      }
      track(plan->node);
      result.pods_migrated += static_cast<int64_t>(plan->moves.size());
      ++result.pods_rescued;
      ++result.pods_scheduled;
    } else if (d.node >= 0) {
      if (Status s = cluster.allocate(step, pod, d.node, d.gpus); !s.ok()) {
        return Error{
            fmt::format("policy {} made an invalid placement: {}", spec.policy, s.message())};
      }
      track(d.node);
      ++result.pods_scheduled;
    } else {
      ++result.pods_failed;
    }
    const int bin = curve.record(result.arrived_gpu_milli, cluster.allocated_gpu_milli(),
                                 fragmentation.gpu_milli(), power.watts() * scenario.pue,
                                 result.pods_scheduled, result.pods_migrated);
    if (spec.snapshot_pct >= 0 && result.snapshot_at_pct < 0 && bin >= spec.snapshot_pct) {
      result.snapshot_at_pct = bin;
      for (std::size_t n = 0; n < cluster.size(); ++n) {
        const auto node = static_cast<NodeIndex>(n);
        std::vector<int32_t> used;
        for (int g = 0; g < cluster.spec(node).gpu_count; ++g) {
          used.push_back(kGpuMilli - cluster.state(node).gpu_free_milli[g]);
        }
        result.snapshot_used_milli.push_back(std::move(used));
      }
    }
    if (bin == 100) {
      ++events_at_100;
      for (std::size_t g = 0; g < group_watts.size(); ++g) group_sum_at_100[g] += group_watts[g];
    }
    ++step;
  }
  result.allocated_gpu_milli = cluster.allocated_gpu_milli();
  result.curve = curve.points();
  if (events_at_100 > 0) {
    for (const auto& [name, g] : group_of_name) {
      result.power_by_model_at_100.emplace_back(
          name, group_sum_at_100[g] / static_cast<double>(events_at_100) * scenario.pue);
    }
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace greensched::sim
