// One cluster's scheduler at run time: the engine of `simulate --mode replay` and of every site
// of a fleet (multi/), so that both schedule, sleep, wake and account alike.
//
// Jobs enter its queue when they are ready (enqueue) and start when the local policy finds
// them a node, in a scheduling pass the driver asks for once per instant (schedule). A job
// leaves after its duration, counted from each start. Queue order: fifo (the head blocks the
// rest), backfill (any job that fits may start, oldest first) or priority (latency-sensitive
// jobs first, then best-effort ones, each backfilled oldest first).
//
// Power states: with power_down_idle_s >= 0 a node idle that long sleeps (draws nothing). A
// queued job that fits on no awake node claims a node already waking that could host it, or
// wakes the sleeping node that would draw the least with it (ties by the scheduler's node
// order), and waits wake_delay_s for it; a waking node draws its idle power. A node may also
// be held for a job on its way (hold_for): taken out of the scheduler's view, drawing its idle
// power, until the job arrives and is placed on it, or better, before any queued job
// (arrive_held).
//
// Node events take nodes down (their jobs are re-queued, none lost) and back up. With
// preempt_be, a latency-sensitive job that finds no node evicts best-effort jobs from the one
// node where that costs least (fewest GPU, then CPU, then jobs; the most recently started
// first); they wait again and restart from the beginning.
//
// Time: the driver owns the clock. At each instant it calls handle_events(now) when
// next_time() is now (departures, then wake-ups and idle checks), enqueues what became ready,
// and calls schedule(now): once for all of them (a replay) or after each (a fleet, so that each
// dispatch decision sees the ones before placed) gives the same schedule. Energy is the
// driver's to integrate: it_watts() is constant between instants.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/core/status.hpp"
#include "greensched/defrag/move_planner.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/decision_record.hpp"
#include "greensched/sim/queue_discipline.hpp"

namespace greensched::sim {

// What the engine knows of a job: index i of the jobs given is its PodId in the cluster.
struct SiteJob {
  const PodSpec* pod = nullptr;
  int64_t duration_s = 0;
  bool latency_sensitive() const { return is_latency_sensitive(*pod); }  // LS or Guaranteed
};

// Dense ids of the jobs' (cpu, GPU count, GPU share, GPU model) requests: whether a job fits
// anywhere depends on those and its memory (the engine's memo of jobs that found no node).
std::vector<uint32_t> feasibility_keys(const std::vector<SiteJob>& jobs, uint32_t& key_count);

struct SiteEngineConfig {
  // As kube-scheduler: a job that fits nowhere does not hold up the ones behind it.
  QueueDiscipline queue = QueueDiscipline::kBackfill;
  int64_t power_down_idle_s = -1;  // < 0: nodes never sleep
  int64_t wake_delay_s = 300;
  bool preempt_be = false;
  // At most this many waiting jobs are tried per pass (a scheduler's active queue), so a queue
  // that grows without bound costs no more per pass than a short one.
  std::size_t scan_limit = std::numeric_limits<std::size_t>::max();
  // Bounded migration (defrag/move_planner.hpp): a GPU job that fits nowhere may start after
  // running jobs move, up to this % of the jobs started so far (0: never). At most one search
  // per scheduling pass. A moved job restarts from its last checkpoint: the run time since
  // then (checkpoints every checkpoint_interval_s of its run; 0: no checkpoint, all of it) is
  // lost and run again.
  double migrate_budget_pct = 0;
  int max_moves = 4;
  int64_t checkpoint_interval_s = 1800;
  // Consolidation (needs power-down and a migration budget, of which it may spend half: the
  // rest stays for jobs that fit nowhere): when no job waits, after departures, the engine may
  // empty one lightly used node per pass by moving its jobs to awake nodes (defrag/drain.hpp;
  // GPU jobs to nodes of the same GPU model) and put it to sleep at once, as an operator
  // drains and powers off a node. Of the nodes a departure freed since the last pass, with no
  // more jobs than a plan may move, it tries the one whose sleep would spare the most idle
  // energy: its idle power from now until its last job would have ended plus the idle time
  // before it would have slept, less one wake-up. It keeps the drain only where the estimate
  // of the energy saved exceeds what the moves cost: the run time they lose (each job's share
  // of the node's power since its last checkpoint), the jobs' power where they went against
  // what they drew here, and the idle power of destinations kept awake past their own jobs'
  // ends; else it undoes the moves.
  bool consolidate = false;
};

// What the driver books when a job starts or stops.
class SiteEngineListener {
 public:
  virtual ~SiteEngineListener() = default;
  virtual void on_start(PodId /*id*/, NodeIndex /*node*/, int64_t /*now*/) {}
  // finished: it ran its duration; else it was evicted (node down or preemption) and waits.
  virtual void on_stop(PodId /*id*/, NodeIndex /*node*/, int64_t /*now*/, bool /*finished*/) {}
};

class SiteEngine {
 public:
  // The engine keeps references to everything given; `jobs` and `keys` (feasibility_keys of
  // the jobs) are indexed by PodId.
  SiteEngine(Cluster& cluster, policy::Scheduler& scheduler, Rng& rng, power::ClusterPower& power,
             const std::vector<SiteJob>& jobs, const std::vector<uint32_t>& keys,
             uint32_t key_count, const SiteEngineConfig& config,
             SiteEngineListener* listener = nullptr);

