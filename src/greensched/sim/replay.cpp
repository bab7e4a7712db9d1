#include "greensched/sim/replay.hpp"

#include "greensched/sim/decision_record.hpp"

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

// Power-state timers: a node finishing its wake-up, or a check whether it has been idle long
// enough to sleep.
enum class TimerKind : int { kWakeDone = 0, kIdleCheck = 1 };
struct Timer {
  int64_t time = 0;
  TimerKind kind = TimerKind::kIdleCheck;
  NodeIndex node = -1;
  uint32_t generation = 0;  // kWakeDone: the node's wake generation
  bool operator>(const Timer& o) const {
    return std::tie(time, kind, node, generation) > std::tie(o.time, o.kind, o.node, o.generation);
  }
};

DelayStats delay_stats(std::vector<double> delays) {
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

// The replay's mutable state and the steps of one instant.
class Replay {
 public:
  Replay(const trace::Workload& workload, const ReplayConfig& config, policy::Scheduler& scheduler,
         Rng& rng, power::ClusterPower& power, Cluster& cluster, double pue,
         std::vector<PodId> order, std::vector<uint32_t> feasibility_key, uint32_t key_count)
      : workload_(workload),
        config_(config),
        scheduler_(scheduler),
        rng_(rng),
        power_(power),
        cluster_(cluster),
        pue_(pue),
        order_(std::move(order)),
        rank_(order_.size()),
        feasibility_key_(std::move(feasibility_key)),
        failed_memory_(key_count, kNoFailure),
        failed_at_(key_count, 0),
        no_sleeper_memory_(key_count, kNoFailure),
        no_sleeper_at_(key_count, 0),
        first_start_(order_.size(), -1),
        generation_(order_.size(), 0),
        node_of_(order_.size(), -1),
        floor_watts_of_(order_.size(), 0.0),
        failed_(cluster.size(), false),
        sleeping_(cluster.size(), false),
        waking_(cluster.size(), false),
        wake_generation_(cluster.size(), 0),
        idle_since_(cluster.size(), 0) {
    for (uint32_t r = 0; r < order_.size(); ++r) rank_[order_[r]] = r;
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster.size()); ++n) {
      awake_ += cluster.state(n).online ? 1 : 0;
    }
  }

  // Also accounts the run's energy under each of `shadows` (other power figures of the same
  // nodes); only where the schedule cannot depend on them (see run_replay_each).
  void account_also(std::vector<power::ClusterPower> shadows) {
    shadows_ = std::move(shadows);
    shadow_window_energy_j_.assign(shadows_.size(), 0.0);
  }

  // Turns on decision records, appended to `out` (sim/decision_record.hpp).
  void record_to(const RecordInputs* inputs, std::string* out) {
    record_inputs_ = inputs;
    records_ = out;
    failure_recorded_.assign(order_.size(), false);
  }

  // Runs every instant to the end and fills the counts, delays, energy and timeline.
  // `shadow_results` get the same figures with each shadow's energy and power.
  Status run(const std::vector<ResolvedEvent>& events, ReplayResult& result,
             std::vector<ReplayResult>& shadow_results);

 private:
  static constexpr int64_t kNoFailure = std::numeric_limits<int64_t>::max();

  const PodSpec& pod(PodId id) const { return workload_.pods[id]; }
  double scaled(int64_t trace_seconds) const {
    return static_cast<double>(trace_seconds) / config_.time_scale;
  }
  bool power_down() const { return config_.power_down_idle_s >= 0; }
  double facility_watts() const { return (power_.watts() + waking_watts_) * pue_; }
  double shadow_facility_watts(std::size_t k) const {
    return (shadows_[k].watts() + waking_watts_) * pue_;
  }
  void update_power(NodeIndex n) {
    power_.update(cluster_, n);
    for (power::ClusterPower& shadow : shadows_) shadow.update(cluster_, n);
  }
  int64_t nodes_awake() const { return awake_ + waking_count_; }
  bool fits_awake(NodeIndex n, const PodSpec& p) const {
    return policy::filter_node(cluster_.spec(n), cluster_.state(n), p) ==
           policy::FilterReason::kFits;
  }
  bool fits_when_awake(NodeIndex n, const PodSpec& p) const {
    NodeState on = cluster_.state(n);
    on.online = true;
    return policy::filter_node(cluster_.spec(n), on, p) == policy::FilterReason::kFits;
  }
  double empty_node_watts(NodeIndex n) const {
    const NodeState& s = cluster_.state(n);
    return power::node_power_watts(cluster_.spec(n), power_.node_power(n), s.cpu_free_milli,
                                   s.gpu_free_milli.data());
  }

  // A node gained capacity: pods that found no node may now fit there.
  void freed(NodeIndex n) { freed_.push_back(n); }
  // Whether `id` is known not to fit: a pod with the same CPU and GPU request and no more
  // memory found no node, and no node that gained capacity since can take it.
  bool known_not_to_fit(PodId id);
  bool failure_is_stale(uint32_t key) const;
  void record_failure(PodId id);

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
    if (!timers_.empty()) consider(timers_.top().time);
    return t;
  }

  void integrate(int64_t from, int64_t to);
  void stop_pod(PodId id);
  void node_empty(NodeIndex n, int64_t now);
  Status depart_at(int64_t now);
  Status apply_node_event(const ResolvedEvent& e, int64_t now);
  Status fire_timers(int64_t now);
  Status start(PodId id, const policy::Decision& d, int64_t now);
  // A pod found no awake node: claim a node already waking that could host it, or wake one.
  void wake_for(PodId id, int64_t now);
  Status try_start_queued(int64_t now, std::size_t first_new_rank);

  const trace::Workload& workload_;
  const ReplayConfig& config_;
  policy::Scheduler& scheduler_;
  Rng& rng_;
  power::ClusterPower& power_;
  Cluster& cluster_;
  double pue_;
  std::vector<PodId> order_;  // pods by (creation_time, index)
  std::vector<uint32_t> rank_;
  std::vector<uint32_t> feasibility_key_;   // dense id of (cpu, num_gpu, gpu_milli, gpu_spec)
  std::vector<NodeIndex> freed_;            // every node that gained capacity, in order
  std::vector<int64_t> failed_memory_;      // per key: least memory that found no node ...
  std::vector<std::size_t> failed_at_;      // ... when freed_ had this many entries
  std::vector<int64_t> no_sleeper_memory_;  // per key: least memory no sleeping node fits ...
  std::vector<uint64_t> no_sleeper_at_;     // ... at this count of nodes put to sleep
  std::vector<int64_t> first_start_;        // trace seconds; -1 before the first start
  std::vector<uint32_t> generation_;        // bumped whenever a pod stops (departs or is evicted)
  std::vector<NodeIndex> node_of_;          // -1 when not running
  std::vector<double> floor_watts_of_;
  std::set<uint32_t> queue_;  // ranks of waiting pods, oldest first
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> departures_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  // Node power states: failed (a node event took it down), sleeping, waking; else awake.
  std::vector<bool> failed_, sleeping_, waking_;
  std::vector<uint32_t> wake_generation_;
  std::vector<int64_t> idle_since_;   // trace seconds; meaningful while awake and empty
  std::vector<NodeIndex> unclaimed_;  // waking nodes no failed pod of this pass has claimed
  int64_t awake_ = 0;
  int64_t waking_count_ = 0;
  int64_t sleeping_count_ = 0;
  uint64_t sleeps_ = 0;  // nodes put to sleep so far
  double waking_watts_ = 0;
  double floor_watts_ = 0;  // IT
  std::size_t freed_at_last_pass_ = 0;
  bool requeued_since_pass_ = false;  // evicted pods wait to be tried
  std::size_t next_arrival_ = 0;
  std::size_t next_event_ = 0;
  int64_t running_ = 0;
  int64_t started_ = 0;
  int64_t requeued_ = 0;
  int64_t wakeups_ = 0;
  // Integrals inside the measured window (scaled seconds).
  double window_energy_j_ = 0;
  std::vector<power::ClusterPower> shadows_;
  std::vector<double> shadow_window_energy_j_;
  double window_floor_j_ = 0;
  double window_alloc_milli_s_ = 0;
  double window_awake_node_s_ = 0;
  const RecordInputs* record_inputs_ = nullptr;
  std::string* records_ = nullptr;
  std::vector<bool> failure_recorded_;
  int64_t record_step_ = 0;
};

