// Dispatch agents: for each submitted job, choose the site it runs at and the earliest time
// it may start there. Latency-sensitive (LS) jobs must start within the LS bound of their
// submission; best-effort (BE) jobs may be deferred up to their slack. Each agent is one file
// behind this interface; the sites run their local scheduler unchanged.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/multi/whole_job_bound.hpp"

namespace greensched::multi {

struct JobInfo {
  std::size_t index = 0;  // in the job list
  const PodSpec* pod = nullptr;
  int home_site = 0;  // where it was submitted
  bool latency_sensitive = false;
  int64_t submit_s = 0;  // trace seconds
  int64_t duration_s = 0;
  int64_t slack_s = 0;  // BE: latest start = submit + slack; LS: 0
  double data_gb = 0;   // moved if it runs away from home
  // A best-effort job that had not started at its latest start, chosen for again: home_site
  // is where it waits (its data is there), submit_s now and slack_s 0. Agents that learn from
  // submissions have seen it already.
  bool again = false;
};

// What a kWh a job adds at a site is expected to cost and emit over its run.
struct SignalView {
  double carbon_g_per_kwh = 0;
  double price_per_kwh = 0;  // 0 where the site has no price series
};

// What an agent may know about a site at decision time.
class FleetView {
 public:
  virtual ~FleetView() = default;
  virtual const Fleet& fleet() const = 0;
  virtual int64_t now_s() const = 0;  // trace seconds
  virtual int64_t epoch_s(int64_t trace_s) const = 0;
  virtual const Forecaster& forecaster() const = 0;
  virtual int64_t ls_bound_s() const = 0;
  virtual int64_t wake_delay_s() const = 0;

  // Current load of a site: allocated GPU share / its GPUs, plus the GPU requests of jobs
  // dispatched there, due and not started yet (moving or queued). A deferred job holds no
  // capacity before it is due.
  virtual double load(int site) const = 0;
  // Load expected at trace time t >= now: the jobs running there that will still run at t
  // (by the durations the agent knows), the jobs deferred there and planned to run at t,
  // and those due and not started (multi/hour_ledger.hpp). Default: load(site).
  virtual double load_at(int site, int64_t /*t*/) const { return load(site); }
  // Share of the site's GPUs that latency-sensitive jobs not yet submitted are expected to
  // hold at trace time t (the same hour on the past 7 days, or the mean so far before a day
  // has passed, less the LS jobs running there that will still run at t). Best-effort work
  // leaves it free. Default: none.
  virtual double ls_reserve(int /*site*/, int64_t /*t*/) const { return 0.0; }
  // The larger of the site's CPU and memory shares with `pod` added, counted as load() counts
  // GPUs (t <= now) or as load_at() does (t > now): a job without GPUs must not take a site
  // whose CPU is spoken for, nor a GPU job a site whose cores its neighbours hold. Default: 0
  // (only GPUs are counted).
  virtual double host_fill_with(int /*site*/, const PodSpec& /*pod*/, int64_t /*t*/) const {
    return 0.0;
  }
  // The site's GPU capacity (1000 per GPU).
  virtual int64_t gpu_capacity_milli(int site) const = 0;
  // Can `pod` start now on a powered-on node of the site?
  virtual bool fits_now(int site, const PodSpec& pod) const = 0;
  // Can it run there at all (on some node, waking it if powered down)?
  virtual bool fits_ever(int site, const PodSpec& pod) const = 0;
  // Can the site keep room for `pod` while its data moves there: the local policy places it
  // now (its resources reserved until it arrives), or none is free and a powered-down node can
  // wake (woken now, during the transfer, and held)?
  virtual bool can_hold(int site, const PodSpec& pod) const { return fits_ever(site, pod); }
  // Watts the site's facility is expected to draw for `pod` over its run, placed now where
  // the local policy would put it: what it adds now (waking a node when none is on, counting
  // its idle power), and at least its share of the node's full power (its GPUs' share at max
  // power and its CPU share of the busy sockets, x PUE). Under the PWR rule joining a busy
  // GPU adds nothing now, but the job keeps that GPU drawing after its co-tenants leave and
  // takes capacity that would otherwise power down: over its run it costs its share.
  virtual double marginal_watts(int site, const PodSpec& pod) const = 0;
  // Facility watts of `pod` over a run that starts later, whatever the site holds now: its
  // share of the full power of the least-drawing node type there that can host it. Default:
  // marginal_watts.
  virtual double run_watts(int site, const PodSpec& pod) const { return marginal_watts(site, pod); }
  // Facility kW of one fully used GPU at the site (its nodes at full power over their GPUs,
  // GPU-weighted, x PUE now): what the plan of green-plan charges per GPU-hour. Default 1.
  virtual double gpu_kw(int /*site*/) const { return 1.0; }
  // Change of the site's GPU fragmentation (GPU milli) that the local placement would cause.
  virtual double fragmentation_delta(int site, const PodSpec& pod) const = 0;
  // Expected grid carbon and price of the energy a job of `job_kw` (facility) adds at the site
  // over [from_s, to_s) in trace seconds, as forecast now. Without on-site energy: the
  // forecaster's means of the site's carbon and price series. With it (FleetSim): the net
  // marginal view of multi/net_signal.hpp, after on-site generation and the battery.
  virtual SignalView expected_signal(int site, int64_t from_s, int64_t to_s, double job_kw) const;
  // The jobs submitted at this instant, the one being decided among them, in the order they
  // are decided (with the durations the agent knows): an agent may assign them together
  // rather than one by one. On a trace that starts with its running jobs, they all arrive at
  // its first instant. Default: none (each job is decided alone).
  virtual std::span<const JobInfo> submitted_now() const { return {}; }
  // Whether the caller keeps Dispatch::alternatives (explanations, live dispatch). When not,
  // an agent may leave out the sites that cannot hold its choice, without previewing them.
  virtual bool wants_alternatives() const { return true; }
};

// Whether `pod` keeps the site's load (FleetView::load) and its CPU and memory
// (FleetView::host_fill_with) within 1 - headroom.
bool has_room(const FleetView& view, int site, const PodSpec& pod, double headroom);
// Whether a best-effort `pod` starting at trace time `start` keeps the site's expected load
// then (FleetView::load_at) plus the LS reserve (FleetView::ls_reserve), and its CPU and
// memory then, within `max_fill`.
bool has_be_room(const FleetView& view, int site, const PodSpec& pod, int64_t start,
                 double max_fill);

// The best option an agent saw at one site, for explanations.
struct Alternative {
  int site = 0;
  int64_t start_s = 0;     // trace seconds
  double forecast_ci = 0;  // gCO2/kWh over the job's run, as forecast
  // Grams of CO2 the agent expects of the run and of moving its data there; NaN where it
  // estimates none (carbon-forecast ranks by intensity alone).
  double expected_g = std::numeric_limits<double>::quiet_NaN();
  // What the agent ranks the options by, in its objective's units (green: grams plus the
  // weighted price and fragmentation; green-plan: plus the plan's capacity price; green-cost:
  // USD; carbon-forecast: the forecast intensity). Lower wins.
  double cost = 0;
  double kw = std::numeric_limits<double>::quiet_NaN();  // facility kW expected; NaN: none
};

struct Dispatch {
  Dispatch() = default;
  Dispatch(int to_site, int64_t not_before, std::string why, std::vector<Alternative> options = {})
      : site(to_site),
        not_before_s(not_before),
        reason(std::move(why)),
        alternatives(std::move(options)) {}