  // Also keeps `shadows` (other power figures of the same nodes) up to date.
  void account_also(std::vector<power::ClusterPower>* shadows) { shadows_ = shadows; }
  // Decision records (decision_record.hpp) of every start and each job's first failed try,
  // appended to `out`; `policy_name` names the policy in errors.
  void record_to(const RecordInputs* inputs, std::string* out, std::function<double(int64_t)> time);
  void set_policy_name(std::string name) { policy_name_ = std::move(name); }

  // The first instant: every node is idle from now (and may sleep after power_down_idle_s).
  void begin(int64_t now);
  // The earliest departure or power-state timer, if any.
  std::optional<int64_t> next_time();
  // Departures at now, then wake-ups and idle checks at now (the two halves apart, for a
  // driver with events of its own between them).
  [[nodiscard]] Status handle_events(int64_t now);
  [[nodiscard]] Status handle_departures(int64_t now) { return depart_at(now); }
  [[nodiscard]] Status handle_timers(int64_t now) { return fire_timers(now); }
  // Job `id` joins the queue; `rank` orders it within its class (smaller first), and again if
  // it is evicted.
  void enqueue(PodId id, uint32_t rank);
  // Takes waiting job `id` out of the queue (it goes elsewhere); false if it is not waiting.
  bool withdraw(PodId id);
  // The scheduling pass; jobs of zero duration leave at once, which may let others start.
  [[nodiscard]] Status schedule(int64_t now);
  // Node events.
  [[nodiscard]] Status node_down(NodeIndex n, int64_t now);
  [[nodiscard]] Status node_up(NodeIndex n, int64_t now);

  // Keeps room for job `id` on its way. Where the policy would place it now (drawn with `rng`,
  // not the engine's), its resources are reserved there: allocated, drawing as the job would,
  // and nothing else can take them; start_reserved starts it there when it arrives. Where it
  // fits nowhere now, the sleeping node it would wake is woken now and held (out of the
  // scheduler's view, drawing its idle power) until the job arrives. Returns the node, or -1
  // (none can take it).
  NodeIndex hold_for(PodId id, int64_t now, Rng& rng);
  bool reserved(PodId id) const { return reserved_[id] >= 0; }
  [[nodiscard]] Status start_reserved(PodId id, int64_t now);
  // Job `id`, queued now, arrives for node n held for it: the node joins the cluster once
  // awake (now, or when its wake-up ends) and the job is placed first, before the jobs queued
  // ahead of it could take the node; where it fits nowhere then, it waits in the queue.
  [[nodiscard]] Status arrive_held(PodId id, NodeIndex n, int64_t now);

  // The sleeping node a job would wake (the least power with it), or -1. Reads only.
  NodeIndex wake_candidate(const PodSpec& pod) const;