bool Replay::failure_is_stale(uint32_t key) const {
  return freed_.size() - failed_at_[key] > cluster_.size() / 16;
}

bool Replay::known_not_to_fit(PodId id) {
  const uint32_t key = feasibility_key_[id];
  const PodSpec& p = pod(id);
  if (p.memory_mib < failed_memory_[key]) return false;
  // Long since the failure: a scheduling cycle of a pod that fits nowhere is one pass over the
  // fit columns, cheaper than checking many freed nodes one by one.
  if (failure_is_stale(key)) return false;
  for (std::size_t i = failed_at_[key]; i < freed_.size(); ++i) {
    if (fits_awake(freed_[i], p)) return false;
  }
  if (p.memory_mib == failed_memory_[key]) failed_at_[key] = freed_.size();
  return true;
}

void Replay::record_failure(PodId id) {
  const uint32_t key = feasibility_key_[id];
  // A record too old to be checked (see known_not_to_fit) gives way to this fresh one.
  if (pod(id).memory_mib <= failed_memory_[key] || failure_is_stale(key)) {
    failed_memory_[key] = pod(id).memory_mib;
    failed_at_[key] = freed_.size();
  }
}

void Replay::integrate(int64_t from, int64_t to) {
  const int64_t a = std::max(from, config_.measure_from_s);
  const int64_t b = std::min(to, config_.measure_to_s);
  if (b <= a) return;
  const double dt = scaled(b - a);
  window_energy_j_ += facility_watts() * dt;
  for (std::size_t k = 0; k < shadows_.size(); ++k) {
    shadow_window_energy_j_[k] += shadow_facility_watts(k) * dt;
  }
  window_floor_j_ += floor_watts_ * pue_ * dt;
  window_alloc_milli_s_ += static_cast<double>(cluster_.allocated_gpu_milli()) * dt;
  window_awake_node_s_ += static_cast<double>(nodes_awake()) * dt;
}

