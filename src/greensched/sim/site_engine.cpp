#include "greensched/sim/site_engine.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "greensched/defrag/drain.hpp"
#include "greensched/policy/filter.hpp"
#include "greensched/policy/power_delta.hpp"

namespace greensched::sim {

std::vector<uint32_t> feasibility_keys(const std::vector<SiteJob>& jobs, uint32_t& key_count) {
  std::map<PodShape, uint32_t> keys;
  std::vector<uint32_t> out(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto [it, inserted] =
        keys.try_emplace(jobs[i].pod->shape_fields(), static_cast<uint32_t>(keys.size()));
    out[i] = it->second;
  }
  key_count = static_cast<uint32_t>(keys.size());
  return out;
}

bool SiteEngine::Departure::operator>(const Departure& o) const {
  return std::tie(time, pod, generation) > std::tie(o.time, o.pod, o.generation);
}

bool SiteEngine::Timer::operator>(const Timer& o) const {
  return std::tie(time, kind, node, generation) > std::tie(o.time, o.kind, o.node, o.generation);
}

SiteEngine::SiteEngine(Cluster& cluster, policy::Scheduler& scheduler, Rng& rng,
                       power::ClusterPower& power, const std::vector<SiteJob>& jobs,
                       const std::vector<uint32_t>& keys, uint32_t key_count,
                       const SiteEngineConfig& config, SiteEngineListener* listener)
    : cluster_(cluster),
      scheduler_(scheduler),
      rng_(rng),
      power_(power),
      jobs_(jobs),
      feasibility_key_(keys),
      config_(config),
      listener_(listener),
      rank_(jobs.size(), 0),
      failed_memory_(key_count, kNoFailure),
      failed_at_(key_count, 0),
      no_sleeper_memory_(key_count, kNoFailure),
      no_sleeper_at_(key_count, 0),
      first_start_(jobs.size(), -1),
      start_(jobs.size(), -1),
      generation_(jobs.size(), 0),
      node_of_(jobs.size(), -1),
      reserved_(jobs.size(), -1),
      node_jobs_(cluster.size()),
      failed_(cluster.size(), false),
      sleeping_(cluster.size(), false),
      waking_(cluster.size(), false),
      held_(cluster.size(), false),
      held_awake_(cluster.size(), false),
      held_arrived_(cluster.size(), kNoPod),
      wake_generation_(cluster.size(), 0),
      idle_since_(cluster.size(), 0) {
  cluster.reserve_pods(jobs.size());
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster.size()); ++n) {
    awake_ += cluster.state(n).online ? 1 : 0;
  }
  if (config_.migrate_budget_pct > 0) {
    end_.assign(jobs.size(), 0);
    // Only running jobs move (not those with room reserved on their way).
    planner_ = std::make_unique<defrag::MovePlanner>(
        [this](PodId id) -> const PodSpec* { return id < jobs_.size() ? jobs_[id].pod : nullptr; },
        [this](PodId id) { return node_of_[id] >= 0; });
  }
}

void SiteEngine::queue_insert(PodId id) {
  queue_.insert(queue_entry(id));
  queued_gpu_milli_ += pod(id).total_gpu_milli();
}

void SiteEngine::record_to(const RecordInputs* inputs, std::string* out,
                           std::function<double(int64_t)> time) {
  record_inputs_ = inputs;
  records_ = out;
  record_time_ = std::move(time);
  failure_recorded_.assign(jobs_.size(), false);
}

SiteEngine::QueueEntry SiteEngine::queue_entry(PodId id) const {
  const uint64_t rank = rank_[id];
  if (config_.queue != QueueDiscipline::kPriority) return {rank, id};
  return {(jobs_[id].latency_sensitive() ? uint64_t{0} : uint64_t{1}) << 32 | rank, id};
}