  // State.
  const Cluster& cluster() const { return cluster_; }
  double it_watts() const { return power_.watts() + waking_watts_; }
  double shadow_it_watts(std::size_t k) const { return (*shadows_)[k].watts() + waking_watts_; }
  double floor_watts() const { return floor_watts_; }  // IT, of the ideal proportional cluster
  int64_t running() const { return running_; }
  std::size_t queued() const { return queue_.size(); }
  int64_t nodes_awake() const { return awake_ + waking_count_; }
  int64_t started() const { return started_; }    // jobs started at least once
  int64_t requeued() const { return requeued_; }  // evictions by node-down events
  int64_t preempted() const { return preempted_; }
  int64_t wakeups() const { return wakeups_; }
  int64_t migrated() const { return migrated_; }           // moves of running jobs
  int64_t rescued() const { return rescued_; }             // jobs started thanks to moves
  int64_t drained() const { return drained_; }             // nodes emptied to sleep (consolidation)
  double lost_gpu_seconds() const { return lost_gpu_s_; }  // run time lost to moves x GPUs
  int64_t queued_gpu_milli() const { return queued_gpu_milli_; }    // GPU requests waiting
  int64_t first_start(PodId id) const { return first_start_[id]; }  // -1 before it
  int64_t start_of(PodId id) const { return start_[id]; }           // this run's; -1 if none
  bool sleeping(NodeIndex n) const { return sleeping_[n]; }
  bool waking(NodeIndex n) const { return waking_[n]; }  // or held
  // GPU milli of nodes asleep, waking or held: not the scheduler's to place on now.
  int64_t offline_gpu_milli() const { return offline_gpu_milli_; }
  // Bumped on every change the scheduler or a view of the site could see.
  uint64_t version() const { return version_; }

 private:
  static constexpr int64_t kNoFailure = std::numeric_limits<int64_t>::max();

  struct Departure {
    int64_t time = 0;
    PodId pod = 0;
    uint32_t generation = 0;  // the job's generation when it started; stale once it stopped
    bool operator>(const Departure& o) const;
  };
  enum class TimerKind : int { kWakeDone = 0, kIdleCheck = 1 };
  struct Timer {
    int64_t time = 0;
    TimerKind kind = TimerKind::kIdleCheck;
    NodeIndex node = -1;
    uint32_t generation = 0;  // kWakeDone: the node's wake generation
    bool operator>(const Timer& o) const;
  };

  const PodSpec& pod(PodId id) const { return *jobs_[id].pod; }
  using QueueEntry = std::pair<uint64_t, PodId>;  // (class, rank) key, job
  QueueEntry queue_entry(PodId id) const;
  bool power_down() const { return config_.power_down_idle_s >= 0; }
  void update_power(NodeIndex n);
  bool fits_awake(NodeIndex n, const PodSpec& p) const;
  bool fits_when_awake(NodeIndex n, const PodSpec& p) const;
  // The node's power as the cluster stands (an empty node's: its idle power), whatever
  // power_ last booked for it.
  double empty_node_watts(NodeIndex n) const;
  void freed(NodeIndex n) {
    freed_.push_back(n);
    ++version_;
  }
  bool known_not_to_fit(PodId id);
  bool failure_is_stale(uint32_t key) const;
  void record_failure(PodId id);
  void drop_stale_departures();
  [[nodiscard]] Status start(PodId id, const policy::Decision& d, int64_t now);
  // The bookkeeping of a start on resources already allocated to the job.
  void started(PodId id, NodeIndex node, int64_t now);
  [[nodiscard]] Status stop(PodId id, NodeIndex node, int64_t now, bool finished);
  void node_empty(NodeIndex n, int64_t now);
  [[nodiscard]] Status depart_at(int64_t now);
  [[nodiscard]] Status fire_timers(int64_t now);
  [[nodiscard]] Status bring_online(NodeIndex n, int64_t now);  // a waking or held node
  // A held node joins the cluster and its job, if still queued, is placed before any other.
  [[nodiscard]] Status online_for(NodeIndex n, PodId id, int64_t now);
  // A node joins the scheduler's view, idle from now, or leaves it (it must be empty).
  [[nodiscard]] Status go_online(NodeIndex n, int64_t now);
  [[nodiscard]] Status go_offline(NodeIndex n);
  NodeIndex wake(NodeIndex n, int64_t now);
  void wake_for(PodId id, int64_t now);
  bool preempt_for(PodId id, int64_t now);
  // Moves that start waiting job `id`, within the budget; false (nothing changed) if none.
  bool migrate_for(PodId id, int64_t now);
  double idle_watts(NodeIndex n) const;                // with nothing on it
  int64_t busy_until(NodeIndex n, int64_t now) const;  // when its last job ends (now if none)
  // The run time running job j would lose if it moved now (since its last checkpoint).
  int64_t lost_s(PodId j, int64_t now) const;
  // Moves allowed by the budget now.
  int64_t moves_allowed() const;
  // The bookkeeping of a move the planner carried out: the job restarts on its new node from
  // its last checkpoint. Returns the run time lost, seconds.
  int64_t moved(const defrag::Move& m, int64_t now);
  // Consolidation (SiteEngineConfig::consolidate): drains at most one node.
  [[nodiscard]] Status consolidate(int64_t now);
  void queue_insert(PodId id);
  [[nodiscard]] Status pass(int64_t now);

