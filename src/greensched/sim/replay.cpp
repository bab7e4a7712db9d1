#include "greensched/sim/replay.hpp"

#include "greensched/sim/decision_record.hpp"
#include "greensched/sim/site_engine.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/filter.hpp"
#include "greensched/policy/power_delta.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/quantiles.hpp"

namespace greensched::sim {

namespace {

std::unordered_map<std::string, NodeIndex> node_index_by_name(const std::vector<NodeSpec>& nodes) {
  std::unordered_map<std::string, NodeIndex> by_name;
  by_name.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    by_name.emplace(nodes[i].name, static_cast<NodeIndex>(i));
  }
  return by_name;
}

struct ResolvedEvent {
  int64_t time = 0;
  NodeIndex node = -1;
  bool up = false;
};

// Sorts `delays` in place.
DelayStats delay_stats(std::vector<double>& delays) {
  DelayStats d;
  d.pods = static_cast<int64_t>(delays.size());
  if (delays.empty()) return d;
  std::sort(delays.begin(), delays.end());
  double sum = 0;
  for (double x : delays) sum += x;
  d.mean_s = sum / static_cast<double>(delays.size());
  d.p99_s = trace::quantile_sorted(delays, 0.99);
  return d;
}

// The replay's driver: arrivals and node events in time order, one SiteEngine for the queue,
// the power states and the scheduling, and the window's integrals and timeline.
class Replay {
 public:
  Replay(const trace::Workload& workload, const ReplayConfig& config, SiteEngine& engine,
         const Cluster& cluster, double pue, std::vector<PodId> order)
      : workload_(workload),
        config_(config),
        engine_(engine),
        cluster_(cluster),
        pue_(pue),
        order_(std::move(order)) {}

  // Also accounts the run's energy under each of `shadows` (other power figures of the same
  // nodes); only where the schedule cannot depend on them (see run_replay_each).
  void account_also(std::size_t shadows) { shadow_window_energy_j_.assign(shadows, 0.0); }

  // Runs every instant to the end and fills the counts, delays, energy and timeline.
  // `shadow_results` get the same figures with each shadow's energy and power.
  Status run(const std::vector<ResolvedEvent>& events, ReplayResult& result,
             std::vector<ReplayResult>& shadow_results);

 private:
  const PodSpec& pod(PodId id) const { return workload_.pods[id]; }
  double scaled(int64_t trace_seconds) const {
    return static_cast<double>(trace_seconds) / config_.time_scale;
  }
  std::size_t shadows() const { return shadow_window_energy_j_.size(); }
  double facility_watts() const { return engine_.it_watts() * pue_; }
  double shadow_facility_watts(std::size_t k) const { return engine_.shadow_it_watts(k) * pue_; }
  std::optional<int64_t> next_time(const std::vector<ResolvedEvent>& events) {
    std::optional<int64_t> t = engine_.next_time();
    const auto consider = [&t](int64_t v) {
      if (!t || v < *t) t = v;
    };
    if (next_arrival_ < order_.size()) consider(pod(order_[next_arrival_]).creation_time);
    if (next_event_ < events.size()) consider(events[next_event_].time);
    return t;
  }
  void integrate(int64_t from, int64_t to);