void SiteEngine::update_power(NodeIndex n) {
  power_.update(cluster_, n);
  if (shadows_ != nullptr) {
    for (power::ClusterPower& shadow : *shadows_) shadow.update(cluster_, n);
  }
  ++version_;
}

bool SiteEngine::fits_awake(NodeIndex n, const PodSpec& p) const {
  return policy::filter_node(cluster_.spec(n), cluster_.state(n), p) == policy::FilterReason::kFits;
}

bool SiteEngine::fits_when_awake(NodeIndex n, const PodSpec& p) const {
  NodeState on = cluster_.state(n);
  on.online = true;
  return policy::filter_node(cluster_.spec(n), on, p) == policy::FilterReason::kFits;
}

double SiteEngine::empty_node_watts(NodeIndex n) const {
  const NodeState& s = cluster_.state(n);
  return power::node_power_watts(cluster_.spec(n), power_.node_power(n), s.cpu_free_milli,
                                 s.gpu_free_milli.data());
}

bool SiteEngine::failure_is_stale(uint32_t key) const {
  return freed_.size() - failed_at_[key] > cluster_.size() / 16;
}

bool SiteEngine::known_not_to_fit(PodId id) {
  const uint32_t key = feasibility_key_[id];
  const PodSpec& p = pod(id);
  if (p.memory_mib < failed_memory_[key]) return false;
  // Long since the failure: a scheduling cycle of a job that fits nowhere is one pass over the
  // fit columns, cheaper than checking many freed nodes one by one.
  if (failure_is_stale(key)) return false;
  for (std::size_t i = failed_at_[key]; i < freed_.size(); ++i) {
    if (fits_awake(freed_[i], p)) return false;
  }
  if (p.memory_mib == failed_memory_[key]) failed_at_[key] = freed_.size();
  return true;
}

void SiteEngine::record_failure(PodId id) {
  const uint32_t key = feasibility_key_[id];
  // A record too old to be checked (see known_not_to_fit) gives way to this fresh one.
  if (pod(id).memory_mib <= failed_memory_[key] || failure_is_stale(key)) {
    failed_memory_[key] = pod(id).memory_mib;
    failed_at_[key] = freed_.size();
  }
}

void SiteEngine::drop_stale_departures() {
  while (!departures_.empty() &&
         departures_.top().generation != generation_[departures_.top().pod]) {
    departures_.pop();
  }
}

std::optional<int64_t> SiteEngine::next_time() {
  drop_stale_departures();
  std::optional<int64_t> t;
  if (!departures_.empty()) t = departures_.top().time;
  if (!timers_.empty() && (!t || timers_.top().time < *t)) t = timers_.top().time;
  return t;
}

void SiteEngine::begin(int64_t now) {
  if (!power_down()) return;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster_.size()); ++n) node_empty(n, now);
}

void SiteEngine::enqueue(PodId id, uint32_t rank) {
  rank_[id] = rank;
  queue_insert(id);
  new_keys_.push_back(queue_entry(id));
}

bool SiteEngine::withdraw(PodId id) {
  const QueueEntry e = queue_entry(id);
  if (queue_.erase(e) == 0) return false;
  queued_gpu_milli_ -= pod(id).total_gpu_milli();
  std::erase(new_keys_, e);
  ++version_;
  return true;
}

Status SiteEngine::start(PodId id, const policy::Decision& d, int64_t now) {
  const PodSpec& p = pod(id);
  if (Status s = cluster_.allocate(id, p, d.node, d.gpus); !s.ok()) {
    return Error{fmt::format("policy {} made an invalid placement: {}", policy_name_, s.message()),
                 ErrorCode::kInternal};
  }
  update_power(d.node);
  started(id, d.node, now);
  return Status::Ok();
}

