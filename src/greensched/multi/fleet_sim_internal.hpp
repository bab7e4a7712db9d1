// The fleet simulator's run-time state, shared by its parts: the event loop and set-up
// (fleet_sim.cpp), what agents see of the fleet (fleet_view.cpp), one handler per event and
// the bookkeeping of the site engines' starts and stops (fleet_events.cpp), and the energy,
// time series and summary metrics (fleet_metrics.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/hour_ledger.hpp"
#include "greensched/multi/learned_forecaster.hpp"
#include "greensched/multi/net_signal.hpp"
#include "greensched/policy/filter.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/sim/site_engine.hpp"

namespace greensched::multi::detail {

struct Job {
  JobInfo info;
  int site = -1;
  int64_t start_s = -1;  // of the current run; -1 while not running
  bool done = false;
  // Deferred: its planned run [planned_from_s, + duration) is in the site's ledger until due.
  bool planned = false;
  int64_t planned_from_s = 0;
  // A job moving here to start on arrival holds an empty node (or one waking for it) until
  // it arrives, so that what arrives first does not take it: the node, or -1.
  NodeIndex held = -1;
  // Its room reserved there (SiteEngine::hold_for): counted in the site's ledgers over
  // [hold_from_s, hold_to_s), from its dispatch to the end of its run, until it arrives.
  int64_t hold_from_s = 0, hold_to_s = 0;
  bool chosen_again = false;  // at its latest start (begin_latest_start), once at most
  bool started_once = false;  // has started at least once
};

class FleetSim;

// What a job takes at a site: GPU milli, CPU milli and memory.
struct Demand {
  int64_t gpu_milli = 0, cpu_milli = 0, memory_mib = 0;
  static Demand of(const PodSpec& pod) {
    return Demand{pod.total_gpu_milli(), pod.cpu_milli, pod.memory_mib};
  }
  Demand operator-() const { return Demand{-gpu_milli, -cpu_milli, -memory_mib}; }
  Demand& operator+=(const Demand& o) {
    gpu_milli += o.gpu_milli;
    cpu_milli += o.cpu_milli;
    memory_mib += o.memory_mib;
    return *this;
  }
  Demand& operator-=(const Demand& o) { return *this += -o; }
};

// Books a site engine's starts and stops into the fleet's ledgers and records.
struct SiteHooks final : sim::SiteEngineListener {
  FleetSim* sim = nullptr;
  std::size_t site = 0;
  void on_start(PodId id, NodeIndex node, int64_t now) override;
  void on_stop(PodId id, NodeIndex node, int64_t now, bool finished) override;
};

// A site at run time: its cluster, local scheduler and power, run by the site engine of
// `simulate --mode replay` (sim/site_engine.hpp); the fleet adds what dispatch needs.
struct SiteRuntime {
  const SiteSpec* spec = nullptr;
  std::unique_ptr<Cluster> cluster;
  std::shared_ptr<frag::FragmentationModel> frag;
  std::shared_ptr<const std::vector<power::NodePower>> figures;
  std::unique_ptr<policy::Policy> policy;
  std::unique_ptr<policy::Scheduler> scheduler;
  std::unique_ptr<power::ClusterPower> power;
  Rng rng{0};
  Rng preview_rng{0};
  SiteHooks hooks;
  std::unique_ptr<sim::SiteEngine> engine;
  int64_t waiting = 0;  // dispatched here, not yet ready
  // Requests of jobs dispatched here, due and not started yet (moving without a node held,
  // or queued): agents see them as taken, so a burst of submissions does not all pick the
  // same site.
  Demand pending;
  // Promised GPU capacity per hour (running jobs to their expected end, deferred jobs over
  // their planned run), the same for latency-sensitive jobs running here alone, and the CPU
  // and memory promised as `ledger` counts GPUs.
  HourLedger ledger, ls_ledger, cpu_ledger, memory_ledger;
  // Adds `d` (negative: takes it off) to the ledgers of every resource over [from, to).
  void promise(int64_t from, int64_t to, const Demand& d) {
    ledger.add(from, to, d.gpu_milli);
    cpu_ledger.add(from, to, d.cpu_milli);
    memory_ledger.add(from, to, d.memory_mib);
  }
  int64_t ls_alloc_milli = 0;    // GPU milli held by running LS jobs
  double full_gpu_it_watts = 0;  // IT watts per GPU of the GPU nodes at full power (gpu_kw)
  std::vector<double> ls_hourly_milli_s;  // LS GPU milli x seconds per trace hour from hour0
  uint64_t version = 0;                   // bumped on every dispatch-side change
  // Accumulators.
  double energy_j = 0;
  double carbon_g = 0;
  double cost = 0;  // at the site's price series (0 without one)
  double alloc_milli_seconds = 0;
  int64_t jobs = 0;