  const trace::Workload& workload_;
  const ReplayConfig& config_;
  SiteEngine& engine_;
  const Cluster& cluster_;
  double pue_;
  std::vector<PodId> order_;  // pods by (creation_time, index)
  std::size_t next_arrival_ = 0;
  std::size_t next_event_ = 0;
  // Integrals inside the measured window (scaled seconds).
  double window_energy_j_ = 0;
  std::vector<double> shadow_window_energy_j_;
  double window_floor_j_ = 0;
  double window_alloc_milli_s_ = 0;
  double window_awake_node_s_ = 0;
  double window_pending_milli_s_ = 0;
};

void Replay::integrate(int64_t from, int64_t to) {
  const int64_t a = std::max(from, config_.measure_from_s);
  const int64_t b = std::min(to, config_.measure_to_s);
  if (b <= a) return;
  const double dt = scaled(b - a);
  window_energy_j_ += facility_watts() * dt;
  for (std::size_t k = 0; k < shadows(); ++k) {
    shadow_window_energy_j_[k] += shadow_facility_watts(k) * dt;
  }
  window_floor_j_ += engine_.floor_watts() * pue_ * dt;
  window_alloc_milli_s_ += static_cast<double>(cluster_.allocated_gpu_milli()) * dt;
  window_awake_node_s_ += static_cast<double>(engine_.nodes_awake()) * dt;
  window_pending_milli_s_ += static_cast<double>(engine_.queued_gpu_milli()) * dt;
}

Status Replay::run(const std::vector<ResolvedEvent>& events, ReplayResult& result,
                   std::vector<ReplayResult>& shadow_results) {
  double energy_joules = 0;
  std::vector<double> shadow_energy_joules(shadows(), 0.0);
  shadow_results.resize(shadows());
  int64_t last = 0;
  int64_t first = 0;
  double next_point = -std::numeric_limits<double>::infinity();
  const auto point = [&](int64_t t) {
    return TimelinePoint{scaled(t),
                         engine_.running(),
                         static_cast<int64_t>(engine_.queued()),
                         static_cast<double>(cluster_.allocated_gpu_milli()) / kGpuMilli,
                         facility_watts(),
                         energy_joules,
                         engine_.nodes_awake()};
  };
  const auto add_point = [&](int64_t t) {
    result.timeline.push_back(point(t));
    for (std::size_t k = 0; k < shadows(); ++k) {
      TimelinePoint p = result.timeline.back();
      p.power_watts = shadow_facility_watts(k);
      p.energy_joules = shadow_energy_joules[k];
      shadow_results[k].timeline.push_back(p);
    }
  };
  // Power was constant from the last instant to `t`: its energy, and the window's metrics.
  const auto run_to = [&](int64_t t) {
    energy_joules += facility_watts() * scaled(t - last);
    for (std::size_t k = 0; k < shadows(); ++k) {
      shadow_energy_joules[k] += shadow_facility_watts(k) * scaled(t - last);
    }
    integrate(last, t);
  };
  for (std::optional<int64_t> t = next_time(events); t; t = next_time(events)) {
    const int64_t now = *t;
    if (result.timeline.empty()) {
      add_point(now);  // the cluster before anything happens
      first = now;
      engine_.begin(now);
    } else {
      run_to(now);
    }
    last = now;
    if (Status s = engine_.handle_departures(now); !s.ok()) return s;
    for (; next_event_ < events.size() && events[next_event_].time == now; ++next_event_) {
      const ResolvedEvent& e = events[next_event_];
      Status s = e.up ? engine_.node_up(e.node, now) : engine_.node_down(e.node, now);
      if (!s.ok()) return s;
    }
    if (Status s = engine_.handle_timers(now); !s.ok()) return s;
    for (; next_arrival_ < order_.size() && pod(order_[next_arrival_]).creation_time == now;
         ++next_arrival_) {
      engine_.enqueue(order_[next_arrival_], static_cast<uint32_t>(next_arrival_));
    }
    if (Status s = engine_.schedule(now); !s.ok()) return s;
    if (config_.timeline_step_s <= 0 || scaled(now) >= next_point) {
      add_point(now);
      next_point = scaled(now) + scaled(config_.timeline_step_s);
    }
    // Past the window with nothing waiting, what is left cannot change a metric.
    if (now >= config_.measure_to_s && engine_.queued() == 0 && next_arrival_ == order_.size()) {
      break;
    }
  }
  // A stated window is measured to its end even when the last event comes before it: the
  // cluster idles (or sleeps) until then, and that energy and the window's length count.
  const int64_t last_event = last;
  if (!result.timeline.empty() && config_.measure_to_s != std::numeric_limits<int64_t>::max() &&
      last < config_.measure_to_s) {
    run_to(config_.measure_to_s);
    last = config_.measure_to_s;
  }
  if (config_.timeline_step_s > 0 && !result.timeline.empty() &&
      result.timeline.back().time_s != scaled(last)) {
    add_point(last);
  }

  result.pods_started = engine_.started();
  result.pods_requeued = engine_.requeued();
  result.pods_queued_at_end = static_cast<int64_t>(engine_.queued());
  result.pods_never_started = result.pods_total - engine_.started();
  result.wakeups = engine_.wakeups();
  result.makespan_s = result.timeline.empty() ? 0.0 : scaled(last_event);

  const int64_t from = std::max(first, config_.measure_from_s);
  const int64_t to = std::min(last, config_.measure_to_s);
  result.window_s = to > from ? scaled(to - from) : 0.0;
  result.window_start_s = scaled(from);
  result.offered_load_pct = trace::offered_load_pct(workload_.pods, cluster_.total_gpu_milli(),
                                                    trace::LoadWindow{from, to});
  result.energy_kwh = window_energy_j_ / 3.6e6;
  result.energy_floor_kwh = window_floor_j_ / 3.6e6;
  result.gpu_hours = window_alloc_milli_s_ / kGpuMilli / 3600.0;
  result.kwh_per_gpu_hour = result.gpu_hours > 0 ? result.energy_kwh / result.gpu_hours : 0.0;
  result.pods_migrated = engine_.migrated();
  result.pods_rescued = engine_.rescued();
  result.nodes_drained = engine_.drained();
  result.lost_gpu_hours = scaled(1) * engine_.lost_gpu_seconds() / 3600.0;
  result.lost_energy_kwh = result.lost_gpu_hours * result.kwh_per_gpu_hour;
  result.pending_gpu_hours = window_pending_milli_s_ / kGpuMilli / 3600.0;
  if (result.window_s > 0) {
    result.gpu_alloc_pct =
        cluster_.total_gpu_milli() > 0
            ? 100.0 * window_alloc_milli_s_ /
                  (static_cast<double>(cluster_.total_gpu_milli()) * result.window_s)
            : 0.0;
    result.mean_nodes_awake = window_awake_node_s_ / result.window_s;
  }

  // The measured pods' delays, all of them and then by class, through one buffer (a replay of
  // millions of jobs keeps one list of them at a time).
  std::vector<double> delays;
  delays.reserve(static_cast<std::size_t>(engine_.started()));
  const auto stats_of = [&](auto wanted) {
    delays.clear();
    for (PodId id = 0; id < workload_.pods.size(); ++id) {
      const PodSpec& p = pod(id);
      const int64_t started = engine_.first_start(id);
      if (started < 0 || p.creation_time < config_.measure_from_s ||
          p.creation_time >= config_.measure_to_s || !wanted(p)) {
        continue;
      }
      delays.push_back(scaled(started - p.creation_time));
    }
    return delay_stats(delays);
  };
  const DelayStats overall = stats_of([](const PodSpec&) { return true; });
  result.mean_queue_delay_s = overall.mean_s;
  result.p99_queue_delay_s = overall.p99_s;
  result.delay_ls = stats_of([](const PodSpec& p) { return is_latency_sensitive(p); });
  result.delay_be = stats_of([](const PodSpec& p) { return !is_latency_sensitive(p); });
  for (std::size_t k = 0; k < shadows(); ++k) {
    ReplayResult& r = shadow_results[k];
    std::vector<TimelinePoint> timeline = std::move(r.timeline);
    r = result;
    r.timeline = std::move(timeline);
    r.energy_kwh = shadow_window_energy_j_[k] / 3.6e6;
    r.kwh_per_gpu_hour = r.gpu_hours > 0 ? r.energy_kwh / r.gpu_hours : 0.0;
    r.lost_energy_kwh = r.lost_gpu_hours * r.kwh_per_gpu_hour;
  }
  return Status::Ok();
}

// One replay scheduled with `figure_sets[0]`; with more sets (only where the schedule cannot
// depend on them), each further set accounts the same schedule's energy.
Result<std::vector<ReplayResult>> replay_accounted(
    const trace::Workload& workload, const frag::TargetWorkload& target,
    std::span<const std::vector<power::NodePower>> figure_sets, double pue,
    const ReplayConfig& config) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::vector<power::NodePower>& power = figure_sets.front();
  if (!(config.time_scale > 0) || !std::isfinite(config.time_scale)) {
    return Error{fmt::format("time scale must be a positive number, got {}", config.time_scale)};
  }
  if (!(pue > 0) || !std::isfinite(pue)) {
    return Error{fmt::format("PUE must be a positive number, got {}", pue)};
  }
  for (const std::vector<power::NodePower>& figures : figure_sets) {
    if (figures.size() != workload.nodes.size()) {
      return Error{fmt::format("power figures for {} nodes, but the cluster has {}", figures.size(),
                               workload.nodes.size())};
    }
  }
  const std::size_t n = workload.pods.size();
  if (n > std::numeric_limits<PodId>::max()) return Error{"too many pods for one replay"};
  const std::string_view source =
      workload.pods_source.empty() ? std::string_view("pod list") : workload.pods_source;
  for (std::size_t i = 0; i < n; ++i) {
    const PodSpec& p = workload.pods[i];
    if (p.creation_time < 0 || p.deletion_time < 0) {
      return Error{fmt::format(
          "{}: the pod list has no creation/deletion times (first such pod: {}, #{}); replay "
          "needs a full-schema openb pod list",
          source, p.name, i)};
    }
    if (p.deletion_time < p.creation_time) {
      return Error{fmt::format("{}: pod {}: deletion_time {} is before creation_time {}", source,
                               p.name, p.deletion_time, p.creation_time)};
    }
  }