void SiteEngine::started(PodId id, NodeIndex node, int64_t now) {
  if (first_start_[id] < 0) {
    first_start_[id] = now;
    ++started_;
  }
  start_[id] = now;
  node_of_[id] = node;
  node_jobs_[node].push_back(id);
  floor_watts_ += power::pod_floor_watts(cluster_.spec(node), power_.node_power(node), pod(id));
  ++running_;
  departures_.push(Departure{now + jobs_[id].duration_s, id, generation_[id]});
  if (!end_.empty()) end_[id] = now + jobs_[id].duration_s;
  if (listener_ != nullptr) listener_->on_start(id, node, now);
}

Status SiteEngine::start_reserved(PodId id, int64_t now) {
  const NodeIndex node = reserved_[id];
  if (node < 0) return Error{"start_reserved: no reservation", ErrorCode::kInternal};
  reserved_[id] = -1;
  started(id, node, now);
  ++version_;
  return Status::Ok();
}

// A job stops running: released from the cluster, its departure void.
Status SiteEngine::stop(PodId id, NodeIndex node, int64_t now, bool finished) {
  if (Status s = cluster_.release(id); !s.ok()) return s;
  update_power(node);
  // The figure its start added (the node's spec and power figures do not change).
  floor_watts_ -= power::pod_floor_watts(cluster_.spec(node), power_.node_power(node), pod(id));
  node_of_[id] = -1;
  start_[id] = -1;
  std::vector<PodId>& on = node_jobs_[node];
  on.erase(std::find(on.begin(), on.end(), id));
  ++generation_[id];
  --running_;
  if (planner_) planner_->forget_failures();  // room opened
  if (listener_ != nullptr) listener_->on_stop(id, node, now, finished);
  return Status::Ok();
}

int64_t SiteEngine::moves_allowed() const {
  return static_cast<int64_t>(config_.migrate_budget_pct / 100.0 * static_cast<double>(started_)) -
         migrated_;
}

int64_t SiteEngine::lost_s(PodId j, int64_t now) const {
  const int64_t ran = now - start_[j];
  return config_.checkpoint_interval_s > 0 ? ran % config_.checkpoint_interval_s : ran;
}

int64_t SiteEngine::moved(const defrag::Move& m, int64_t now) {
  // The job restarts on its new node from its last checkpoint: the run since is lost.
  const PodId j = m.pod;
  const int64_t lost = lost_s(j, now);
  const PodSpec& q = pod(j);
  floor_watts_ -= power::pod_floor_watts(cluster_.spec(m.from), power_.node_power(m.from), q);
  floor_watts_ += power::pod_floor_watts(cluster_.spec(m.to), power_.node_power(m.to), q);
  std::vector<PodId>& on = node_jobs_[m.from];
  on.erase(std::find(on.begin(), on.end(), j));
  node_jobs_[m.to].push_back(j);
  node_of_[j] = m.to;
  update_power(m.from);
  update_power(m.to);
  freed(m.from);
  lost_gpu_s_ += static_cast<double>(lost) * static_cast<double>(q.total_gpu_milli()) / kGpuMilli;
  ++generation_[j];
  end_[j] += lost;
  start_[j] = now;
  departures_.push(Departure{end_[j], j, generation_[j]});
  if (listener_ != nullptr) {
    listener_->on_stop(j, m.from, now, false);
    listener_->on_start(j, m.to, now);
  }
  ++migrated_;
  return lost;
}

bool SiteEngine::migrate_for(PodId id, int64_t now) {
  const PodSpec& p = pod(id);
  if (!planner_ || !p.needs_gpu()) return false;
  defrag::PlannerLimits limits;
  limits.max_moves = static_cast<int>(std::min<int64_t>(config_.max_moves, moves_allowed()));
  if (limits.max_moves <= 0) return false;
  std::optional<defrag::FitPlan> plan = planner_->fit(cluster_, id, p, scheduler_, rng_, limits);
  if (!plan) return false;
  for (const defrag::Move& m : plan->moves) {
    (void)moved(m, now);
    if (cluster_.state(m.from).pods == 0) node_empty(m.from, now);
  }
  update_power(plan->node);
  started(id, plan->node, now);
  ++rescued_;
  last_rescue_ = std::move(plan);
  return true;
}

