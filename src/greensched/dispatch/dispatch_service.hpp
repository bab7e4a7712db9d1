// The dispatch service (greensched dispatch): which worker cluster a workload should run on
// and from when, decided by a fleet agent of `greensched multi` (multi/agents) on the live
// state of the clusters (live_fleet.hpp), with the reasons. Kueue's MultiKueue asks it through
// greensched's dispatcher and admission check (deploy/kueue/): the answer's `clusters` become
// the Workload's nominatedClusterNames, its earliest start the admission check's wait.
//
// Reads: each cluster (and its HTTP carbon forecast) is read off the request path by its own
// ClusterReader (cluster_reader.hpp) every refresh_seconds, each read bounded by
// cluster_timeout_seconds. A decision takes the states read last and never waits on a cluster.
//
// A decision: take the last states read, build the view, let the agent decide for the
// workload's largest pod, rank the clusters (the chosen one first, then the others by the
// agent's expected cost), remember it as a commitment (its GPUs count at its cluster over its
// planned run until its pods can be seen there, commit_seconds of wall time after its start),
// and append it to the journal. A workload asked about again (same namespace/name and uid)
// while its commitment stands gets the same answer: the dispatcher may ask as often as it
// reconciles.
//
// The agent lives as long as the service: what it learns from request to request (green-plan's
// arrival history and its plan, re-solved when the signal clock's hour turns) carries over, as
// in `greensched multi`. A re-nomination is decided as the simulator decides a job chosen for
// again (JobInfo::again): it does not join the arrival history twice. What the agent learns
// survives a restart or a standby's takeover: each record holds what the agent saw of its job
// ("observed"), a compaction stores what it had learned in the newest record kept
// ("agent_state"), and the replay restores that and teaches it the jobs decided after
// (DispatchAgent::observe). The plan itself is solved again at the next decision.
//
// Degraded: a cluster never read is no option (and the answer says so). A cluster whose last
// read failed or is overdue, or whose last good read is older than its deadline + the refresh
// period, is degraded: reported with its last known state and that state's age (in the
// answer and in GET /v1/clusters), and left out while another cluster the workload may go to
// is healthy; when none is, the decision is made on the degraded clusters' last known states.
// When a candidate has no carbon signal now, the choice is by capacity alone (least-loaded),
// and the answer's mode says "capacity-only" with the reason.
//
// One writer: the service holds the journal's lock (journal_lock.hpp) while it runs; a second
// service on the same journal is refused, and a standby waits for the lock and replays.
//
// Restart: the journal (decision_journal.hpp: JSON Lines, one dispatch record per decision,
// the format `greensched explain` reads) is replayed at start, so commitments and answers
// survive; the replay restores the decision count too (the seed of the next decision). A
// decision is answered only after its line is synced; when the journal cannot be written the
// request gets 503 and nothing is remembered. When the journal outgrows its size or age it is
// compacted to the records of the decisions still standing.
//
// Thread-safe: mu_ guards decisions and what they read; it is held for a decision (and the
// journal write that makes it stand), never during a cluster read. Lock order: mu_, then a
// ClusterReader's own lock (taken inside ClusterReader::take).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/prometheus_histogram.hpp"
#include "greensched/core/status.hpp"
#include "greensched/dispatch/cluster_reader.hpp"
#include "greensched/dispatch/cluster_source.hpp"
#include "greensched/dispatch/decision_journal.hpp"
#include "greensched/dispatch/journal_lock.hpp"
#include "greensched/dispatch/live_fleet.hpp"
#include "greensched/dispatch/signal_source.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/multi/agent.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::dispatch {

struct DispatchConfig {
  multi::Fleet fleet;  // sites: names (= cluster names), signals, PUE, network, policy
  // Per site: where its state is read (nullptr: the fleet file's nodes, nothing bound) and
  // an HTTP carbon forecast (none: the fleet file's series).
  std::vector<std::unique_ptr<ClusterSource>> sources;
  std::vector<std::optional<ForecastSource>> forecasts;
  std::string agent = "green-plan";
  multi::AgentOptions agent_options;
  LiveOptions live;
  SignalClock clock;
  int64_t default_slack_s = 4 * 3600;
  int64_t default_duration_s = 3600;
  double refresh_seconds = 5;          // between the starts of two reads of a cluster
  double cluster_timeout_seconds = 1;  // the deadline of one read
  int64_t commit_seconds = 120;
  std::string journal_path;  // "" = none
  // The journal's single-writer lock (journal_lock.hpp), when the caller took it already (a
  // standby waits for it); else create() takes it and fails when another service holds it.
  std::unique_ptr<JournalLock> journal_lock;
  bool journal_repair = false;  // move bad journal lines aside instead of refusing to start
  uint64_t journal_compact_bytes = uint64_t{64} << 20;  // 0: never by size
  int64_t journal_compact_age_s = 24 * 3600;            // 0: never by age
  // Warnings (a journal line cut off or moved aside); nullptr: standard error.
  std::function<void(const std::string&)> warn;
  power::PowerModel power_model = power::PowerModel::builtin();
  // FGD's target workload at every site (unset: the built-in openb workload's).
  std::optional<frag::TargetWorkload> target;
  uint64_t seed = 42;
};