Status Replay::start(PodId id, const policy::Decision& d, int64_t now) {
  const PodSpec& p = pod(id);
  if (Status s = cluster_.allocate(id, p, d.node, d.gpus); !s.ok()) {
    return Error{
        fmt::format("policy {} made an invalid placement: {}", config_.policy, s.message())};
  }
  update_power(d.node);
  if (first_start_[id] < 0) {
    first_start_[id] = now;
    ++started_;
  }
  node_of_[id] = d.node;
  floor_watts_of_[id] = power::pod_floor_watts(cluster_.spec(d.node), power_.node_power(d.node), p);
  floor_watts_ += floor_watts_of_[id];
  ++running_;
  departures_.push(Departure{now + (p.deletion_time - p.creation_time), id, generation_[id]});
  return Status::Ok();
}

// Bookkeeping of a pod that stopped running (released from the cluster by the caller).
void Replay::stop_pod(PodId id) {
  floor_watts_ -= floor_watts_of_[id];
  floor_watts_of_[id] = 0;
  node_of_[id] = -1;
  ++generation_[id];
  --running_;
}

void Replay::node_empty(NodeIndex n, int64_t now) {
  idle_since_[n] = now;
  if (power_down())
    timers_.push(Timer{now + config_.power_down_idle_s, TimerKind::kIdleCheck, n, 0});
}

Status Replay::depart_at(int64_t now) {
  while (!departures_.empty() && departures_.top().time == now) {
    const Departure dep = departures_.top();
    departures_.pop();
    if (dep.generation != generation_[dep.pod]) continue;  // evicted since
    const NodeIndex n = node_of_[dep.pod];
    if (Status s = cluster_.release(dep.pod); !s.ok()) return s;
    update_power(n);
    stop_pod(dep.pod);
    freed(n);
    if (cluster_.state(n).pods == 0) node_empty(n, now);
  }
  return Status::Ok();
}