double SiteEngine::idle_watts(NodeIndex n) const {
  const NodeSpec& spec = cluster_.spec(n);
  const std::vector<int32_t> all_free(static_cast<std::size_t>(spec.gpu_count), kGpuMilli);
  return power::node_power_watts(spec, power_.node_power(n), spec.cpu_milli, all_free.data());
}

int64_t SiteEngine::busy_until(NodeIndex n, int64_t now) const {
  int64_t until = now;
  for (const PodId j : node_jobs_[n]) until = std::max(until, end_[j]);
  return until;
}

Status SiteEngine::consolidate(int64_t now) {
  const std::size_t from = std::exchange(drain_scan_from_, freed_.size());
  if (!config_.consolidate || !planner_ || !power_down() || !queue_.empty()) return Status::Ok();
  // Half the budget stays for starting jobs that fit nowhere.
  const int64_t budget =
      static_cast<int64_t>(config_.migrate_budget_pct / 100.0 * static_cast<double>(started_));
  const int max_moves =
      static_cast<int>(std::min<int64_t>(config_.max_moves, moves_allowed() - budget / 2));
  if (max_moves <= 0) return Status::Ok();
  // Candidates: nodes a departure freed since the last pass, by the idle energy their sleep
  // would spare: asleep from now rather than idle_s after their last job, less a wake-up.
  std::vector<std::pair<double, NodeIndex>> candidates;
  for (std::size_t i = from; i < freed_.size(); ++i) {
    const NodeIndex n = freed_[i];
    const std::vector<PodId>& on = node_jobs_[n];
    if (on.empty() || static_cast<int>(on.size()) > max_moves || !cluster_.state(n).online ||
        cluster_.state(n).pods != static_cast<int32_t>(on.size())) {
      continue;  // empty, too many jobs, asleep or held, or room reserved for a job on its way
    }
    const int64_t awake_s =
        busy_until(n, now) - now + config_.power_down_idle_s - config_.wake_delay_s;
    candidates.emplace_back(idle_watts(n) * static_cast<double>(awake_s), n);
  }
  if (candidates.empty()) return Status::Ok();
  // One trial a pass: the candidate sparing the most.
  const auto [spared_j, n] = *std::max_element(candidates.begin(), candidates.end());
  DrainEstimate e;
  e.spared_j = spared_j;
  const std::vector<PodId> on = node_jobs_[n];
  const double here_w = power_.node_watts(n);  // booked before the drain
  double remaining_s = 0;  // mean over the jobs of the run each has left, lost time included
  std::vector<int64_t> lost;
  for (const PodId j : on) {
    lost.push_back(lost_s(j, now));
    e.lost_j += static_cast<double>(lost.back()) *
                power::pod_floor_watts(cluster_.spec(n), power_.node_power(n), pod(j));
    remaining_s +=
        static_cast<double>(end_[j] + lost.back() - now) / static_cast<double>(on.size());
  }
  std::optional<std::vector<defrag::Move>> moves = defrag::drain_node(
      cluster_, n, [this](PodId id) -> const PodSpec* { return jobs_[id].pod; },
      [this](PodId id) { return node_of_[id] >= 0; }, scheduler_, rng_, max_moves,
      /*same_gpu_model=*/true);
  if (!moves) return Status::Ok();
  // The jobs' power where they went against what they drew here above the node's idle power,
  // and destinations kept awake past their own jobs' ends.
  std::vector<NodeIndex> to;
  for (const defrag::Move& m : *moves) {
    if (std::find(to.begin(), to.end(), m.to) == to.end()) to.push_back(m.to);
  }
  double there_w = 0;
  for (const NodeIndex d : to) {
    there_w += empty_node_watts(d) - power_.node_watts(d);
    const int64_t until = busy_until(d, now);
    int64_t then = until;
    for (const defrag::Move& m : *moves) {
      if (m.to == d) then = std::max(then, end_[m.pod] + lost_s(m.pod, now));
    }
    e.kept_awake_j += idle_watts(d) * static_cast<double>(then - until);
  }
  e.moved_saving_j = (here_w - idle_watts(n) - there_w) * remaining_s;
  if (e.net_j() <= 0) {
    for (const defrag::Move& m : *moves) (void)cluster_.release(m.pod);
    for (const defrag::Move& m : *moves) {
      if (Status s = cluster_.allocate(m.pod, pod(m.pod), m.from, m.from_gpus); !s.ok()) return s;
    }
    return Status::Ok();
  }
  if (records_ != nullptr) {
    // Moves are in the drain's order, largest first; lost_s in the node's job order.
    std::vector<int64_t> lost_by_move;
    for (const defrag::Move& m : *moves) {
      lost_by_move.push_back(lost[std::find(on.begin(), on.end(), m.pod) - on.begin()]);
    }
    const nlohmann::json r = drain_record(
        policy_name_, n, *moves, lost_by_move, cluster_,
        [this](PodId j) -> const PodSpec* { return jobs_[j].pod; }, e, record_step_,
        record_time_(now), record_time_(busy_until(n, now)));
    *records_ += r.dump();
    *records_ += '\n';
    ++record_step_;
  }
  for (const defrag::Move& m : *moves) (void)moved(m, now);
  planner_->forget_failures();
  if (Status s = go_offline(n); !s.ok()) return s;
  sleeping_[n] = true;
  ++sleeping_count_;
  ++sleeps_;
  ++drained_;
  return Status::Ok();
}