  Cluster& cluster_;
  policy::Scheduler& scheduler_;
  Rng& rng_;
  power::ClusterPower& power_;
  const std::vector<SiteJob>& jobs_;
  const std::vector<uint32_t>& feasibility_key_;
  SiteEngineConfig config_;
  SiteEngineListener* listener_ = nullptr;
  std::vector<power::ClusterPower>* shadows_ = nullptr;
  std::string policy_name_;

  std::set<QueueEntry> queue_;              // waiting jobs in queue order
  std::vector<QueueEntry> new_keys_;        // enqueued since the last pass
  std::vector<uint32_t> rank_;              // per job, its rank when last enqueued
  std::vector<NodeIndex> freed_;            // every node that gained capacity, in order
  std::vector<int64_t> failed_memory_;      // per key: least memory that found no node ...
  std::vector<std::size_t> failed_at_;      // ... when freed_ had this many entries
  std::vector<int64_t> no_sleeper_memory_;  // per key: least memory no sleeping node fits ...
  std::vector<uint64_t> no_sleeper_at_;     // ... at this count of nodes put to sleep
  std::vector<int64_t> first_start_, start_;
  std::vector<uint32_t> generation_;  // bumped whenever a job stops (departs or is evicted)
  std::vector<NodeIndex> node_of_;    // -1 when not running
  std::vector<NodeIndex> reserved_;   // where a job on its way has room reserved, else -1
  std::vector<std::vector<PodId>> node_jobs_;  // per node: running jobs, in start order
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> departures_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  // Node power states: failed (a node event took it down), sleeping, waking (or held); held
  // nodes stay out of the scheduler's view once awake (held_awake) until released.
  std::vector<bool> failed_, sleeping_, waking_, held_, held_awake_;
  static constexpr PodId kNoPod = std::numeric_limits<PodId>::max();
  std::vector<PodId> held_arrived_;  // per held node still waking: the job that has arrived
  std::vector<uint32_t> wake_generation_;
  std::vector<int64_t> idle_since_;   // meaningful while awake and empty
  std::vector<NodeIndex> unclaimed_;  // waking nodes no failed job of this instant has claimed
  int64_t last_pass_s_ = std::numeric_limits<int64_t>::min();
  int64_t awake_ = 0;
  int64_t waking_count_ = 0;
  int64_t sleeping_count_ = 0;
  uint64_t sleeps_ = 0;  // nodes put to sleep so far
  double waking_watts_ = 0;
  double floor_watts_ = 0;
  int64_t offline_gpu_milli_ = 0;
  std::size_t freed_at_last_pass_ = 0;
  bool requeued_since_pass_ = false;
  int64_t running_ = 0;
  int64_t started_ = 0;
  int64_t requeued_ = 0;
  int64_t preempted_ = 0;
  int64_t wakeups_ = 0;
  int64_t migrated_ = 0;
  int64_t rescued_ = 0;
  int64_t drained_ = 0;
  std::size_t drain_scan_from_ = 0;  // freed_ entries before this were considered for draining
  double lost_gpu_s_ = 0;
  int64_t queued_gpu_milli_ = 0;
  std::vector<int64_t> end_;  // per running job: when it departs
  std::unique_ptr<defrag::MovePlanner> planner_;
  std::optional<defrag::FitPlan> last_rescue_;  // for the decision record of the pass
  uint64_t version_ = 0;
  const RecordInputs* record_inputs_ = nullptr;
  std::string* records_ = nullptr;
  std::function<double(int64_t)> record_time_;
  std::vector<bool> failure_recorded_;
  int64_t record_step_ = 0;
};

}  // namespace greensched::sim