Status Replay::apply_node_event(const ResolvedEvent& e, int64_t now) {
  const NodeIndex n = e.node;
  if (e.up) {
    if (!failed_[n]) return Status::Ok();
    failed_[n] = false;
    if (Status s = cluster_.set_online(n, true); !s.ok()) return s;
    ++awake_;
    update_power(n);
    freed(n);
    node_empty(n, now);
    return Status::Ok();
  }
  if (failed_[n]) return Status::Ok();
  failed_[n] = true;
  if (waking_[n]) {
    waking_[n] = false;
    --waking_count_;
    waking_watts_ -= empty_node_watts(n);
    return Status::Ok();
  }
  if (sleeping_[n]) {
    sleeping_[n] = false;
    --sleeping_count_;
    return Status::Ok();
  }
  if (cluster_.state(n).pods > 0) {
    for (PodId id = 0; id < node_of_.size(); ++id) {
      if (node_of_[id] != n) continue;
      if (Status s = cluster_.release(id); !s.ok()) return s;
      stop_pod(id);  // its departure is void; it restarts with its full duration
      ++requeued_;
      queue_.insert(rank_[id]);
      requeued_since_pass_ = true;
    }
  }
  // Only this node lost capacity, so what did not fit still does not.
  if (Status s = cluster_.set_online(n, false); !s.ok()) return s;
  --awake_;
  update_power(n);
  return Status::Ok();
}

Status Replay::fire_timers(int64_t now) {
  while (!timers_.empty() && timers_.top().time == now) {
    const Timer t = timers_.top();
    timers_.pop();
    const NodeIndex n = t.node;
    if (t.kind == TimerKind::kWakeDone) {
      if (!waking_[n] || t.generation != wake_generation_[n]) continue;
      waking_[n] = false;
      --waking_count_;
      waking_watts_ -= empty_node_watts(n);
      if (Status s = cluster_.set_online(n, true); !s.ok()) return s;
      ++awake_;
      update_power(n);
      freed(n);
      node_empty(n, now);
      continue;
    }
    const NodeState& st = cluster_.state(n);
    if (!st.online || st.pods > 0 || now - idle_since_[n] < config_.power_down_idle_s) continue;
    if (Status s = cluster_.set_online(n, false); !s.ok()) return s;
    --awake_;
    sleeping_[n] = true;
    ++sleeping_count_;
    ++sleeps_;
    update_power(n);
  }
  return Status::Ok();
}

void Replay::wake_for(PodId id, int64_t now) {
  const PodSpec& p = pod(id);
  for (auto it = unclaimed_.begin(); it != unclaimed_.end(); ++it) {
    if (fits_when_awake(*it, p)) {
      unclaimed_.erase(it);
      return;
    }
  }
  if (sleeping_count_ == 0) return;
  const uint32_t key = feasibility_key_[id];
  if (p.memory_mib >= no_sleeper_memory_[key] && no_sleeper_at_[key] == sleeps_) return;
  // The sleeping node that would draw the least with the pod; ties by the run's node order.
  NodeIndex best = -1;
  double best_watts = 0;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster_.size()); ++n) {
    if (!sleeping_[n] || !fits_when_awake(n, p)) continue;
    const double watts = empty_node_watts(n) +
                         policy::least_power_increase(cluster_, n, p, power_.node_power(n)).watts;
    if (best < 0 || watts < best_watts ||
        (watts == best_watts && scheduler_.tie_rank()[n] < scheduler_.tie_rank()[best])) {
      best = n;
      best_watts = watts;
    }
  }
  if (best < 0) {
    if (no_sleeper_at_[key] != sleeps_ || p.memory_mib < no_sleeper_memory_[key]) {
      no_sleeper_memory_[key] = p.memory_mib;
      no_sleeper_at_[key] = sleeps_;
    }
    return;
  }
  sleeping_[best] = false;
  --sleeping_count_;
  waking_[best] = true;
  ++waking_count_;
  ++wakeups_;
  waking_watts_ += empty_node_watts(best);
  timers_.push(
      Timer{now + config_.wake_delay_s, TimerKind::kWakeDone, best, ++wake_generation_[best]});
}