  // Node events by time; at one time in the order given.
  const auto by_name = node_index_by_name(workload.nodes);
  std::vector<ResolvedEvent> events;
  events.reserve(config.node_events.size());
  for (const NodeEvent& e : config.node_events) {
    const auto it = by_name.find(e.node);
    if (it == by_name.end()) return Error{fmt::format("node event: unknown node '{}'", e.node)};
    if (e.time < 0)
      return Error{fmt::format("node event for {}: negative time {}", e.node, e.time)};
    events.push_back(ResolvedEvent{e.time, it->second, e.up});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const ResolvedEvent& a, const ResolvedEvent& b) { return a.time < b.time; });

  // Arrival order: (creation_time, index); several openb variants are not sorted.
  std::vector<PodId> order(n);
  for (PodId i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](PodId a, PodId b) {
    return workload.pods[a].creation_time < workload.pods[b].creation_time;
  });

  // The engine's view of the pods.
  std::vector<SiteJob> jobs(n);
  for (std::size_t i = 0; i < n; ++i) {
    const PodSpec& p = workload.pods[i];
    jobs[i] = SiteJob{&p, p.deletion_time - p.creation_time};
  }
  uint32_t key_count = 0;
  const std::vector<uint32_t> keys = feasibility_keys(jobs, key_count);

  Cluster cluster(workload.nodes);
  // One generator drives, in this order: the node tie order and the policy's own draws.
  Rng rng(config.seed);
  auto model = std::make_shared<frag::FragmentationModel>(target);
  policy::PolicyContext context;
  context.frag = model;
  context.shape_count = workload.shape_count;
  context.power = std::make_shared<const std::vector<power::NodePower>>(power);
  auto policy = policy::make_policy(config.policy, context);
  if (!policy.ok()) return Error{policy.error()};
  policy::Scheduler scheduler(*policy.value(), policy::random_tie_rank(cluster.size(), rng));
  power::ClusterPower cluster_power(power, cluster);

  ReplayResult result;
  result.config = config;
  if (!power.empty()) result.gpu_rule = power.front().gpu_rule;
  result.pods_total = static_cast<int64_t>(n);
  SiteEngineConfig engine_config;
  engine_config.queue = config.queue;
  engine_config.power_down_idle_s = config.power_down_idle_s;
  engine_config.wake_delay_s = config.wake_delay_s;
  engine_config.migrate_budget_pct = config.migrate_budget_pct;
  engine_config.max_moves = config.max_moves;
  engine_config.checkpoint_interval_s = config.checkpoint_interval_s;
  engine_config.consolidate = config.consolidate;
  SiteEngine engine(cluster, scheduler, rng, cluster_power, jobs, keys, key_count, engine_config);
  engine.set_policy_name(config.policy);
  Replay replay(workload, config, engine, cluster, pue, std::move(order));
  std::vector<power::ClusterPower> shadows;
  if (figure_sets.size() > 1) {
    for (std::size_t k = 1; k < figure_sets.size(); ++k)
      shadows.emplace_back(figure_sets[k], cluster);
    engine.account_also(&shadows);
    replay.account_also(shadows.size());
  }
  RecordInputs record_inputs;
  if (config.record) {
    policy.value()->capture_terms(true);
    record_inputs.cluster = &cluster;
    record_inputs.models = &workload.models;
    record_inputs.scheduler = &scheduler;
    record_inputs.frag = model.get();
    record_inputs.power = &power;
    record_inputs.pod_of = [&](PodId id) -> const PodSpec* {
      return id < workload.pods.size() ? &workload.pods[id] : nullptr;
    };
    engine.record_to(&record_inputs, &result.records,
                     [&config](int64_t t) { return static_cast<double>(t) / config.time_scale; });
  }
  std::vector<ReplayResult> shadow_results;
  if (Status s = replay.run(events, result, shadow_results); !s.ok()) return Error{s.message()};
  std::vector<ReplayResult> results;
  results.push_back(std::move(result));
  for (ReplayResult& r : shadow_results) results.push_back(std::move(r));
  for (std::size_t k = 1; k < results.size(); ++k) {
    if (!figure_sets[k].empty()) results[k].gpu_rule = figure_sets[k].front().gpu_rule;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  for (ReplayResult& r : results) r.wall_seconds = wall / static_cast<double>(results.size());
  return results;
}

