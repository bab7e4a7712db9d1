#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/parallel_for.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/core/words.hpp"
#include "greensched/energy/controller.hpp"
#include "greensched/multi/fleet_bound.hpp"
#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/learned_forecaster.hpp"
#include "greensched/multi/mpc_forecast.hpp"
#include "greensched/multi/site_controller.hpp"
#include "greensched/multi/site_fill.hpp"
#include "greensched/report/energy_writer.hpp"
#include "greensched/report/multi_writer.hpp"
#include "greensched/report/shard_files.hpp"
#include "greensched/sim/decision_record.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/sim/shard.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "multi_json.hpp"
#include "progress.hpp"

namespace greensched::app {
namespace {

struct MultiCliOptions {
  std::string fleet;
  std::string data_dir;  // add_data_dir_option: default_data_dir() unless given
  std::string pods;
  std::string agents = "local,green-plan";
  bool oracle = false;
  std::string seeds = kDefaultSeeds;
  uint64_t seed = 42;  // the seed being run, one of --seeds
  int64_t ls_bound_s = 600;
  std::string slack_h = "12";  // comma list of hours
  std::string power_down_idle = "off";
  int64_t power_down_idle_s = -1;  // --power-down-idle parsed
  int64_t wake_delay_s = 300;
  int64_t sample_s = 3600;
  double data_gb = -1;
  double days = 0;  // 0: 14 with --load, else 30 (built-in jobs' arrival span)
  double warmup_days = 1;
  std::string loads = "70";  // "off": the pod list at its own rate
  std::string start;
  std::string power_model;
  std::string out;
  int jobs = 0;
  bool quiet = false;
  bool json = false;
  std::string record;
  bool decisions = false;          // --decisions: write decisions.csv
  std::string shard;               // I/N: run only block I of N of the plan (over every seed)
  std::string description;         // every option that changes the results, for shard.json
  sim::RunRange runs;              // of the seed being run: its plan's runs that this shard runs
  bool predict_durations = false;  // monitor subsystem
  bool preempt_be = false;
  bool bound = false;           // resolved: --bound, or the default (not with --shard)
  bool bound_flag = false;      // --bound given
  bool no_bound = false;        // --no-bound
  bool bound_prices = false;    // --bound-prices
  bool bound_schedule = false;  // --bound-schedule
  bool plan_ls = false;         // --plan-ls
  bool plan_batch = false;      // --plan-batch
  std::string energy_controllers = "none";
  double carbon_price = 100;  // USD/t, green-cost-carbon
  std::string generation_forecast = "past";
  std::string mpc_forecast = "seasonal-naive";
  std::string mpc_forecast_models;
  std::string forecast = "same-hour";  // the agents' forecasts: same-hour|learned
  multi::GenerationForecastOptions generation;
  bool day_ahead_prices = false;
  energy::ControllerOptions controller = [] {
    energy::ControllerOptions c;
    c.forecast_days = 7;
    return c;
  }();
};

// --energy-controller: a comma list of none, greedy, mpc, oracle.
Result<std::vector<energy::ControllerKind>> parse_controllers(const std::string& list) {
  std::vector<energy::ControllerKind> kinds;
  for (std::size_t pos = 0;;) {
    const std::size_t comma = list.find(',', pos);
    auto kind = energy::parse_controller(list.substr(pos, comma - pos));
    if (!kind.ok()) return Error{fmt::format("--energy-controller: {}", kind.error())};
    kinds.push_back(kind.value());
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return kinds;
}

// One agent to run, whether its forecasts see the future (--oracle), and whether it plans with
// the fleet bound's capacity prices (--bound-prices).
struct AgentRun {
  std::string name;
  bool oracle = false;
  bool bound_prices = false;
};

// --agent: a comma list of agent names, or all; with --oracle also oracle runs of the
// forecasting agents; with --bound-prices also a run of each green-plan run on the bound's
// capacity prices.
Result<std::vector<AgentRun>> parse_agent_runs(const std::string& list, bool oracle,
                                               bool bound_prices, bool bound_schedule) {
  std::vector<std::string> names;
  for (std::size_t pos = 0;;) {
    const std::size_t comma = list.find(',', pos);
    names.push_back(list.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::vector<AgentRun> runs;
  for (const std::string& name : names) {
    if (name == "all") {
      for (const std::string& n : multi::agent_names()) runs.push_back(AgentRun{n, false});
      continue;
    }
    if (auto agent = multi::make_agent(name); !agent.ok()) return Error{agent.error()};
    runs.push_back(AgentRun{name, false});
  }
  if (oracle) {
    const auto copy = runs;
    for (const AgentRun& run : copy) {
      if (multi::agent_reads_forecasts(run.name)) {
        runs.push_back(AgentRun{run.name, true});
      }
    }
  }
  if (bound_prices) {
    const auto copy = runs;
    for (const AgentRun& run : copy) {
      if (run.name == "green-plan") runs.push_back(AgentRun{run.name, run.oracle, true});
    }
    if (runs.size() == copy.size()) {
      return Error{"--bound-prices: only green-plan plans with capacity prices; add it to --agent"};
    }
  }
  if (bound_schedule) runs.push_back(AgentRun{"bound-schedule"});
  return runs;
}

// The command line's lists and numbers, checked; an error here is a usage error.
struct MultiArgs {
  std::vector<AgentRun> runs;
  std::vector<double> slacks;  // hours a BE job may be deferred, one run each
  std::vector<double> loads;   // offered load in %; empty: the pod list as it is
  double days = 0;             // --days, or its default
  std::vector<energy::ControllerKind> controllers;
  multi::GenerationForecastOptions generation;  // --generation-forecast and its errors
  std::vector<uint64_t> seeds;                  // --seeds, each a whole run of the plan
  int64_t power_down_idle_s = -1;               // --power-down-idle; -1: off
  multi::MpcForecastKind mpc_forecast = multi::MpcForecastKind::kSeasonalNaive;
  bool learned_agents = false;  // --forecast learned
  // --mpc-forecast learned and --forecast learned: the models of each window, trained (or
  // loaded) once when a run of that window first needs them, shared by the agents and the mpc.
  std::shared_ptr<multi::LearnedForecastsByWindow> learned;
  // Notes for stderr, each printed once however many runs give it.
  struct Notes {
    std::mutex mutex;
    std::set<std::string> printed;
  };
  std::shared_ptr<Notes> notes = std::make_shared<Notes>();
};

void note_once(const MultiArgs& a, const std::string& note) {
  if (note.empty()) return;
  std::lock_guard<std::mutex> lock(a.notes->mutex);
  if (a.notes->printed.insert(note).second) fmt::print(stderr, "note: {}\n", note);
}

// The learned forecasts of the window that starts at `window_start_s`, trained on the
// fleet's series before it (or loaded from --mpc-forecast-models); notes on stderr say which
// series keep the seasonal-naive (mpc) or same-hour (agents) forecast.
Result<std::shared_ptr<const multi::LearnedForecasts>> learned_forecasts(const MultiArgs& a,
                                                                         const multi::Fleet& fleet,
                                                                         int64_t window_start_s) {
  const bool mpc = a.mpc_forecast == multi::MpcForecastKind::kLearned;
  const std::string flags = mpc && a.learned_agents ? "--mpc-forecast learned, --forecast learned"
                            : mpc                   ? "--mpc-forecast learned"
                                                    : "--forecast learned";
  auto got = a.learned->get(fleet, window_start_s);
  if (!got.ok()) return Error{fmt::format("{}: {}", flags, got.error())};
  if (got.value().made) {
    // Where a kind has no model the mpc keeps its seasonal-naive forecast, the agents same-hour.
    const std::string fallback = mpc && a.learned_agents ? "seasonal-naive (mpc) and same-hour"
                                 : mpc                   ? "seasonal-naive"
                                                         : "same-hour";
    for (const multi::MissingModel& missing : got.value().forecasts->models().missing) {
      note_once(a,
                fmt::format("{}: {}: {} {} forecast", flags, missing.why, fallback, missing.kind));
    }
  }
  return got.value().forecasts;
}

Result<MultiArgs> parse_multi_args(const MultiCliOptions& o) {
  MultiArgs a;
  auto seeds = parse_seeds(o.seeds);
  if (!seeds.ok()) return seeds.status().error();
  a.seeds = seeds.value();
  auto power_down = parse_power_down_idle(o.power_down_idle);
  if (!power_down.ok()) return power_down.status().error();
  if (power_down.value().size() != 1) {
    return Error{fmt::format(
        "--power-down-idle: multi runs one setting, got {} ('{}'); run it once per setting",
        power_down.value().size(), o.power_down_idle)};
  }
  a.power_down_idle_s = power_down.value().front();
  if (o.bound_prices && !o.bound) {
    return Error{"--bound-prices needs the bound (the prices are the bound's): drop --no-bound"};
  }
  if (o.bound_schedule && !o.bound) {
    return Error{"--bound-schedule needs the bound (the schedule is the bound's): drop --no-bound"};
  }
  auto runs = parse_agent_runs(o.agents, o.oracle, o.bound_prices, o.bound_schedule);
  if (!runs.ok()) return Error{runs.error()};
  a.runs = std::move(runs.value());
  auto slack_list = sim::parse_number_list(o.slack_h, "--slack", 0, 24 * 366, false);
  if (!slack_list.ok()) return Error{slack_list.error()};
  a.slacks = slack_list.value();
  auto mpc_forecast = multi::parse_mpc_forecast(o.mpc_forecast);
  if (!mpc_forecast.ok()) return Error{"--mpc-forecast: " + mpc_forecast.error()};
  a.mpc_forecast = mpc_forecast.value();
  if (o.forecast != "same-hour" && o.forecast != "learned") {
    return Error{fmt::format("--forecast: unknown forecast '{}' (same-hour|learned)", o.forecast)};
  }
  a.learned_agents = o.forecast == "learned";
  const std::string models_dir = o.mpc_forecast_models;
  const int horizon_h = o.controller.mpc_horizon_h;
  a.learned = std::make_shared<multi::LearnedForecastsByWindow>(
      [models_dir, horizon_h](const multi::Fleet& fleet, int64_t window_start_s) {
        return models_dir.empty() ? multi::train_mpc_forecasts(fleet, window_start_s, horizon_h)
                                  : multi::load_mpc_forecasts(fleet, window_start_s, models_dir);
      });
  if (a.learned_agents && o.oracle) {
    return Error{
        "--forecast learned and --oracle: --oracle adds runs whose forecasts are the actual "
        "series; choose one"};
  }
  if (!o.mpc_forecast_models.empty() && a.mpc_forecast != multi::MpcForecastKind::kLearned &&
      !a.learned_agents) {
    return Error{"--mpc-forecast-models needs --mpc-forecast learned or --forecast learned"};
  }
  auto generation = multi::parse_generation_forecast(o.generation_forecast);
  if (!generation.ok()) return Error{"--generation-forecast: " + generation.error()};
  a.generation = o.generation;
  a.generation.kind = generation.value();
  if (o.loads != "off") {
    auto parsed = sim::parse_number_list(o.loads, "--load", 0, 1000, true);
    if (!parsed.ok()) return Error{parsed.error()};
    a.loads = parsed.value();
  }
  if (o.ls_bound_s < 0 || o.wake_delay_s < 0 || o.sample_s <= 0) {
    return Error{"--ls-bound, --wake-delay must be >= 0 and --sample > 0"};
  }
  if (!(o.days >= 0 && o.days <= 366) || !(o.warmup_days >= 0 && o.warmup_days <= 366)) {
    return Error{"--days must be in (0, 366] and --warmup-days in [0, 366]"};
  }
  a.days = o.days > 0 ? o.days : a.loads.empty() ? 30.0 : 14.0;
  auto controllers = parse_controllers(o.energy_controllers);
  if (!controllers.ok()) return Error{controllers.error()};
  a.controllers = controllers.value();
  if (!(o.carbon_price >= 0 && std::isfinite(o.carbon_price))) {
    return Error{"--carbon-price must be a number >= 0"};
  }
  return a;
}

// The fleet file, or the built-in fleet without --fleet.
Result<multi::Fleet> load_multi_fleet(const MultiCliOptions& o) {
  if (o.fleet.empty()) return multi::builtin_fleet();
  return multi::load_fleet(o.fleet, o.data_dir);
}

// --start: with --load, the first instant of the measured window (trace time 0 is that less
// the warm-up); without it, the UTC time that trace time 0 maps to. Default: the fleet's start
// is trace time 0.
Status apply_start(const MultiCliOptions& o, const MultiArgs& a, multi::Fleet& fleet) {
  if (o.start.empty()) return Status::Ok();
  auto t = parse_utc_time(o.start);
  if (!t.ok()) return Error{fmt::format("--start: {}", t.error())};
  fleet.start_s = t.value();
  if (!a.loads.empty()) fleet.start_s -= std::llround(o.warmup_days * 86400.0);
  return Status::Ok();
}

struct MultiPods {
  std::vector<PodSpec> pods;
  std::string source;  // for the jobs line
};

// The pod list, or without --pods the built-in pod shapes with synthetic times.
Result<MultiPods> load_multi_pods(const MultiCliOptions& o, const multi::Fleet& fleet,
                                  const MultiArgs& a) {
  if (!o.pods.empty()) {
    auto read = trace::read_openb_pods(o.pods, fleet.models);
    if (!read.ok()) return read.status().error();
    return MultiPods{std::move(read.value()), o.pods};
  }
  trace::Workload w = trace::builtin_openb_workload();
  MultiPods out{std::move(w.pods), ""};
  // Under --load the built-in jobs are only templates: 4 weeks of the trace's statistics.
  const int span = a.loads.empty() ? static_cast<int>(std::lround(a.days)) : 28;
  trace::assign_synthetic_times(out.pods, o.seed, span);
  out.source = fmt::format("built-in openb pod shapes with synthetic times over {}",
                           plural(span, "day", "days"));
  return out;
}

Result<power::PowerModel> load_multi_power_model(const std::string& path) {
  if (path.empty()) return power::PowerModel::builtin();
  return power::PowerModel::load(path);
}

void print_fleet_lines(const multi::Fleet& fleet, const MultiPods& pods, std::size_t agents) {
  std::string sites;
  for (const auto& s : fleet.sites) {
    sites += fmt::format("{}{} ({} nodes)", sites.empty() ? "" : ", ", s.name, s.nodes.size());
  }
  fmt::print(stderr, "fleet: {}: {}\njobs: {} ({})\nagents: {}\n", fleet.source, sites,
             pods.pods.size(), pods.source, agents);
}

// The jobs of one load (the pod list as it is without --load) and the window measured.
struct MultiWorkload {
  std::vector<PodSpec> pods;
  double target = 0;
  int64_t from = std::numeric_limits<int64_t>::min();
  int64_t to = std::numeric_limits<int64_t>::max();
};

int64_t fleet_gpu_capacity(const multi::Fleet& fleet) {
  int64_t capacity = 0;
  for (const auto& site : fleet.sites) capacity += multi::site_gpu_milli(site);
  return capacity;
}

// One workload per load; on each every agent and slack runs.
Result<std::vector<MultiWorkload>> build_multi_workloads(const MultiCliOptions& o,
                                                         const MultiArgs& a,
                                                         const multi::Fleet& fleet,
                                                         std::vector<PodSpec> pods) {
  std::vector<MultiWorkload> workloads;
  if (a.loads.empty()) {
    workloads.push_back(MultiWorkload{std::move(pods)});
    return workloads;
  }
  const int64_t capacity = fleet_gpu_capacity(fleet);
  for (double load : a.loads) {
    trace::LoadSpec spec;
    spec.load_pct = load;
    spec.days = a.days;
    spec.warmup_days = o.warmup_days;
    spec.seed = o.seed;
    auto generated = trace::generate_load(pods, capacity, spec);
    if (!generated.ok()) return Error{fmt::format("--load {}: {}", load, generated.error())};
    if (!o.quiet) {
      fmt::print(stderr,
                 "load {} %: {} jobs ({} running at the start), offered load {:.2f} % of the "
                 "fleet's GPUs over {} measured after a {} warm-up, arrivals by {}\n",
                 load, generated.value().pods.size(), generated.value().running_at_start,
                 generated.value().offered_load_pct, plural(a.days, "day", "days"),
                 plural(o.warmup_days, "day", "days"), generated.value().profile);
    }
    workloads.push_back(MultiWorkload{std::move(generated.value().pods), load,
                                      generated.value().window.start_s,
                                      generated.value().window.end_s});
  }
  return workloads;
}

// One run of the plan: a workload, a slack and an agent.
struct MultiRunSpec {
  std::size_t workload;
  double slack_h;
  std::size_t agent;
};

// Workload-major, then slack, then agent: the order of the table and the files.
std::vector<MultiRunSpec> multi_plan(std::size_t workloads, const MultiArgs& a) {
  std::vector<MultiRunSpec> plan;
  for (std::size_t w = 0; w < workloads; ++w) {
    for (double slack : a.slacks) {
      for (std::size_t i = 0; i < a.runs.size(); ++i) plan.push_back(MultiRunSpec{w, slack, i});
    }
  }
  return plan;
}

multi::MultiOptions multi_run_options(const MultiCliOptions& o, const AgentRun& agent,
                                      double slack_h, const MultiWorkload& w,
                                      const power::PowerModel& power_model,
                                      const multi::GenerationForecastOptions& generation) {
  multi::MultiOptions opts;
  opts.agent = agent.name;
  opts.oracle = agent.oracle;
  opts.seed = o.seed;
  opts.ls_bound_s = o.ls_bound_s;
  opts.be_slack_s = static_cast<int64_t>(std::llround(slack_h * 3600.0));
  opts.measure_from_s = w.from;
  opts.measure_to_s = w.to;
  opts.target_load_pct = w.target;
  opts.power_down_idle_s = o.power_down_idle_s;
  opts.wake_delay_s = o.wake_delay_s;
  opts.sample_s = o.sample_s;
  opts.data_gb_per_job = o.data_gb;
  opts.power_model = power_model;
  opts.record = !o.record.empty();
  opts.predict_durations = o.predict_durations;
  opts.preempt_be = o.preempt_be;
  opts.generation_forecast = generation;
  opts.day_ahead_prices = o.day_ahead_prices;
  opts.agent_options.carbon_price_usd_per_t = o.carbon_price;
  opts.agent_options.plan_ls_work = o.plan_ls;
  opts.agent_options.plan_batch = o.plan_batch;
  return opts;
}

// One run: the agent dispatches the workload, then each site energy controller runs on the
// sites' hourly demand.
Result<multi::MultiResult> run_one_multi(const MultiCliOptions& o, const MultiArgs& a,
                                         const multi::Fleet& fleet, const MultiWorkload& w,
                                         uint32_t shapes, multi::MultiOptions opts) {
  if (a.learned_agents && !opts.oracle && multi::agent_reads_forecasts(opts.agent)) {
    auto m = learned_forecasts(a, fleet, multi::measured_hour0_s(fleet, w.pods, w.from));
    if (!m.ok()) return Error{m.error()};
    opts.learned_forecasts = m.value();
  }
  auto r = multi::run_fleet(fleet, w.pods, shapes, opts);
  if (!r.ok()) return Error{r.error()};
  multi::MultiResult result = std::move(r.value());
  // The controllers minimise what the agent minimises: cost, or cost + carbon price.
  energy::ControllerOptions controller = o.controller;
  controller.carbon_price_usd_per_t =
      multi::controller_carbon_price_usd_per_t(opts.agent, opts.agent_options);
  controller.mpc_day_ahead = opts.day_ahead_prices;
  const bool reads_past = std::any_of(a.controllers.begin(), a.controllers.end(), [](auto kind) {
    return kind == energy::ControllerKind::kMpc || kind == energy::ControllerKind::kGreedy;
  });
  if (reads_past && !result.site_hourly_kwh.empty() && !result.site_hourly_kwh[0].empty()) {
    note_once(a, multi::short_history_note(fleet, result.energy_hour0_s, controller));
  }
  for (energy::ControllerKind kind : a.controllers) {
    std::shared_ptr<const multi::LearnedForecasts> learned;
    if (kind == energy::ControllerKind::kMpc &&
        a.mpc_forecast == multi::MpcForecastKind::kLearned) {
      auto m = learned_forecasts(a, fleet, result.energy_hour0_s);
      if (!m.ok()) return Error{m.error()};
      learned = m.value();
    }
    auto e = multi::run_site_controllers(fleet, result, kind, controller, opts.generation_forecast,
                                         learned ? &learned->models() : nullptr);
    if (!e.ok()) return Error{e.error()};
    result.energy.push_back(std::move(e.value()));
  }
  return result;
}

// Every run of the plan in parallel; the results in the plan's order whatever order they
// finish in.
Result<std::vector<multi::MultiResult>> run_multi_plan(
    const MultiCliOptions& o, const MultiArgs& a, const multi::Fleet& fleet,
    const std::vector<MultiWorkload>& workloads, uint32_t shapes,
    const power::PowerModel& power_model, const std::vector<multi::FleetBoundResult>& bounds,
    ProgressBar& bar) {
  std::vector<MultiRunSpec> plan = multi_plan(workloads.size(), a);
  if (o.runs.end < plan.size() || o.runs.begin > 0) {  // --shard: a block of the plan
    plan = std::vector<MultiRunSpec>(plan.begin() + static_cast<std::ptrdiff_t>(o.runs.begin),
                                     plan.begin() + static_cast<std::ptrdiff_t>(o.runs.end));
  }
  std::vector<multi::MultiResult> results(plan.size());
  std::mutex mutex;
  std::size_t done = 0;
  Status s = parallel_for(plan.size(), o.jobs, [&](std::size_t i) -> Status {
    const auto& [w, slack_h, agent] = plan[i];
    multi::MultiOptions opts =
        multi_run_options(o, a.runs[agent], slack_h, workloads[w], power_model, a.generation);
    // --bound-prices and --bound-schedule: the capacity prices of the carbon bound of the
    // run's load and slack, or the schedule read off them.
    const bool scheduled = a.runs[agent].name == "bound-schedule";
    if (a.runs[agent].bound_prices || scheduled) {
      const multi::FleetBoundResult* b = report::bound_of(
          workloads[w].target, static_cast<double>(opts.be_slack_s) / 3600.0, bounds);
      if (b == nullptr || b->carbon.capacity_prices.empty()) {
        return Error{fmt::format(
            "{}: the bound at {:g} % load and {:g} h slack has no capacity prices (work no site "
            "could take within its bounds)",
            scheduled ? "--bound-schedule" : "--bound-prices", workloads[w].target, slack_h)};
      }
      if (scheduled) {
        opts.agent_options.schedule =
            std::make_shared<const std::vector<multi::WholeJobStart>>(b->schedule);
      } else {
        opts.agent_options.capacity_prices =
            std::make_shared<const std::vector<std::vector<double>>>(b->carbon.capacity_prices);
      }
    }
    auto r = run_one_multi(o, a, fleet, workloads[w], shapes, opts);
    if (!r.ok()) return Error{r.error()};
    results[i] = std::move(r.value());
    std::lock_guard<std::mutex> lock(mutex);
    ++done;
    bar.update(done, plan.size(),
               fmt::format("{} slack {:g} h ({:.1f} s)", a.runs[agent].name, slack_h,
                           results[i].wall_seconds));
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  return results;
}

// --bound: each site's capacity when saturated (once), then the fleet bound of
// every load and slack, in parallel.
Result<std::vector<multi::FleetBoundResult>> run_fleet_bounds(
    const MultiCliOptions& o, const MultiArgs& a, const multi::Fleet& fleet,
    const std::vector<PodSpec>& templates, uint32_t shapes,
    const std::vector<MultiWorkload>& workloads, const power::PowerModel& power_model) {
  if (!o.bound) return std::vector<multi::FleetBoundResult>{};
  const auto replays_from = std::chrono::steady_clock::now();
  auto fill = multi::measure_site_capacity(fleet, templates, shapes, power_model, o.seed);
  if (!fill.ok()) return Error{fmt::format("--bound: {}", fill.error())};
  // The tight bound's fill: where each site still starts jobs within the LS bound.
  auto tight_fill =
      multi::calibrate_site_fill(fleet, templates, shapes, power_model, o.seed, o.ls_bound_s);
  if (!tight_fill.ok()) return Error{fmt::format("--bound: {}", tight_fill.error())};
  const double replays_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - replays_from).count();
  std::vector<std::pair<std::size_t, double>> plan;
  for (std::size_t w = 0; w < workloads.size(); ++w) {
    for (double slack : a.slacks) plan.emplace_back(w, slack);
  }
  // Each workload's home sites, as run_fleet draws them (the same for every slack).
  std::vector<std::vector<int>> homes;
  for (const MultiWorkload& w : workloads) {
    homes.push_back(multi::fleet_home_sites(fleet, w.pods.size(), o.seed));
  }
  std::vector<multi::FleetBoundResult> bounds(plan.size());
  Status s = parallel_for(plan.size(), o.jobs, [&](std::size_t i) -> Status {
    const auto& [w, slack_h] = plan[i];
    multi::FleetBoundOptions options;
    options.ls_bound_s = o.ls_bound_s;
    options.be_slack_s = static_cast<int64_t>(std::llround(slack_h * 3600.0));
    options.data_gb_per_job = o.data_gb;
    for (const multi::SiteCapacity& c : fill.value()) {
      options.site_fill.push_back(c.fill);
      options.site_gpu_kw.push_back(c.gpu_kw);
    }
    for (const multi::SiteFill& f : tight_fill.value()) {
      options.tight_site_fill.push_back(f.load_pct > 0 ? f.fill : 1.0);
    }
    options.power_model = power_model;
    options.measure_from_s = workloads[w].from;
    options.measure_to_s = workloads[w].to;
    options.schedule = o.bound_schedule;
    auto b = multi::fleet_bound(fleet, workloads[w].pods, homes[w], options);
    if (!b.ok()) return Error{fmt::format("--bound: {}", b.error())};
    bounds[i] = std::move(b.value());
    bounds[i].target_load_pct = workloads[w].target;
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  if (!o.quiet) {
    const multi::FleetBoundResult* longest = nullptr;
    for (const auto& b : bounds) {
      if (longest == nullptr || b.wall_seconds > longest->wall_seconds) longest = &b;
    }
    fmt::print(stderr,
               "bound: {} of up to {} pieces, the longest {:.1f} s (LP and dual {:.1f} s, "
               "feasible search {:.1f} s of {} passes and {} moves, tight dual {:.1f} s); site "
               "replays {:.1f} s\n",
               plural(bounds.size(), "LP", "LPs"), bounds.empty() ? 0 : bounds.front().pieces,
               longest ? longest->wall_seconds : 0.0, longest ? longest->dual_wall_seconds : 0.0,
               longest && longest->feasible ? longest->feasible->wall_seconds : 0.0,
               longest && longest->feasible ? longest->feasible->passes : 0,
               longest && longest->feasible ? longest->feasible->moves : 0,
               longest && longest->tight ? longest->tight->wall_seconds : 0.0, replays_s);
    for (std::size_t s = 0; s < tight_fill.value().size(); ++s) {
      const multi::SiteFill& f = tight_fill.value()[s];
      if (f.load_pct <= 0) continue;
      fmt::print(stderr,
                 "bound: {} fill {:.1f} % saturated, {:.1f} % at {:g} % load (p99 delay {:.0f} s "
                 "within {} s)\n",
                 fleet.sites[s].name, 100.0 * fill.value()[s].fill, 100.0 * f.fill, f.load_pct,
                 f.p99_delay_s, o.ls_bound_s);
    }
  }
  return bounds;
}

// The summary on stdout: JSON, or the table (and the energy table where there is energy).
// With --json the rows are added to `json_rows` (printed once every seed ran) instead.
void print_multi_results(const MultiCliOptions& o, const multi::Fleet& fleet,
                         const std::vector<multi::MultiResult>& results,
                         const std::vector<multi::FleetBoundResult>& bounds, bool several_seeds,
                         nlohmann::json& json_rows) {
  bool show_energy = o.energy_controllers != "none";
  for (const auto& site : fleet.sites) show_energy = show_energy || site.energy.has_value();
  if (o.json) {
    for (nlohmann::json& row : multi_results_json(results, show_energy, bounds, o.seed)) {
      json_rows.push_back(std::move(row));
    }
    return;
  } else if (!o.quiet) {
    if (several_seeds) std::cout << fmt::format("seed {}:\n", o.seed);
    std::cout << report::multi_summary_table(results);
    if (!bounds.empty()) std::cout << "\n" << report::fleet_bound_table(results, bounds);
    if (show_energy) std::cout << "\n" << report::energy_summary_table(results);
  }
  std::cout.flush();
}

Status append_text_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::app);
  if (!file) return Error{fmt::format("{}: cannot open for writing", path), ErrorCode::kIo};
  file << text;
  file.close();
  if (!file) return Error{fmt::format("{}: write failed", path), ErrorCode::kIo};
  return Status::Ok();
}

// The CSVs every multi run writes into its folder, and that a shard lists for merge; bound.csv
// and bound_sites.csv come with the bound (never with --shard).
std::vector<std::string> run_files(const MultiCliOptions& o) {
  std::vector<std::string> names = {"summary.csv", "timeline.csv", "energy_timeline.csv"};
  if (o.decisions) names.push_back("decisions.csv");
  return names;
}

// --record's dispatch records, then --out's CSV files.
// With several seeds each seed's CSVs go into OUT/seed-N and its records are appended.
Status write_multi_files(const MultiCliOptions& o, const multi::Fleet& fleet,
                         const std::vector<multi::MultiResult>& results,
                         const std::vector<multi::FleetBoundResult>& bounds, const std::string& out,
                         bool append) {
  if (!o.record.empty()) {
    std::string records;
    for (const auto& r : results)
      records += sim::tag_run_records(r.records, "agent", r.agent, o.seed);
    if (Status s =
            append ? append_text_file(o.record, records) : write_text_file(o.record, records);
        !s.ok()) {
      return s;
    }
  }
  if (out.empty()) return Status::Ok();
  // Each file straight to disk: the decisions of a long run are tens of MB.
  if (Status s = write_text_files(out, {}); !s.ok()) return s;  // the folder
  const auto path = [&](const char* name) { return (std::filesystem::path(out) / name).string(); };
  using Writer = std::function<void(std::ostream&)>;
  const std::map<std::string, Writer> writers = {
      {"summary.csv", [&](std::ostream& f) { report::write_multi_summary_csv(f, results); }},
      {"timeline.csv",
       [&](std::ostream& f) { report::write_multi_timeline_csv(f, fleet, results); }},
      {"energy_timeline.csv",
       [&](std::ostream& f) { report::write_energy_timeline_csv(f, fleet, results); }},
      {"decisions.csv", [&](std::ostream& f) { report::write_decisions_csv(f, fleet, results); }},
      {"bound.csv", [&](std::ostream& f) { report::write_fleet_bound_csv(f, results, bounds); }},
      {"bound_sites.csv", [&](std::ostream& f) { report::write_fleet_bound_sites_csv(f, bounds); }},
  };
  std::vector<std::string> names = run_files(o);
  if (!bounds.empty()) names.insert(names.end(), {"bound.csv", "bound_sites.csv"});
  std::string written;
  for (const std::string& name : names) {
    if (Status s = write_stream_file(path(name.c_str()), writers.at(name)); !s.ok()) return s;
    written += fmt::format("{}{}/{}", written.empty() ? "" : ", ", out, name);
  }
  if (!o.quiet) fmt::print(stderr, "wrote {}\n", written);
  return Status::Ok();
}

// One seed's runs: `out` is its folder ("" for none), `several_seeds` whether --seeds named more.
int run_multi_seed(const MultiCliOptions& o, const MultiArgs& a, const std::string& out,
                   bool several_seeds, bool append_records, nlohmann::json& json_rows) {
  auto fleet = load_multi_fleet(o);
  if (!fleet.ok()) return fail(fleet);
  if (Status s = apply_start(o, a, fleet.value()); !s.ok()) {
    return fail(s.message(), kExitUsage);
  }
  auto pods = load_multi_pods(o, fleet.value(), a);
  if (!pods.ok()) return fail(pods);
  const uint32_t shapes = trace::assign_shape_ids(pods.value().pods);
  auto power_model = load_multi_power_model(o.power_model);
  if (!power_model.ok()) return fail(power_model);
  if (!o.quiet) {
    if (several_seeds) fmt::print(stderr, "seed {}:\n", o.seed);
    print_fleet_lines(fleet.value(), pods.value(), a.runs.size());
  }

  std::vector<PodSpec> templates;
  if (o.bound) templates = pods.value().pods;
  auto workloads = build_multi_workloads(o, a, fleet.value(), std::move(pods.value().pods));
  if (!workloads.ok()) return fail(workloads);
  // The bounds first: --bound-prices runs plan with their capacity prices.
  auto bounds = run_fleet_bounds(o, a, fleet.value(), templates, shapes, workloads.value(),
                                 power_model.value());
  if (!bounds.ok()) return fail(bounds);
  std::vector<multi::MultiResult> results;
  {
    // The bar's line ends (when it goes) before the summary is printed.
    ProgressBar bar(!o.quiet && stderr_is_terminal());
    auto ran = run_multi_plan(o, a, fleet.value(), workloads.value(), shapes, power_model.value(),
                              bounds.value(), bar);
    if (!ran.ok()) return fail(ran);
    results = std::move(ran.value());
  }
  print_multi_results(o, fleet.value(), results, bounds.value(), several_seeds, json_rows);
  if (Status s = write_multi_files(o, fleet.value(), results, bounds.value(), out, append_records);
      !s.ok()) {
    return fail(s);
  }
  return 0;
}

// Every seed of --seeds, one after the other: each is a whole run of the plan. One seed writes
// its CSVs into --out; several write OUT/seed-N each, and every row of --json and of the
// --record file carries its seed.
int run_multi(MultiCliOptions o) {
  auto args = parse_multi_args(o);
  if (!args.ok()) return fail(args.error(), kExitUsage);
  const MultiArgs& a = args.value();
  o.power_down_idle_s = a.power_down_idle_s;
  const bool several = a.seeds.size() > 1;
  // The plan over every seed: seed, then load, slack and agent, as the files hold the runs.
  std::vector<std::string> run_ids;
  const std::size_t workload_count = std::max<std::size_t>(a.loads.size(), 1);
  for (uint64_t seed : a.seeds) {
    for (std::size_t w = 0; w < workload_count; ++w) {
      for (double slack : a.slacks) {
        for (const AgentRun& run : a.runs) {
          run_ids.push_back(fmt::format(
              "{}/{:g}/{:g}/{}{}{}", seed, a.loads.empty() ? 0.0 : a.loads[w], slack, run.name,
              run.oracle ? "+oracle" : "", run.bound_prices ? "+bound-prices" : ""));
        }
      }
    }
  }
  const std::size_t per_seed = run_ids.size() / a.seeds.size();
  if (!o.shard.empty()) {
    if (o.out.empty()) return fail("--shard needs --out (the shard's own folder)", kExitUsage);
    if (o.bound) return fail("--shard: --bound is not supported with --shard", kExitUsage);
  }
  const auto shard_range = sim::shard_runs(o.shard, run_ids.size());
  if (!shard_range.ok()) return fail(shard_range.status().message(), kExitUsage);
  const sim::RunRange range = shard_range.value();
  nlohmann::json json_rows = nlohmann::json::array();
  std::vector<std::string> files;
  bool first_seed = true;
  for (std::size_t k = 0; k < a.seeds.size(); ++k) {
    const uint64_t seed = a.seeds[k];
    // This seed's runs in the shard's range (all of them without --shard).
    const std::size_t from = std::max(range.begin, k * per_seed);
    const std::size_t to = std::min(range.end, (k + 1) * per_seed);
    if (from >= to) continue;
    o.runs = {from - k * per_seed, to - k * per_seed};
    o.seed = seed;
    MultiArgs seed_args = a;
    seed_args.generation.seed = seed;
    const std::string sub = several ? fmt::format("seed-{}", seed) : "";
    const std::string out =
        o.out.empty() || !several ? o.out : (std::filesystem::path(o.out) / sub).string();
    if (int rc = run_multi_seed(o, seed_args, out, several, !first_seed, json_rows); rc != 0) {
      return rc;
    }
    for (const std::string& name : run_files(o)) {
      files.push_back(sub.empty() ? name : sub + "/" + name);
    }
    first_seed = false;
    if (several && !o.json && !o.quiet && to < range.end) std::cout << "\n";
  }
  if (o.json) std::cout << json_rows.dump(2) << "\n";
  std::cout.flush();
  if (!o.shard.empty()) {
    const report::ShardManifest m = report::make_shard_manifest(
        "multi", o.description, sim::parse_shard(o.shard).value(), run_ids, std::move(files));
    if (Status s = report::write_shard_manifest(o.out, m); !s.ok()) return fail(s);
  }
  return 0;
}

}  // namespace

Action add_multi_command(CLI::App& app) {
  auto o = std::make_shared<MultiCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "multi", "Dispatch jobs across GPU clusters in several regions and compare agents");
  cmd->footer(
      "Coordinate several GPU clusters in different regions: replay jobs in time, let a\n"
      "dispatch agent place (and defer best-effort jobs) across sites by carbon, power, price,\n"
      "fragmentation and data movement, and compare agents on energy, carbon and delay.\n\n"
      "By default: agents local and green-plan at 70 % offered load over 14 measured days,\n"
      "and the fleet bound with each agent's share of its saving: the figure that says how\n"
      "much of what could be saved an agent saves.\n\n"
      "green-plan plans, each hour, how much best-effort work each site should run in each\n"
      "coming hour (an LP over forecast carbon and arrivals) and dispatches every job to\n"
      "follow that plan; after the plan's hours a full clean site charges a job what its\n"
      "GPU-hours would cost at the site that takes the overflow.\n"
      "Sites with an `energy` block (solar, wind, battery) run a site energy controller per\n"
      "--energy-controller on each agent's hourly demand.\n"
      "Without --fleet: a built-in 4-region fleet on synthetic carbon curves; without --pods:\n"
      "the built-in openb pod shapes.\n\n"
      "Example:\n"
      "  greensched multi --out multi/\n"
      "  greensched multi --fleet examples/fleet-4-regions.json --data-dir ../shared/data \\\n"
      "      --pods ../shared/data/openb/openb_pod_list_default.csv --agent local,green \\\n"
      "      --load 50,70,90 --slack 0,4h,12h --power-down-idle 30m --out loaded/\n"
      "  greensched multi --agent all --seeds 42-43 --shard 0/2 --out shard-0\n"
      "      (and --shard 1/2 --out shard-1, on another machine), then\n"
      "  greensched merge shard-0 shard-1 --out multi/\n\n"
      "--load off replays the pod list at its own arrival times; a sampled pod list then keeps\n"
      "the fleet nearly empty, and any saving is an empty fleet's.");
  cmd->add_option("--fleet", o->fleet, "fleet file (JSON); default: the built-in fleet")
      ->check(CLI::ExistingFile);
  add_data_dir_option(cmd, o->data_dir);
  cmd->add_option("--pods", o->pods, "openb pod list with creation/deletion times")
      ->check(CLI::ExistingFile);
  cmd->add_option("--agent", o->agents,
                  fmt::format("comma list of agents ({}), or all ({})",
                              fmt::join(multi::known_agent_names(), ", "),
                              fmt::join(multi::agent_names(), ", ")))
      ->capture_default_str();
  cmd->add_flag("--oracle", o->oracle,
                "also run carbon-forecast, green and green-plan with forecasts that see the "
                "future");
  cmd->add_option("--forecast", o->forecast,
                  "the carbon and price forecasts carbon-forecast, green and green-plan plan on: "
                  "same-hour (the mean of the same hour over the past 7 days) or learned (the "
                  "--mpc-forecast learned models, trained once on the sites' series before the "
                  "measured window, up to --mpc-horizon ahead, same-hour beyond and where a "
                  "series has no model, with a note); their rows read \"(learned)\"; not with "
                  "--oracle")
      ->type_name("same-hour|learned")
      ->capture_default_str();
  add_seeds_option(cmd, o->seeds,
                   "seeds of home sites, local schedulers and drawn jobs; each seed runs the "
                   "whole plan (several: OUT/seed-N per seed, rows of --json carry their seed)",
                   false);
  as_duration(cmd->add_option("--ls-bound", o->ls_bound_s, "time within which LS jobs must start")
                  ->capture_default_str(),
              {.bare_unit_s = 1});
  as_duration(cmd->add_option("--slack", o->slack_h,
                              "how long a BE job may be deferred; a comma list (0,1h,4h,12h) runs "
                              "each")
                  ->capture_default_str(),
              {.bare_unit_s = 3600, .whole = false, .list = true});
  cmd->add_option("--load", o->loads,
                  "offered GPU load of the whole fleet in %, a comma list (50,70,90): jobs drawn "
                  "from the pod list (shape, duration, QoS kept) with its hour-of-week arrival "
                  "profile until the load is met over --days, after --warmup-days; off: the pod "
                  "list's own arrival times")
      ->capture_default_str();
  cmd->add_option("--warmup-days", o->warmup_days,
                  "with --load: days run before the measured ones, not measured")
      ->capture_default_str();
  as_duration(cmd->add_option("--power-down-idle", o->power_down_idle,
                              "power down nodes idle this long: off or a duration, as simulate "
                              "takes it (multi runs one setting)")
                  ->capture_default_str(),
              {.bare_unit_s = 1, .list = true, .allow_off = true});
  as_duration(cmd->add_option("--wake-delay", o->wake_delay_s, "time to wake a powered-down node")
                  ->capture_default_str(),
              {.bare_unit_s = 1});
  as_duration(cmd->add_option("--sample", o->sample_s, "time-series step")->capture_default_str(),
              {.bare_unit_s = 1});
  cmd->add_option("--data-gb", o->data_gb,
                  "GB moved with a job that runs away from home (default: its memory request)");
  cmd->add_option("--days", o->days,
                  "with --load: days measured (default 14); else the days the built-in jobs' "
                  "arrivals span (default 30)");
  cmd->add_option("--start", o->start,
                  "with --load: UTC start of the measured days (e.g. 2023-04-01; the warm-up "
                  "comes before it); else the UTC time that trace time 0 maps to (default: the "
                  "fleet's start is trace time 0)");
  cmd->add_option("--power-model", o->power_model, "JSON power model")->check(CLI::ExistingFile);
  cmd->add_option("--out", o->out,
                  "folder to write summary.csv, timeline.csv, energy_timeline.csv (and bound.csv, "
                  "bound_sites.csv; decisions.csv with --decisions) into; created if absent");
  cmd->add_flag("--decisions", o->decisions,
                "with --out, also write decisions.csv: where and when each job went and why, a "
                "line per job and agent (about 7 MB per measured day of the default run)");
  cmd->add_option("--jobs,-j", o->jobs, "agents run in parallel (default: all cores)");
  cmd->add_flag("--quiet,-q", o->quiet,
                "no table, progress or fleet lines: only --json, files and errors");
  cmd->add_flag("--json", o->json, "print the summary as JSON instead of the table");
  cmd->add_option("--record", o->record,
                  "write a dispatch record per job and agent (JSON Lines); read it with "
                  "greensched explain --policy AGENT --pod JOB");
  cmd->add_option("--energy-controller", o->energy_controllers,
                  "site energy controllers, a comma list of none, greedy, mpc, oracle: each runs "
                  "on every agent's hourly site demand (after dispatch) and gives one summary row")
      ->capture_default_str();
  as_duration(cmd->add_option("--mpc-horizon", o->controller.mpc_horizon_h,
                              "time each rolling LP of the mpc controller looks ahead, whole "
                              "hours (1h to 14d)")
                  ->capture_default_str(),
              {.bare_unit_s = 3600})
      ->check(CLI::Range(1, 24 * 14));
  cmd->add_option("--mpc-forecast-days", o->controller.forecast_days,
                  "past days the mpc controller's seasonal-naive forecast averages")
      ->capture_default_str()
      ->check(CLI::Range(1, 60));
  cmd->add_option("--mpc-forecast", o->mpc_forecast,
                  "the price and carbon forecast the mpc controller plans on: seasonal-naive "
                  "(the mean of the same hour over --mpc-forecast-days past days) or learned "
                  "(gradient-boosted trees trained when the run starts on the sites' own series "
                  "before the measured window, past values only; a series with under "
                  "two weeks of history to learn from keeps seasonal-naive, with a note)")
      ->type_name("seasonal-naive|learned")
      ->capture_default_str();
  cmd->add_option("--mpc-forecast-models", o->mpc_forecast_models,
                  "with --mpc-forecast learned or --forecast learned: load carbon.ubj and "
                  "price.ubj from this folder "
                  "(greensched forecast train --info past) instead of training; refused when a "
                  "model was trained on data at or after the window's start")
      ->type_name("DIR");
  as_duration(cmd->add_option("--mpc-known-price", o->controller.mpc_known_price_h,
                              "how far from now, the current hour first, the mpc controller "
                              "knows the price (published day-ahead) instead of forecasting it, "
                              "whole hours up to 14d; 0: only the past")
                  ->capture_default_str(),
              {.bare_unit_s = 3600})
      ->check(CLI::Range(0, 24 * 14));
  cmd->add_flag("--day-ahead-prices", o->day_ahead_prices,
                "agents and the mpc controller know prices as a day-ahead auction publishes "
                "them: from 12:00 local time (the site's weather file's offset), every hour of "
                "the next local day; without it prices are forecast from the past");
  cmd->add_option("--generation-forecast", o->generation_forecast,
                  "what agents and the mpc controller know of on-site generation: past (wind "
                  "persistence reverting to the day's mean, solar clear-sky times the day's "
                  "clearness), weather (a day-ahead weather forecast for 48 h: the actual wind "
                  "speed and solar output plus seeded errors of --wind-forecast-error and "
                  "--solar-forecast-error, less what persists of the last hour's seen error), "
                  "or exact")
      ->capture_default_str()
      ->check(CLI::IsMember({"past", "weather", "exact"}));
  cmd->add_option("--wind-forecast-error", o->generation.wind_speed_rmse_ms,
                  "RMS error of the weather forecast's 10 m wind speed, m/s (docs/ENERGY.md "
                  "gives the source)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--solar-forecast-error", o->generation.solar_rmse,
                  "RMS error of the weather forecast's solar output, share of its mean daylight "
                  "output")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--carbon-price", o->carbon_price,
                  "USD per tonne CO2 that green-cost-carbon adds to the electricity cost, in "
                  "its dispatch and in its site energy controllers")
      ->capture_default_str();
  cmd->add_flag("--preempt-be", o->preempt_be,
                "a latency-sensitive job that finds no node evicts best-effort jobs from the one "
                "node where that costs least (the most recently started first); they wait "
                "again and restart from the beginning, as kube-scheduler's priority preemption");
  cmd->add_flag(
      "--bound", o->bound_flag,
      "solve the fleet bound (the default, but with --shard; the least carbon of the same jobs, "
      "home sites and signals: "
      "each site's GPUs up to what its scheduler reaches when saturated, each job "
      "at one site, started within its LS bound or BE slack and run without a pause, moves "
      "paying transfer energy and time, jobs without GPUs at their CPU floor; an LP and its dual) "
      "and show each run's share of its carbon saving, and where it runs the work per site; "
      "beside it a feasible schedule of the same model found by local search (the upper side) "
      "and a tight bound with CPU cores, GPUs per node type and a fill at which jobs start "
      "within --ls-bound, with each run's share of both; with --out, bound.csv and "
      "bound_sites.csv");
  cmd->add_flag("--no-bound", o->no_bound, "do not solve the fleet bound");
  cmd->add_flag("--bound-prices", o->bound_prices,
                "with --bound: also run green-plan on the bound's capacity prices (what one more "
                "GPU-hour at a site and hour is worth, every job to come known) instead of its "
                "plan's forecast of them: what knowing the work in advance is worth, as --oracle "
                "shows for the signals");
  cmd->add_flag("--bound-schedule", o->bound_schedule,
                "with --bound: also run the bound's own schedule in the simulator (agent "
                "bound-schedule: each job where the bound's capacity prices start it, first come "
                "first placed within the bound's capacities): what a schedule the bound's fluid "
                "fleet can run does on the sites' own schedulers");
  cmd->add_flag("--plan-ls", o->plan_ls,
                "green-plan also plans the latency-sensitive work to come (at home, or where "
                "its data arrives within --ls-bound) instead of reserving each site's expected "
                "LS load. Off: it did not raise green-plan's share of the bound (docs/RESULTS.md)");
  cmd->add_flag("--plan-batch", o->plan_batch,
                "green-plan assigns the jobs submitted in one instant (those running when the "
                "pod list starts) together, as one whole-job plan whose prices steer each. Off: "
                "it did not raise green-plan's share of the bound (docs/RESULTS.md)");
  cmd->add_flag("--predict-durations", o->predict_durations,
                "agents decide on job durations predicted from the jobs finished before each "
                "submission (per-shape quantiles) instead of the true ones");
  cmd->add_option("--shard", o->shard,
                  "I/N: run only block I (0-based) of N of the plan's runs (seeds x loads x "
                  "slacks x agents) and write OUT/shard.json for greensched merge; needs --out, "
                  "not with --bound");
  return [o, cmd] {
    o->description = sweep_description(*cmd);
    if (o->bound_flag && o->no_bound) {
      return fail("--bound and --no-bound: give one", kExitUsage);
    }
    o->bound = o->bound_flag || (!o->no_bound && o->shard.empty());
    return run_multi(*o);
  };
}

}  // namespace greensched::app