void SiteEngine::node_empty(NodeIndex n, int64_t now) {
  idle_since_[n] = now;
  if (power_down()) {
    timers_.push(Timer{now + config_.power_down_idle_s, TimerKind::kIdleCheck, n, 0});
  }
}

Status SiteEngine::depart_at(int64_t now) {
  while (!departures_.empty() && departures_.top().time == now) {
    const Departure dep = departures_.top();
    departures_.pop();
    if (dep.generation != generation_[dep.pod]) continue;  // evicted since
    const NodeIndex n = node_of_[dep.pod];
    if (Status s = stop(dep.pod, n, now, true); !s.ok()) return s;
    freed(n);
    if (cluster_.state(n).pods == 0) node_empty(n, now);
  }
  return Status::Ok();
}

Status SiteEngine::handle_events(int64_t now) {
  if (Status s = depart_at(now); !s.ok()) return s;
  return fire_timers(now);
}

Status SiteEngine::node_up(NodeIndex n, int64_t now) {
  if (!failed_[n]) return Status::Ok();
  failed_[n] = false;
  return go_online(n, now);
}

Status SiteEngine::node_down(NodeIndex n, int64_t now) {
  if (failed_[n]) return Status::Ok();
  failed_[n] = true;
  if (waking_[n]) {
    waking_[n] = held_[n] = held_awake_[n] = false;
    held_arrived_[n] = kNoPod;
    --waking_count_;
    waking_watts_ -= empty_node_watts(n);
    ++version_;
    return Status::Ok();  // already counted offline
  }
  if (sleeping_[n]) {
    sleeping_[n] = false;
    --sleeping_count_;
    ++version_;
    return Status::Ok();
  }
  const std::vector<PodId> on = node_jobs_[n];
  for (PodId id : on) {
    if (Status s = stop(id, n, now, false); !s.ok()) return s;  // restarts with its full duration
    ++requeued_;
    queue_insert(id);
    requeued_since_pass_ = true;
  }
  // Only this node lost capacity, so what did not fit still does not.
  return go_offline(n);
}

Status SiteEngine::bring_online(NodeIndex n, int64_t now) {
  waking_[n] = false;
  --waking_count_;
  waking_watts_ -= empty_node_watts(n);
  return go_online(n, now);
}