  std::vector<double> hourly_kwh;  // facility energy per hour from FleetSim::hour0_

  std::size_t queued() const { return engine->queued(); }
  // Changes whenever the site changes (for the preview cache).
  uint64_t view_version() const { return version + engine->version(); }
  // Facility watts at epoch second t (the PUE may follow the weather).
  double facility_watts(int64_t t) const { return engine->it_watts() * spec->pue_at(t); }
  int64_t online_nodes() const {
    int64_t n = 0;
    for (std::size_t i = 0; i < cluster->size(); ++i)
      n += cluster->state(static_cast<NodeIndex>(i)).online;
    return n;
  }
};

enum class EventKind : int { kJobReady, kJobSubmit, kLatestStart, kSample };

struct Event {
  int64_t time;
  EventKind kind;
  uint64_t seq;
  std::size_t a;  // job
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return static_cast<int>(kind) > static_cast<int>(o.kind);
    return seq > o.seq;
  }
};

class FleetSim final : public FleetView {
 public:
  FleetSim(const Fleet& fleet, const MultiOptions& options)
      : fleet_(fleet),
        options_(options),
        forecaster_(options.oracle ? make_oracle_forecaster()
                    : options.learned_forecasts
                        ? make_learned_forecaster(fleet, options.learned_forecasts)
                        : make_same_hour_forecaster()),
        net_cache_(controller_carbon_price_usd_per_t(options.agent, options.agent_options),
                   options.day_ahead_prices) {}

  Result<MultiResult> run(const std::vector<PodSpec>& pods, uint32_t shape_count);

  // The run split at the agent's decisions (run() is these calls with an agent; the
  // FleetStepper of multi/fleet_stepper.hpp hands them to a caller). begin() sets the run up;
  // next_decision() runs the events up to the next job an agent must dispatch (true) or to
  // the end of the run (false); pending() is that job as the agent sees it; apply() books the
  // dispatch chosen for it; finish() measures the rest of the window and returns the result.
  [[nodiscard]] Status begin(const std::vector<PodSpec>& pods, uint32_t shape_count);
  [[nodiscard]] Result<bool> next_decision();
  const JobInfo& pending() const { return pending_.info; }
  void apply(Dispatch d);
  Result<MultiResult> finish();
  // Running totals for a caller between decisions: carbon (g) and energy cost (currency
  // units, at the sites' price series) integrated inside the measured window up to now, and
  // the LS jobs submitted inside it that have started later than the LS bound.
  double carbon_g() const;
  double cost() const;
  int64_t ls_started_late() const { return ls_started_late_; }