Status Replay::try_start_queued(int64_t now, std::size_t first_new_rank) {
  const bool fifo = config_.queue == QueueDiscipline::kFifo;
  // Nothing gained capacity since the last pass: only pods that arrived since can start, and
  // under FIFO only when nothing older waits.
  auto it = queue_.begin();
  if (freed_.size() == freed_at_last_pass_ && !requeued_since_pass_) {
    it = queue_.lower_bound(static_cast<uint32_t>(first_new_rank));
    if (it == queue_.end() || (fifo && it != queue_.begin())) return Status::Ok();
  }
  freed_at_last_pass_ = freed_.size();
  requeued_since_pass_ = false;
  unclaimed_.clear();
  if (waking_count_ > 0) {
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster_.size()); ++n) {
      if (waking_[n]) unclaimed_.push_back(n);
    }
  }
  while (it != queue_.end()) {
    const PodId id = order_[*it];
    bool fits = !known_not_to_fit(id);
    if (fits) {
      policy::FilterCounts counts;
      const bool recording = record_inputs_ != nullptr;
      const policy::Decision d =
          scheduler_.schedule(cluster_, pod(id), rng_, recording ? &counts : nullptr);
      if (recording && (d.node >= 0 || !failure_recorded_[id])) {
        RecordInputs in = *record_inputs_;
        in.counts = &counts;
        *records_ += make_record(in, pod(id), d, record_step_++, scaled(now)).dump();
        *records_ += '\n';
        if (d.node < 0) failure_recorded_[id] = true;
      }
      if (d.node >= 0) {
        if (Status s = start(id, d, now); !s.ok()) return s;
        it = queue_.erase(it);
        continue;
      }
      record_failure(id);
      fits = false;
    }
    if (power_down() && (sleeping_count_ > 0 || !unclaimed_.empty())) wake_for(id, now);
    if (fifo) break;
    ++it;
  }
  freed_at_last_pass_ = freed_.size();
  return Status::Ok();
}