// Why the controller asks for a workload's nomination to change (POST /v1/dispatch's
// "renominate": {"reason", "from"}): its worker was lost, it was not admitted there in time,
// or that cluster cannot schedule it.
inline constexpr std::array<std::string_view, 3> kRenominationReasons{
    "worker-lost", "admit-timeout", "unschedulable"};

struct DispatchReply {
  int status = 200;
  nlohmann::json body;
};

class DispatchService {
 public:
  // Reads the journal (when set), then starts the clusters' readers and waits for their first
  // reads (each bounded by its deadline); a cluster that cannot be read is reported, not fatal.
  static Result<std::unique_ptr<DispatchService>> create(DispatchConfig config, int64_t wall_now_s);

  // POST /v1/dispatch: {"workload": <Workload>, "clusters": [names] (optional: the clusters
  // it may go to), "exclude": [names] (optional: clusters it must not go to), "home": name
  // (optional), "renominate": {"reason", "from"} (optional)}. 400 with {"error"} on a bad
  // request; 409 when no cluster remains. A re-nomination forgets the workload's standing
  // decision (its GPUs no longer count at "from"), decides again among the clusters it may go
  // to but "from", journals the new decision with "renominated": {"reason", "from"} and answers
  // with "renominated": true and "renomination": {"reason", "from"}; when it cannot be made
  // (400, 409, 503) the standing decision is kept.
  DispatchReply dispatch(std::string_view body, int64_t wall_now_s);
  // GET /v1/clusters: each cluster's state as last read, its signal, its commitments.
  nlohmann::json clusters(int64_t wall_now_s);
  // GET /metrics (Prometheus text): requests by status, decisions by cluster and mode,
  // re-nominations by reason, the histograms greensched_dispatch_decision_seconds (time to
  // answer a POST /v1/dispatch) and greensched_dispatch_cluster_read_seconds{cluster} (time of
  // each read), the gauges greensched_dispatch_cluster_state_age_seconds{cluster} (of the state
  // used; none before a first read), greensched_dispatch_deferred_workloads (standing decisions
  // whose earliest start is after `wall_now_s`), cluster up, allocation and commitments.
  std::string metrics_text(int64_t wall_now_s);
  std::string metrics_text();  // at the system clock's now

 private:
  struct Site {
    std::unique_ptr<serve::ClusterState> state;  // the last state read (nullptr: never read)
    std::string error;                           // why the last read failed ("" = read)
    std::string degraded;                        // why it is degraded ("" = it is not)
    double age_s = 0;                            // of `state`
    multi::TimeSeries forecast;                  // fetched (when a ForecastSource is set)
    std::string forecast_error;
  };
  struct Remembered {
    std::string uid;
    int64_t until_wall_s = 0;  // commitment ends (then forgotten)
    int64_t start_wall_s = 0;  // its earliest start
    Commitment commitment;
    nlohmann::json reply;
    nlohmann::json record;  // its journal record (kept when the journal is compacted)
  };

  explicit DispatchService(DispatchConfig config);
  // Takes what the readers read since the last call (mu_ held).
  void take_reads();
  // A degraded or unread cluster as the answers and GET /v1/clusters show it.
  nlohmann::json health_json(std::size_t site) const;
  // The site's carbon series now, or nullptr with the reason.
  const multi::TimeSeries* carbon_series(std::size_t site, int64_t signal_now,
                                         std::string* why) const;
  // `status` gets the HTTP status of an error that is neither 400 nor 503 (409).
  Result<nlohmann::json> decide(const nlohmann::json& request, int64_t wall_now_s, int* status);
  void replay(const std::vector<nlohmann::json>& records, int64_t wall_now_s);
  // What the agent had learned: the journal's newest agent state, then the jobs decided after.
  void replay_agent(const std::vector<nlohmann::json>& records);
  void warn(const std::string& message) const;
  // Compacts the journal when it is due (a failure is a warning: the decisions are written).
  void compact_if_due(int64_t wall_now_s);
  void forget(int64_t wall_now_s);

  DispatchConfig config_;
  std::vector<std::unique_ptr<ClusterReader>> readers_;  // one per site; set at create
  // Under mu_: config_.agent, and least-loaded for decisions without a carbon signal.
  std::unique_ptr<multi::DispatchAgent> agent_;
  std::unique_ptr<multi::DispatchAgent> capacity_agent_;
  std::mutex mu_;
  std::unique_ptr<DecisionJournal> journal_;  // nullptr: none
  std::vector<Site> sites_;
  std::map<std::string, Remembered> remembered_;  // by namespace/name
  uint64_t decisions_ = 0;
  std::map<std::string, uint64_t> requests_by_code_;
  std::map<std::pair<std::string, std::string>, uint64_t> decisions_by_cluster_mode_;
  std::map<std::string, uint64_t, std::less<>> renominations_by_reason_;
  PrometheusHistogram decision_seconds_;
  std::vector<PrometheusHistogram> read_seconds_;  // per site
};

// The service's config file: {"fleet": path or object, "clusters": {name: {"api": {"server",
// "token_file", "ca_file"}, "carbon_forecast": {"url", "format"}}}} (names of the fleet's
// sites; a site without "api" is the fleet file's nodes with nothing bound). Relative paths
// resolve against the config file's folder; the fleet's data paths against data_dir.
Result<DispatchConfig> load_dispatch_config(const std::string& path, const std::string& data_dir);

}  // namespace greensched::dispatch