Status SiteEngine::go_online(NodeIndex n, int64_t now) {
  if (Status s = cluster_.set_online(n, true); !s.ok()) return s;
  offline_gpu_milli_ -= int64_t{cluster_.spec(n).gpu_count} * kGpuMilli;
  ++awake_;
  update_power(n);
  freed(n);
  node_empty(n, now);
  return Status::Ok();
}

Status SiteEngine::go_offline(NodeIndex n) {
  if (Status s = cluster_.set_online(n, false); !s.ok()) return s;
  offline_gpu_milli_ += int64_t{cluster_.spec(n).gpu_count} * kGpuMilli;
  --awake_;
  update_power(n);
  return Status::Ok();
}

Status SiteEngine::fire_timers(int64_t now) {
  // The timers due now; those they set for now (a node idle for 0 s) fire at the next call, so
  // that a job that woke a node can start on it first.
  std::vector<Timer> due;
  while (!timers_.empty() && timers_.top().time == now) {
    due.push_back(timers_.top());
    timers_.pop();
  }
  for (const Timer& t : due) {
    const NodeIndex n = t.node;
    if (t.kind == TimerKind::kWakeDone) {
      if (!waking_[n] || t.generation != wake_generation_[n]) continue;
      if (held_[n] && held_arrived_[n] != kNoPod) {
        // Its job came first and waits for it: the node is its.
        const PodId id = held_arrived_[n];
        held_arrived_[n] = kNoPod;
        if (Status s = online_for(n, id, now); !s.ok()) return s;
        continue;
      }
      if (held_[n]) {
        held_awake_[n] = true;  // awake, kept for its job until it arrives
        continue;
      }
      if (Status s = bring_online(n, now); !s.ok()) return s;
      continue;
    }
    const NodeState& st = cluster_.state(n);
    if (!st.online || st.pods > 0 || now - idle_since_[n] < config_.power_down_idle_s) continue;
    if (Status s = go_offline(n); !s.ok()) return s;
    sleeping_[n] = true;
    ++sleeping_count_;
    ++sleeps_;
  }
  return Status::Ok();
}

NodeIndex SiteEngine::wake_candidate(const PodSpec& p) const {
  if (sleeping_count_ == 0) return -1;
  // The sleeping node that would draw the least with the job; ties by the run's node order.
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
  return best;
}

NodeIndex SiteEngine::wake(NodeIndex n, int64_t now) {
  sleeping_[n] = false;
  --sleeping_count_;
  waking_[n] = true;
  ++waking_count_;
  ++wakeups_;
  waking_watts_ += empty_node_watts(n);
  ++version_;
  timers_.push(Timer{now + config_.wake_delay_s, TimerKind::kWakeDone, n, ++wake_generation_[n]});
  return n;
}

void SiteEngine::wake_for(PodId id, int64_t now) {
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
  const NodeIndex best = wake_candidate(p);
  if (best < 0) {
    if (no_sleeper_at_[key] != sleeps_ || p.memory_mib < no_sleeper_memory_[key]) {
      no_sleeper_memory_[key] = p.memory_mib;
      no_sleeper_at_[key] = sleeps_;
    }
    return;
  }
  wake(best, now);
}

NodeIndex SiteEngine::hold_for(PodId id, int64_t now, Rng& rng) {
  const PodSpec& p = pod(id);
  const policy::Decision d = scheduler_.schedule(cluster_, p, rng);
  if (d.node >= 0) {
    if (!cluster_.allocate(id, p, d.node, d.gpus).ok()) return -1;
    update_power(d.node);
    reserved_[id] = d.node;
    return d.node;
  }
  const NodeIndex n = wake_candidate(p);
  if (n < 0) return -1;
  wake(n, now);
  held_[n] = true;
  held_awake_[n] = false;
  return n;
}

