#include "greensched/sim/replay.hpp"

#include "greensched/explain/decision_record.hpp"

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
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::sim {

std::string_view queue_name(QueueDiscipline queue) {
  return queue == QueueDiscipline::kFifo ? "fifo" : "backfill";
}

Result<QueueDiscipline> parse_queue_discipline(std::string_view text) {
  if (text == "fifo") return QueueDiscipline::kFifo;
  if (text == "backfill") return QueueDiscipline::kBackfill;
  return Error{fmt::format("unknown queue discipline '{}' (expected fifo or backfill)", text)};
}

namespace {

std::unordered_map<std::string, NodeIndex> node_index_by_name(const std::vector<NodeSpec>& nodes) {
  std::unordered_map<std::string, NodeIndex> by_name;
  by_name.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    by_name.emplace(nodes[i].name, static_cast<NodeIndex>(i));
  }
  return by_name;
}

struct Departure {
  int64_t time = 0;
  PodId pod = 0;
  uint32_t generation = 0;  // the pod's generation when it started; stale once it stopped
  bool operator>(const Departure& o) const {
    return std::tie(time, pod, generation) > std::tie(o.time, o.pod, o.generation);
  }
};

struct ResolvedEvent {
  int64_t time = 0;
  NodeIndex node = -1;
  bool up = false;
};

// The replay's mutable state and the steps of one instant.
class Replay {
 public:
  Replay(const trace::Workload& workload, const ReplayConfig& config, policy::Scheduler& scheduler,
         Rng& rng, power::ClusterPower& power, Cluster& cluster, std::vector<PodId> order,
         std::vector<uint32_t> feasibility_key, uint32_t key_count)
      : workload_(workload),
        config_(config),
        scheduler_(scheduler),
        rng_(rng),
        power_(power),
        cluster_(cluster),
        order_(std::move(order)),
        rank_(order_.size()),
        feasibility_key_(std::move(feasibility_key)),
        failed_memory_(key_count, kNoFailure),
        first_start_(order_.size(), -1),
        generation_(order_.size(), 0),
        node_of_(order_.size(), -1) {
    for (uint32_t r = 0; r < order_.size(); ++r) rank_[order_[r]] = r;
  }

  // Turns on decision records, appended to `out` (explain/decision_record.hpp).
  void record_to(const explain::RecordInputs* inputs, std::string* out) {
    record_inputs_ = inputs;
    records_ = out;
    failure_recorded_.assign(order_.size(), false);
  }

  // Runs every instant to the end and fills the counts, delays, energy and timeline.
  Status run(const std::vector<ResolvedEvent>& events, double pue, ReplayResult& result);

 private:
  static constexpr int64_t kNoFailure = std::numeric_limits<int64_t>::max();

  const PodSpec& pod(PodId id) const { return workload_.pods[id]; }
  double scaled(int64_t trace_seconds) const {
    return static_cast<double>(trace_seconds) / config_.time_scale;
  }
  double facility_watts(double pue) const { return power_.watts() * pue; }

  // Resources grew somewhere: every earlier "does not fit" may now be wrong.
  void forget_failures() {
    for (uint32_t key : failed_keys_) failed_memory_[key] = kNoFailure;
    failed_keys_.clear();
  }
  // Whether `id` is known not to fit: a pod with the same CPU and GPU request and no more
  // memory found no node, and no resource was freed since.
  bool known_not_to_fit(PodId id) const {
    return pod(id).memory_mib >= failed_memory_[feasibility_key_[id]];
  }
  void record_failure(PodId id) {
    int64_t& m = failed_memory_[feasibility_key_[id]];
    if (m == kNoFailure) failed_keys_.push_back(feasibility_key_[id]);
    m = std::min(m, pod(id).memory_mib);
  }

  void drop_stale_departures() {
    while (!departures_.empty() &&
           departures_.top().generation != generation_[departures_.top().pod]) {
      departures_.pop();
    }
  }
  std::optional<int64_t> next_time(const std::vector<ResolvedEvent>& events) {
    drop_stale_departures();
    std::optional<int64_t> t;
    const auto consider = [&t](int64_t v) {
      if (!t || v < *t) t = v;
    };
    if (next_arrival_ < order_.size()) consider(pod(order_[next_arrival_]).creation_time);
    if (next_event_ < events.size()) consider(events[next_event_].time);
    if (!departures_.empty()) consider(departures_.top().time);
    return t;
  }

  Status depart_at(int64_t now);
  Status apply_node_event(const ResolvedEvent& e);
  Status start(PodId id, const policy::Decision& d, int64_t now);
  Status try_start_queued(int64_t now);

  const trace::Workload& workload_;
  const ReplayConfig& config_;
  policy::Scheduler& scheduler_;
  Rng& rng_;
  power::ClusterPower& power_;
  Cluster& cluster_;
  std::vector<PodId> order_;  // pods by (creation_time, index)
  std::vector<uint32_t> rank_;
  std::vector<uint32_t> feasibility_key_;  // dense id of (cpu, num_gpu, gpu_milli, gpu_spec)
  std::vector<int64_t> failed_memory_;     // per key: least memory that found no node
  std::vector<uint32_t> failed_keys_;
  std::vector<int64_t> first_start_;  // trace seconds; -1 before the first start
  std::vector<uint32_t> generation_;  // bumped whenever a pod stops (departs or is evicted)
  std::vector<NodeIndex> node_of_;    // -1 when not running
  std::set<uint32_t> queue_;          // ranks of waiting pods, oldest first
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> departures_;
  std::size_t next_arrival_ = 0;
  std::size_t next_event_ = 0;
  int64_t running_ = 0;
  int64_t started_ = 0;
  int64_t requeued_ = 0;
  const explain::RecordInputs* record_inputs_ = nullptr;
  std::string* records_ = nullptr;
  std::vector<bool> failure_recorded_;
  int64_t record_step_ = 0;
};

Status Replay::start(PodId id, const policy::Decision& d, int64_t now) {
  const PodSpec& p = pod(id);
  if (Status s = cluster_.allocate(id, p, d.node, d.gpus); !s.ok()) {
    return Error{
        fmt::format("policy {} made an invalid placement: {}", config_.policy, s.message())};
  }
  power_.update(cluster_, d.node);
  if (first_start_[id] < 0) {
    first_start_[id] = now;
    ++started_;
  }
  node_of_[id] = d.node;
  ++running_;
  departures_.push(Departure{now + (p.deletion_time - p.creation_time), id, generation_[id]});
  return Status::Ok();
}

Status Replay::depart_at(int64_t now) {
  while (!departures_.empty() && departures_.top().time == now) {
    const Departure dep = departures_.top();
    departures_.pop();
    if (dep.generation != generation_[dep.pod]) continue;  // evicted since
    if (Status s = cluster_.release(dep.pod); !s.ok()) return s;
    power_.update(cluster_, node_of_[dep.pod]);
    node_of_[dep.pod] = -1;
    ++generation_[dep.pod];
    --running_;
    forget_failures();
  }
  return Status::Ok();
}

Status Replay::apply_node_event(const ResolvedEvent& e) {
  const bool online = cluster_.state(e.node).online;
  if (e.up) {
    if (online) return Status::Ok();
    if (Status s = cluster_.set_online(e.node, true); !s.ok()) return s;
    power_.update(cluster_, e.node);
    forget_failures();
    return Status::Ok();
  }
  if (!online) return Status::Ok();
  if (cluster_.state(e.node).pods > 0) {
    for (PodId id = 0; id < node_of_.size(); ++id) {
      if (node_of_[id] != e.node) continue;
      if (Status s = cluster_.release(id); !s.ok()) return s;
      node_of_[id] = -1;
      ++generation_[id];  // its departure is void; it restarts with its full duration
      --running_;
      ++requeued_;
      queue_.insert(rank_[id]);
    }
  }
  // Only this node lost capacity, so what did not fit still does not.
  if (Status s = cluster_.set_online(e.node, false); !s.ok()) return s;
  power_.update(cluster_, e.node);
  return Status::Ok();
}

Status Replay::try_start_queued(int64_t now) {
  const bool fifo = config_.queue == QueueDiscipline::kFifo;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const PodId id = order_[*it];
    if (known_not_to_fit(id)) {
      if (fifo) break;
      ++it;
      continue;
    }
    policy::FilterCounts counts;
    const bool recording = record_inputs_ != nullptr;
    const policy::Decision d =
        scheduler_.schedule(cluster_, pod(id), rng_, recording ? &counts : nullptr);
    if (recording && (d.node >= 0 || !failure_recorded_[id])) {
      explain::RecordInputs in = *record_inputs_;
      in.counts = &counts;
      *records_ += explain::make_record(in, pod(id), d, record_step_++, scaled(now)).dump();
      *records_ += '\n';
      if (d.node < 0) failure_recorded_[id] = true;
    }
    if (d.node < 0) {
      record_failure(id);
      if (fifo) break;
      ++it;
      continue;
    }
    if (Status s = start(id, d, now); !s.ok()) return s;
    it = queue_.erase(it);
  }
  return Status::Ok();
}