  int site = 0;
  int64_t not_before_s = 0;               // trace seconds; the job may start no earlier
  std::string reason;                     // one line a person can read
  std::vector<Alternative> alternatives;  // best option per site considered (may be empty)
  // For explanations, where the agent priced them: staying home and starting now (what the
  // local scheduler alone would do), and the best option that starts without waiting.
  std::optional<Alternative> home_now;
  std::optional<Alternative> now_best;
};

class DispatchAgent {
 public:
  virtual ~DispatchAgent() = default;
  virtual std::string_view name() const = 0;
  virtual Dispatch decide(const JobInfo& job, const FleetView& view) = 0;

  // What the agent learns from the jobs it is asked about (green-plan: the arrival history),
  // so that a restarted dispatch service carries it over. observe() learns from a job as
  // decide() does, without deciding (for a fleet of `n_sites`); state() is all it has
  // learned (null: nothing, or an agent that learns nothing); restore() replaces what it has
  // learned with a state() of the same agent on a fleet of `n_sites`, or says why it cannot.
  virtual void observe(const JobInfo& /*job*/, int /*n_sites*/) {}
  virtual nlohmann::json state() const { return nullptr; }
  virtual Status restore(const nlohmann::json& state, int n_sites);
};

// Seconds before `job` could start at `site` counting only data movement.
double transfer_seconds(const FleetView& view, const JobInfo& job, int site);
// Sites where an LS job may run without breaking its bound: home always, others when its
// data arrives within the bound and a node is on there, or can wake within the bound (a node
// starts waking when the job is dispatched, so the wake-up runs during the transfer).
std::vector<int> ls_feasible_sites(const FleetView& view, const JobInfo& job);

// An option as a decision record holds it (explain reads it): site, start_offset_s (from
// `now_s`), forecast_ci, cost, and expected_g and kw where the agent estimated them.
nlohmann::json alternative_json(const Alternative& a, const Fleet& fleet, int64_t now_s);
// Each site's carbon intensity as the view's forecaster foresees it now, every `step_s` from
// now to `until_s` (at most 49 points): {"step_s", "from_s", "sites": {name: [gCO2/kWh]}},
// values to 0.1. With `actual`, the series' true values at the same points instead.
nlohmann::json carbon_curve_json(const FleetView& view, int64_t until_s, bool actual,
                                 int64_t step_s = 3600);

struct AgentOptions {
  double price_weight_g = 500.0;  // green: grams CO2 counted per currency unit of electricity
  double frag_weight_g = 50.0;    // green: grams per GPU-hour of added fragmentation
  // green: what it minimises. kCarbon: grams (+ price_weight_g per currency unit, as above);
  // kCost: USD of electricity (frag_weight_g / price_weight_g USD per fragmented GPU-hour);
  // kCostCarbon: USD + carbon_price_usd_per_t per tonne. Agents green-cost, green-cost-carbon.
  enum class Objective { kCarbon, kCost, kCostCarbon };
  Objective objective = Objective::kCarbon;
  double carbon_price_usd_per_t = 100.0;
  int64_t step_s = 3600;  // deferral candidates: start now or at each step within slack
  // carbon-forecast: a BE job goes only where the site's load with it stays within
  // 1 - be_headroom, so LS jobs always find room and a burst does not herd onto one site.
  double be_headroom = 0.1;
  // green: a BE job goes only where the site's expected load at its start, with it and the
  // LS reserve, stays within be_max_fill (has_be_room): a site cannot pack its GPUs full.
  double be_max_fill = 0.97;
  // green: a start later than the earliest counts its cost this share higher, so a job is
  // deferred only where the forecast saves more than that: past-only forecasts miss by tens
  // of percent, and a deferred job holds its hours at the site against the jobs (LS above all)
  // that would use them. Measured at 70 % fleet load over four seasons, deferring on any
  // forecast saving made 12 h of slack cost 1.4-3.7 points of carbon saving against none.
  double defer_margin = 0.3;
  // green-plan: a move's transfer counts this many times its grams (or USD) in the choice;
  // what the run then emits and the reason it gives are the true figures. A transfer is spent
  // for certain against a saving that is a forecast, and a clean site's room is worth more to
  // a job with little data per GPU-hour: the fleet bound moves mostly long jobs, with about a
  // seventh of the transfer energy green spends. Measured at 70 % fleet load over four
  // seasons (seeds 42-44), 16 rather than 1 raised green-plan's saving by 0.6-1.7 points of
  // local's carbon in every window and slack, with half the transfer energy.
  double plan_move_weight = 16.0;
  // green-plan: a site whose load is within this of be_max_fill is saturated. Beyond the plan's
  // horizon a GPU-hour there is priced at what it would cost at the cheapest site that is not,
  // less its own cost (CapacityPlan): long jobs then take a clean saturated site only where it
  // beats the site that would run the overflow. Measured at 70 % fleet load over four seasons
  // (seeds 42-44), it raised green-plan's share of the bound's saving from 82.3 to 84.1 % on the
  // mean of the 12 window-slack cells and halved its transfer energy; 0.02 and 0.03 did no
  // better (-0.2 and -0.6 points), nor did the same price inside the plan's hours.
  double plan_saturated_margin = 0.01;
  // green-plan: when set, these capacity prices (per site and trace hour, the objective's units
  // per GPU-hour) instead of its plan's, in every hour and with no price after a horizon: the
  // fleet bound's (FleetBoundSide::capacity_prices, `multi --bound-prices`), which know every
  // job to come. What the plan's forecast of the work costs the agent, beside --oracle's
  // forecast of the signals.
  std::shared_ptr<const std::vector<std::vector<double>>> capacity_prices;
  // green-plan: also plan the latency-sensitive work to come (forecast per home site like the
  // best-effort work, run in its own hour at home or at a site its data reaches within the LS
  // bound) rather than reserve each site's expected LS load, so that the plan's prices weigh
  // it too (`multi --plan-ls`). Off by default: at 70 % fleet load over four seasons (seeds
  // 42-44, slack 0, 4 and 12 h) it reached 80.8 % of the bound's saving on the mean of the 12
  // cells, against 81.2 % without.
  bool plan_ls_work = false;
  // green-plan: assign the jobs submitted in one instant together, as one whole-job plan
  // (multi/batch_assignment.hpp), and steer each of them by its prices (`multi
  // --plan-batch`). Off by default: on the same cells it reached 80.6 %, against 81.2 %.
  bool plan_batch = false;
  // bound-schedule: per job (JobInfo::index), the site and delay it starts at: the fleet
  // bound's schedule (FleetBoundResult::schedule, `multi --bound-schedule`).
  std::shared_ptr<const std::vector<WholeJobStart>> schedule;
};

// The carbon price (USD per tonne) the site energy controllers weigh for an agent's run, so
// that they minimise what the agent minimises: carbon_price_usd_per_t for green-cost-carbon;
// 0 for every other agent (the controllers then minimise cost alone).
double controller_carbon_price_usd_per_t(std::string_view agent, const AgentOptions& options);

// local, round-robin, least-loaded, lowest-carbon-now, carbon-forecast, green, green-plan
// (what `all` runs); make_agent also knows green-cost and green-cost-carbon (green on another
// objective).
std::vector<std::string> agent_names();
// Every name make_agent knows: agent_names(), then green-cost and green-cost-carbon.
std::vector<std::string> known_agent_names();
// Whether the agent plans on the forecaster (forecast.hpp): carbon-forecast, green and
// green-plan. Only their runs differ with the oracle's or learned forecasts.
bool agent_reads_forecasts(std::string_view name);
Result<std::unique_ptr<DispatchAgent>> make_agent(std::string_view name,
                                                  const AgentOptions& options = {});

}  // namespace greensched::multi