Status SiteEngine::arrive_held(PodId id, NodeIndex n, int64_t now) {
  if (n < 0 || !held_[n]) return Status::Ok();
  if (!held_awake_[n]) {
    held_arrived_[n] = id;  // still waking: the job starts when it wakes (fire_timers)
    return Status::Ok();
  }
  held_awake_[n] = false;
  return online_for(n, id, now);
}

Status SiteEngine::online_for(NodeIndex n, PodId id, int64_t now) {
  held_[n] = false;
  if (Status s = bring_online(n, now); !s.ok()) return s;
  ++version_;
  if (!queue_.contains(queue_entry(id))) return Status::Ok();  // started elsewhere meanwhile
  const policy::Decision d = scheduler_.schedule(cluster_, pod(id), rng_);
  if (d.node < 0) return Status::Ok();
  if (Status s = start(id, d, now); !s.ok()) return s;
  withdraw(id);
  return Status::Ok();
}

bool SiteEngine::preempt_for(PodId id, int64_t now) {
  const PodSpec& p = pod(id);
  // On each node, the BE jobs to evict (most recently started first) until `p` fits; the node
  // where that frees the fewest GPU, then CPU, then jobs.
  struct Eviction {
    NodeIndex node = -1;
    std::vector<PodId> jobs;
    int64_t gpu_milli = 0;
    int64_t cpu_milli = 0;
    bool cheaper_than(const Eviction& o) const {
      if (gpu_milli != o.gpu_milli) return gpu_milli < o.gpu_milli;
      if (cpu_milli != o.cpu_milli) return cpu_milli < o.cpu_milli;
      return jobs.size() < o.jobs.size();
    }
  };
  std::optional<Eviction> best;
  std::vector<PodId> be;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster_.size()); ++n) {
    if (!cluster_.state(n).online) continue;
    be.clear();
    for (PodId j : node_jobs_[n]) {
      if (!jobs_[j].latency_sensitive()) be.push_back(j);
    }
    if (be.empty()) continue;
    std::sort(be.begin(), be.end(), [&](PodId a, PodId b) {
      if (start_[a] != start_[b]) return start_[a] > start_[b];
      return a > b;
    });
    const NodeSpec& spec = cluster_.spec(n);
    NodeState state = cluster_.state(n);
    Eviction e;
    e.node = n;
    for (PodId j : be) {
      const Allocation a = *cluster_.allocation_of(j);
      state.cpu_free_milli += a.cpu_milli;
      state.memory_free_mib += a.memory_mib;
      for (int g = 0; g < spec.gpu_count; ++g) {
        if ((a.gpus >> g) & 1U) state.gpu_free_milli[g] += a.gpu_milli_each;
      }
      Cluster::refresh_derived(state, spec.gpu_count);
      e.jobs.push_back(j);
      e.gpu_milli += pod(j).total_gpu_milli();
      e.cpu_milli += a.cpu_milli;
      if (policy::filter_node(spec, state, p) == policy::FilterReason::kFits) {
        if (!best || e.cheaper_than(*best)) best = e;
        break;
      }
    }
  }
  if (!best) return false;
  for (PodId victim : best->jobs) {
    if (!stop(victim, best->node, now, false).ok()) return false;
    ++preempted_;
    queue_insert(victim);
  }
  requeued_since_pass_ = true;
  freed(best->node);
  return true;
}