  // FleetView.
  const Fleet& fleet() const override { return fleet_; }
  int64_t now_s() const override { return now_; }
  int64_t epoch_s(int64_t trace_s) const override { return fleet_.start_s + trace_s; }
  const Forecaster& forecaster() const override { return *forecaster_; }
  int64_t ls_bound_s() const override { return options_.ls_bound_s; }
  int64_t wake_delay_s() const override { return options_.wake_delay_s; }
  double load(int site) const override;
  int64_t gpu_capacity_milli(int site) const override {
    return sites_[site].cluster->total_gpu_milli();
  }
  bool fits_now(int site, const PodSpec& pod) const override;
  bool fits_ever(int site, const PodSpec& pod) const override;
  bool can_hold(int site, const PodSpec& pod) const override { return preview(site, pod).holdable; }
  double marginal_watts(int site, const PodSpec& pod) const override {
    return preview(site, pod).watts;
  }
  double run_watts(int site, const PodSpec& pod) const override;
  double gpu_kw(int site) const override {
    const SiteRuntime& s = sites_[site];
    return s.full_gpu_it_watts / 1000.0 * s.spec->pue_at(epoch_s(now_));
  }
  double fragmentation_delta(int site, const PodSpec& pod) const override {
    return preview(site, pod).frag_milli;
  }
  SignalView expected_signal(int site, int64_t from_s, int64_t to_s, double job_kw) const override;
  double load_at(int site, int64_t t) const override;
  double host_fill_with(int site, const PodSpec& pod, int64_t t) const override;
  double ls_reserve(int site, int64_t t) const override;
  // GPU milli of LS jobs expected at `site` in trace hour `hour` (>= now_hour): ls_reserve's
  // same-hour mean over the complete past days.
  double expected_ls_milli(int site, int64_t hour, int64_t now_hour) const;
  bool wants_alternatives() const override { return options_.record; }
  std::span<const JobInfo> submitted_now() const override;

 private:
  struct Preview {
    double watts = 0;
    double frag_milli = 0;
    bool holdable = false;  // on an empty node, or on a powered-down one that can wake
  };
  Preview preview(int site, const PodSpec& pod) const;
  // Whether the site's GPUs (less `offline` GPU milli), CPU and memory hold `pod` beside what
  // is allocated and what was dispatched there and waits.
  bool promised_room(const SiteRuntime& s, const PodSpec& pod, int64_t offline) const;

  // Set-up (fleet_sim.cpp): sites with their clusters and local policies, then jobs with
  // their home sites and submission events, then the first checks and sample.
  [[nodiscard]] Status set_up_sites(const std::vector<PodSpec>& pods, uint32_t shape_count,
                                    Rng& seeds, std::vector<double>& weights);
  [[nodiscard]] Status set_up_jobs(const std::vector<PodSpec>& pods,
                                   const std::vector<double>& weights, Rng& seeds);
  void set_up_clock();
  // Whether the loop may stop after the event just handled.
  bool finished() const;

  // One handler per event kind (fleet_events.cpp).
  void on_ready(std::size_t j);
  void on_sample();
  // The submission of job j up to its dispatch (begin_submit: what the agent sees), and
  // from it (end_submit, with the site and start bounds enforced); the same for a job chosen
  // for again at its latest start (begin_latest_start: false when it needs no choice).
  void begin_submit(std::size_t j);
  void end_submit(std::size_t j, Dispatch d);
  bool begin_latest_start(std::size_t j);
  void end_latest_start(std::size_t j, const Dispatch& d);
  // Moves a job's data to `site`: charges its energy and returns when it can be ready.
  int64_t move_data(const Job& job, SiteRuntime& s, int64_t ready);
  void record_dispatch(std::size_t j, const Dispatch& d);
  // Counts job's reserved room at site s in its ledgers from now to `to` (Job::hold_to_s).
  void promise_hold(SiteRuntime& s, Job& job, int64_t to);

 public:
  // A site engine started or stopped job j (SiteHooks).
  void on_started(std::size_t site, std::size_t j, NodeIndex node);
  void on_stopped(std::size_t site, std::size_t j, bool finished);

 private:
  // Final metrics (fleet_metrics.cpp).
  void summarize_delays();
  void summarize_sites(const std::vector<PodSpec>& pods);

  // The duration the agents know of job j: its predicted one with --predict-durations.
  int64_t known_duration(std::size_t j) const {
    return predicted_s_.empty() ? jobs_[j].info.duration_s : predicted_s_[j];
  }
  // LS GPU milli x seconds held at the site over [from, to) (trace seconds), for ls_reserve.
  void record_ls(SiteRuntime& s, int64_t from, int64_t to);