// Figures that differ only in the GPU power rule, so that a policy blind to the rule schedules
// alike under each.
bool same_but_rule(const std::vector<power::NodePower>& a, const std::vector<power::NodePower>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const power::NodePower& x = a[i];
    const power::NodePower& y = b[i];
    if (x.gpu.idle_watts != y.gpu.idle_watts || x.gpu.max_watts != y.gpu.max_watts ||
        x.cpu.idle_watts != y.cpu.idle_watts || x.cpu.max_watts != y.cpu.max_watts ||
        x.cpu.cores_per_socket != y.cpu.cores_per_socket) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<ReplayResult> run_replay(const trace::Workload& workload, const frag::TargetWorkload& target,
                                const std::vector<power::NodePower>& power, double pue,
                                const ReplayConfig& config) {
  auto results = replay_accounted(workload, target, std::span(&power, 1), pue, config);
  if (!results.ok()) return Error{results.error()};
  return std::move(results.value().front());
}

Result<std::vector<ReplayResult>> run_replay_each(
    const trace::Workload& workload, const frag::TargetWorkload& target,
    std::span<const std::vector<power::NodePower>> figure_sets, double pue,
    const ReplayConfig& config) {
  if (figure_sets.empty()) return std::vector<ReplayResult>{};
  bool shared = config.power_down_idle_s < 0 && !config.record;
  for (std::size_t k = 1; shared && k < figure_sets.size(); ++k) {
    shared = same_but_rule(figure_sets.front(), figure_sets[k]);
  }
  if (shared) {
    policy::PolicyContext context;
    context.frag = std::make_shared<frag::FragmentationModel>(target);
    context.shape_count = workload.shape_count;
    context.power = std::make_shared<const std::vector<power::NodePower>>(figure_sets.front());
    auto policy = policy::make_policy(config.policy, context);
    if (!policy.ok()) return Error{policy.error()};
    shared = !policy.value()->reads_gpu_power_rule();
  }
  if (shared) return replay_accounted(workload, target, figure_sets, pue, config);
  std::vector<ReplayResult> results;
  for (const std::vector<power::NodePower>& figures : figure_sets) {
    auto r = run_replay(workload, target, figures, pue, config);
    if (!r.ok()) return Error{r.error()};
    results.push_back(std::move(r.value()));
  }
  return results;
}

}  // namespace greensched::sim