Status Replay::run(const std::vector<ResolvedEvent>& events, ReplayResult& result,
                   std::vector<ReplayResult>& shadow_results) {
  double energy_joules = 0;
  std::vector<double> shadow_energy_joules(shadows_.size(), 0.0);
  shadow_results.resize(shadows_.size());
  int64_t last = 0;
  int64_t first = 0;
  double next_point = -std::numeric_limits<double>::infinity();
  const auto point = [&](int64_t t) {
    return TimelinePoint{scaled(t),
                         running_,
                         static_cast<int64_t>(queue_.size()),
                         static_cast<double>(cluster_.allocated_gpu_milli()) / kGpuMilli,
                         facility_watts(),
                         energy_joules,
                         nodes_awake()};
  };
  const auto add_point = [&](int64_t t) {
    result.timeline.push_back(point(t));
    for (std::size_t k = 0; k < shadows_.size(); ++k) {
      TimelinePoint p = result.timeline.back();
      p.power_watts = shadow_facility_watts(k);
      p.energy_joules = shadow_energy_joules[k];
      shadow_results[k].timeline.push_back(p);
    }
  };
  for (std::optional<int64_t> t = next_time(events); t; t = next_time(events)) {
    const int64_t now = *t;
    if (result.timeline.empty()) {
      add_point(now);  // the cluster before anything happens
      first = now;
      if (power_down()) {
        for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster_.size()); ++n) node_empty(n, now);
      }
    } else {
      // Power was constant since the last instant.
      energy_joules += facility_watts() * scaled(now - last);
      for (std::size_t k = 0; k < shadows_.size(); ++k) {
        shadow_energy_joules[k] += shadow_facility_watts(k) * scaled(now - last);
      }
      integrate(last, now);
    }
    last = now;
    if (Status s = depart_at(now); !s.ok()) return s;
    for (; next_event_ < events.size() && events[next_event_].time == now; ++next_event_) {
      if (Status s = apply_node_event(events[next_event_], now); !s.ok()) return s;
    }
    if (Status s = fire_timers(now); !s.ok()) return s;
    const std::size_t first_new = next_arrival_;
    for (; next_arrival_ < order_.size() && pod(order_[next_arrival_]).creation_time == now;
         ++next_arrival_) {
      queue_.insert(static_cast<uint32_t>(next_arrival_));
    }
    if (Status s = try_start_queued(now, first_new); !s.ok()) return s;
    // Pods of zero duration leave at the instant they start, which may let others start.
    for (drop_stale_departures(); !departures_.empty() && departures_.top().time == now;
         drop_stale_departures()) {
      if (Status s = depart_at(now); !s.ok()) return s;
      if (Status s = try_start_queued(now, next_arrival_); !s.ok()) return s;
    }
    if (config_.timeline_step_s <= 0 || scaled(now) >= next_point) {
      add_point(now);
      next_point = scaled(now) + scaled(config_.timeline_step_s);
    }
    // Past the window with nothing waiting, what is left cannot change a metric.
    if (now >= config_.measure_to_s && queue_.empty() && next_arrival_ == order_.size()) break;
  }
  if (config_.timeline_step_s > 0 && !result.timeline.empty() &&
      result.timeline.back().time_s != scaled(last)) {
    add_point(last);
  }

  result.pods_started = started_;
  result.pods_requeued = requeued_;
  result.pods_queued_at_end = static_cast<int64_t>(queue_.size());
  result.pods_never_started = result.pods_total - started_;
  result.wakeups = wakeups_;
  result.makespan_s = result.timeline.empty() ? 0.0 : scaled(last);

  const int64_t from = std::max(first, config_.measure_from_s);
  const int64_t to = std::min(last, config_.measure_to_s);
  result.window_s = to > from ? scaled(to - from) : 0.0;
  result.offered_load_pct = trace::offered_load_pct(workload_.pods, cluster_.total_gpu_milli(),
                                                    trace::LoadWindow{from, to});
  result.energy_kwh = window_energy_j_ / 3.6e6;
  result.energy_floor_kwh = window_floor_j_ / 3.6e6;
  result.gpu_hours = window_alloc_milli_s_ / kGpuMilli / 3600.0;
  result.kwh_per_gpu_hour = result.gpu_hours > 0 ? result.energy_kwh / result.gpu_hours : 0.0;
  if (result.window_s > 0) {
    result.gpu_alloc_pct =
        cluster_.total_gpu_milli() > 0
            ? 100.0 * window_alloc_milli_s_ /
                  (static_cast<double>(cluster_.total_gpu_milli()) * result.window_s)
            : 0.0;
    result.mean_nodes_awake = window_awake_node_s_ / result.window_s;
  }

  std::vector<double> all, ls, be;
  all.reserve(static_cast<std::size_t>(started_));
  for (PodId id = 0; id < first_start_.size(); ++id) {
    const PodSpec& p = pod(id);
    if (first_start_[id] < 0 || p.creation_time < config_.measure_from_s ||
        p.creation_time >= config_.measure_to_s) {
      continue;
    }
    const double delay = scaled(first_start_[id] - p.creation_time);
    all.push_back(delay);
    (is_latency_sensitive(p) ? ls : be).push_back(delay);
  }
  const DelayStats overall = delay_stats(std::move(all));
  result.mean_queue_delay_s = overall.mean_s;
  result.p99_queue_delay_s = overall.p99_s;
  result.delay_ls = delay_stats(std::move(ls));
  result.delay_be = delay_stats(std::move(be));
  for (std::size_t k = 0; k < shadows_.size(); ++k) {
    ReplayResult& r = shadow_results[k];
    std::vector<TimelinePoint> timeline = std::move(r.timeline);
    r = result;
    r.timeline = std::move(timeline);
    r.energy_kwh = shadow_window_energy_j_[k] / 3.6e6;
    r.kwh_per_gpu_hour = r.gpu_hours > 0 ? r.energy_kwh / r.gpu_hours : 0.0;
    r.gpu_rule =
        shadows_[k].figures().empty() ? result.gpu_rule : shadows_[k].figures().front().gpu_rule;
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
  if (!power.empty()) result.gpu_rule = power.front().gpu_rule;
  result.pods_total = static_cast<int64_t>(n);
  Replay replay(workload, config, scheduler, rng, cluster_power, cluster, pue, std::move(order),
                std::move(feasibility_key), static_cast<uint32_t>(keys.size()));
  if (figure_sets.size() > 1) {
    std::vector<power::ClusterPower> shadows;
    for (std::size_t k = 1; k < figure_sets.size(); ++k)
      shadows.emplace_back(figure_sets[k], cluster);
    replay.account_also(std::move(shadows));
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
    replay.record_to(&record_inputs, &result.records);
  }
  std::vector<ReplayResult> shadow_results;
  if (Status s = replay.run(events, result, shadow_results); !s.ok()) return Error{s.message()};
  std::vector<ReplayResult> results;
  results.push_back(std::move(result));
  for (ReplayResult& r : shadow_results) results.push_back(std::move(r));
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