  void push(int64_t time, EventKind kind, std::size_t a) {
    events_.push(Event{time, kind, seq_++, a});
  }
  // The earliest instant of the fleet's events and the sites' engines, if any.
  std::optional<int64_t> next_time();
  void advance(int64_t t);
  // Adds facility energy over [from, to) (epoch seconds, to > from) at `it_watts` to the
  // site's totals and hourly series, hour by hour when the PUE follows the weather.
  void accumulate(SiteRuntime& s, int64_t from, int64_t to, double it_watts);
  void add_hourly(SiteRuntime& s, int64_t from, int64_t to, double watts);
  bool in_window(int64_t t) const {
    return t >= options_.measure_from_s && t < options_.measure_to_s;
  }
  void sample();
  bool nothing_waits() const {
    for (const SiteRuntime& s : sites_) {
      if (s.queued() > 0 || s.waiting > 0) return false;
    }
    return true;
  }

  const Fleet& fleet_;
  MultiOptions options_;
  std::unique_ptr<Forecaster> forecaster_;
  std::vector<SiteRuntime> sites_;
  std::vector<Job> jobs_;
  std::vector<sim::SiteJob> site_jobs_;  // the engines' view of the jobs, by job index
  std::vector<uint32_t> site_keys_;      // their feasibility keys, shared by every engine
  uint32_t ready_rank_ = 0;              // queue order: the order jobs became ready
  const std::vector<PodSpec>* pods_ = nullptr;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  int64_t now_ = 0;
  int64_t last_ = 0;
  int64_t first_ = 0;
  std::size_t jobs_done_ = 0;
  std::size_t jobs_submitted_ = 0;
  MultiResult result_;
  // Stepping state: the instant's site events are handled and its fleet events are being
  // popped; the decision handed out (kind kNone: none); the run has ended.
  struct Pending {
    enum class Kind { kNone, kSubmit, kLatestStart } kind = Kind::kNone;
    std::size_t job = 0;
    JobInfo info;
  };
  Pending pending_;
  bool in_instant_ = false;
  bool ended_ = false;
  std::chrono::steady_clock::time_point wall_start_;
  int64_t ls_started_late_ = 0;
  std::vector<nlohmann::json> records_;  // per job, when recording
  // The first refused cluster change: the policy and the event order guarantee each one fits,
  // so a refusal is a bug; run() stops and returns it.
  Status broken_;

  void expect_ok(Status s) {
    if (!s.ok() && broken_.ok()) broken_ = Error{s.message(), ErrorCode::kInternal};
  }
  std::vector<int64_t> predicted_s_;    // per job, with options.predict_durations
  std::vector<std::size_t> by_submit_;  // job indices in order of submission (then index)
  // submitted_now(): the jobs submitted at trace second batch_at_.
  mutable int64_t batch_at_ = std::numeric_limits<int64_t>::min();
  mutable std::vector<JobInfo> batch_;
  mutable std::vector<std::tuple<const PodSpec*, uint64_t, Preview>> preview_cache_;
  // The local policy's placement of a pod shape (CPU, memory, GPUs, models) at a site, kept
  // while the site's view_version holds: jobs of one shape share it (fleet_view.cpp).
  struct ShapePlacement {
    bool valid = false;
    uint64_t version = 0;
    PodShape shape;
    int64_t memory_mib = 0;
    NodeIndex node = -1;  // -1: no node can host it, not even one that wakes
    GpuMask gpus = 0;
    bool waking = false;
    // placement_cost at `pue` (NaN: not yet).
    double pue = std::numeric_limits<double>::quiet_NaN();
    double watts = 0, frag_milli = 0;
  };
  // [site][pod shape]: one per memory request seen.
  mutable std::vector<std::vector<std::vector<ShapePlacement>>> shape_placements_;
  mutable NetSignalCache net_cache_;
  std::vector<GenerationForecast> generation_;          // per site
  mutable std::vector<std::vector<double>> run_watts_;  // [site][pod shape]; NaN: not yet
  // ls_reserve's expected LS load, [site][hour - reserve_hour_] (NaN: not yet): it reads
  // complete hours only, so it holds for the trace hour reserve_hour_.
  mutable int64_t reserve_hour_ = std::numeric_limits<int64_t>::min();
  mutable std::vector<std::vector<double>> reserve_expected_;
  int64_t hour0_ = std::numeric_limits<int64_t>::min();  // epoch hour of hourly_kwh[0]
  int64_t trace_hour0_ = 0;  // trace second of ls_hourly_milli_s[0] and the ledgers' first hour
};

}  // namespace greensched::multi::detail