Status Replay::run(const std::vector<ResolvedEvent>& events, double pue, ReplayResult& result) {
  double energy_joules = 0;
  int64_t last = 0;
  const auto point = [&](int64_t t) {
    return TimelinePoint{scaled(t),
                         running_,
                         static_cast<int64_t>(queue_.size()),
                         static_cast<double>(cluster_.allocated_gpu_milli()) / kGpuMilli,
                         facility_watts(pue),
                         energy_joules};
  };
  for (std::optional<int64_t> t = next_time(events); t; t = next_time(events)) {
    const int64_t now = *t;
    if (result.timeline.empty()) {
      result.timeline.push_back(point(now));  // the cluster before anything happens
    } else {
      // Power was constant since the last instant.
      energy_joules += facility_watts(pue) * scaled(now - last);
    }
    last = now;
    if (Status s = depart_at(now); !s.ok()) return s;
    for (; next_event_ < events.size() && events[next_event_].time == now; ++next_event_) {
      if (Status s = apply_node_event(events[next_event_]); !s.ok()) return s;
    }
    for (; next_arrival_ < order_.size() && pod(order_[next_arrival_]).creation_time == now;
         ++next_arrival_) {
      queue_.insert(static_cast<uint32_t>(next_arrival_));
    }
    if (Status s = try_start_queued(now); !s.ok()) return s;
    // Pods of zero duration leave at the instant they start, which may let others start.
    for (drop_stale_departures(); !departures_.empty() && departures_.top().time == now;
         drop_stale_departures()) {
      if (Status s = depart_at(now); !s.ok()) return s;
      if (Status s = try_start_queued(now); !s.ok()) return s;
    }
    result.timeline.push_back(point(now));
  }

  result.pods_started = started_;
  result.pods_requeued = requeued_;
  result.pods_queued_at_end = static_cast<int64_t>(queue_.size());
  result.pods_never_started = result.pods_total - started_;
  result.energy_kwh = energy_joules / 3.6e6;
  result.makespan_s = result.timeline.empty() ? 0.0 : scaled(last);

  std::vector<double> delays;
  delays.reserve(static_cast<std::size_t>(started_));
  for (PodId id = 0; id < first_start_.size(); ++id) {
    if (first_start_[id] >= 0) delays.push_back(scaled(first_start_[id] - pod(id).creation_time));
  }
  if (!delays.empty()) {
    std::sort(delays.begin(), delays.end());
    double sum = 0;
    for (double d : delays) sum += d;
    result.mean_queue_delay_s = sum / static_cast<double>(delays.size());
    // Nearest rank: element ceil(0.99 n) - 1, in integers to avoid 0.99 * 100 = 98.99...
    const std::size_t rank = (delays.size() * 99 + 99) / 100;
    result.p99_queue_delay_s = delays[rank - 1];
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<NodeEvent>> read_node_events(const std::string& path,
                                                const std::vector<NodeSpec>& nodes) {
  auto text = trace::read_file(path);
  if (!text.ok()) return Error{text.error()};
  trace::CsvReader csv(text.value(), path);
  if (Status s = csv.read_header(); !s.ok()) return Error{s.message()};
  std::array<std::size_t, 3> col{};
  const std::array<const char*, 3> names{"time", "node", "event"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto c = csv.column(names[i]);
    if (!c)
      return csv.error(fmt::format("missing column '{}' (expected time,node,event)", names[i]));
    col[i] = *c;
  }
  const auto by_name = node_index_by_name(nodes);
  std::vector<NodeEvent> events;
  while (csv.next()) {
    const auto& f = csv.fields();
    if (f.size() != csv.header().size()) {
      return csv.error(fmt::format("expected {} fields as in the header, got {}",
                                   csv.header().size(), f.size()));
    }
    NodeEvent e;
    const auto time = trace::parse_int(f[col[0]]);
    if (!time) return csv.error(fmt::format("time: '{}' is not an integer", f[col[0]]));
    if (*time < 0) return csv.error(fmt::format("time: {} is negative", *time));
    e.time = *time;
    e.node = std::string(f[col[1]]);
    if (!by_name.contains(e.node)) return csv.error(fmt::format("node: unknown node '{}'", e.node));
    const std::string_view kind = f[col[2]];
    if (kind == "down") {
      e.up = false;
    } else if (kind == "up") {
      e.up = true;
    } else {
      return csv.error(fmt::format("event: unknown event '{}' (expected down or up)", kind));
    }
    events.push_back(std::move(e));
  }
  return events;
}

Result<ReplayResult> run_replay(const trace::Workload& workload, const frag::TargetWorkload& target,
                                const std::vector<power::NodePower>& power, double pue,
                                const ReplayConfig& config) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (!(config.time_scale > 0) || !std::isfinite(config.time_scale)) {
    return Error{fmt::format("time scale must be a positive number, got {}", config.time_scale)};
  }
  if (!(pue > 0) || !std::isfinite(pue)) {
    return Error{fmt::format("PUE must be a positive number, got {}", pue)};
  }
  if (power.size() != workload.nodes.size()) {
    return Error{fmt::format("power figures for {} nodes, but the cluster has {}", power.size(),
                             workload.nodes.size())};
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

  // Whether a pod fits anywhere depends on its CPU and GPU request (the FGD shape, computed
  // here rather than trusted from pod.shape) and on its memory.
  std::map<std::tuple<int64_t, int, int32_t, GpuModelSet>, uint32_t> keys;
  std::vector<uint32_t> feasibility_key(n);
  for (std::size_t i = 0; i < n; ++i) {
    const PodSpec& p = workload.pods[i];
    const auto [it, inserted] =
        keys.try_emplace(std::make_tuple(p.cpu_milli, p.num_gpu, p.gpu_milli, p.gpu_spec),
                         static_cast<uint32_t>(keys.size()));
    feasibility_key[i] = it->second;
  }

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
  result.pods_total = static_cast<int64_t>(n);
  Replay replay(workload, config, scheduler, rng, cluster_power, cluster, std::move(order),
                std::move(feasibility_key), static_cast<uint32_t>(keys.size()));
  explain::RecordInputs record_inputs;
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
    replay.record_to(&record_inputs, &result.records);
  }
  if (Status s = replay.run(events, pue, result); !s.ok()) return Error{s.message()};
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace greensched::sim