Status SiteEngine::pass(int64_t now) {
  const bool fifo = config_.queue == QueueDiscipline::kFifo;
  // Nothing gained capacity since the last pass: only jobs enqueued since can start, and under
  // FIFO only when nothing older waits.
  std::vector<QueueEntry> fresh;
  const bool only_new = freed_.size() == freed_at_last_pass_ && !requeued_since_pass_;
  if (only_new) {
    for (const QueueEntry& k : new_keys_) {
      if (queue_.count(k) > 0) fresh.push_back(k);
    }
    new_keys_.clear();
    if (fresh.empty()) return Status::Ok();
    std::sort(fresh.begin(), fresh.end());
    if (fifo && fresh.front() != *queue_.begin()) return Status::Ok();
  }
  new_keys_.clear();
  freed_at_last_pass_ = freed_.size();
  requeued_since_pass_ = false;
  // Waking nodes are claimed afresh by the jobs a pass tries, in queue order. A pass of only
  // new jobs later in the same instant goes on with the claims where the last one left them,
  // so that passing each arrival alone (a fleet) claims as one pass over them all (a replay).
  if (!only_new || now != last_pass_s_) {
    unclaimed_.clear();
    if (waking_count_ > 0) {
      for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster_.size()); ++n) {
        if (waking_[n] && !held_[n]) unclaimed_.push_back(n);
      }
    }
  }
  last_pass_s_ = now;
  std::size_t scanned = 0;
  bool searched = false;  // for moves
  std::size_t next_fresh = 0;
  auto it = only_new ? queue_.find(fresh[next_fresh++]) : queue_.begin();
  while (it != queue_.end() && scanned < config_.scan_limit) {
    const PodId id = it->second;
    bool started = false;
    if (!known_not_to_fit(id)) {
      policy::FilterCounts counts;
      const bool recording = record_inputs_ != nullptr;
      policy::Decision d =
          scheduler_.schedule(cluster_, pod(id), rng_, recording ? &counts : nullptr);
      if (d.node < 0 && config_.preempt_be && jobs_[id].latency_sensitive() &&
          preempt_for(id, now)) {
        d = scheduler_.schedule(cluster_, pod(id), rng_, recording ? &counts : nullptr);
      }
      // The record sees the cycle as it was, before any move.
      nlohmann::json record;
      const bool may_move = d.node < 0 && planner_ && !searched;
      if (recording && (d.node >= 0 || !failure_recorded_[id] || may_move)) {
        RecordInputs in = *record_inputs_;
        in.counts = &counts;
        record = make_record(in, pod(id), d, record_step_, record_time_(now));
      }
      bool rescued = false;
      if (may_move) {
        searched = true;  // one search a pass
        rescued = migrate_for(id, now);
      }
      if (recording && (d.node >= 0 || rescued || !failure_recorded_[id])) {
        if (rescued) {
          record["rescued_by_moves"] = rescue_json(
              *last_rescue_, cluster_, [this](PodId j) -> const PodSpec* { return jobs_[j].pod; });
        }
        *records_ += record.dump();
        *records_ += '\n';
        ++record_step_;
        if (d.node < 0 && !rescued) failure_recorded_[id] = true;
      }
      if (d.node >= 0 || rescued) {  // a rescued job was started by migrate_for
        if (d.node >= 0) {
          if (Status s = start(id, d, now); !s.ok()) return s;
        }
        queued_gpu_milli_ -= pod(id).total_gpu_milli();
        it = queue_.erase(it);
        started = true;
      } else {
        record_failure(id);
      }
    }
    if (!started) {
      ++scanned;
      if (power_down() && (sleeping_count_ > 0 || !unclaimed_.empty())) wake_for(id, now);
      if (fifo) break;
      ++it;
    }
    if (only_new) {
      // Only the fresh keys: the next one still waiting.
      it = queue_.end();
      while (next_fresh < fresh.size() && it == queue_.end()) it = queue_.find(fresh[next_fresh++]);
    }
  }
  freed_at_last_pass_ = freed_.size();
  return Status::Ok();
}

Status SiteEngine::schedule(int64_t now) {
  if (Status s = pass(now); !s.ok()) return s;
  // Jobs of zero duration leave at the instant they start, which may let others start.
  for (drop_stale_departures(); !departures_.empty() && departures_.top().time == now;
       drop_stale_departures()) {
    if (Status s = depart_at(now); !s.ok()) return s;
    if (Status s = pass(now); !s.ok()) return s;
  }
  return consolidate(now);
}

}  // namespace greensched::sim
