#include <algorithm>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/duration.hpp"
#include "greensched/core/parallel_for.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/core/words.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/report/column_key.hpp"
#include "greensched/report/results_writer.hpp"
#include "greensched/report/shard_files.hpp"
#include "greensched/report/timeline_writer.hpp"
#include "greensched/sim/decision_record.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/sim/shard.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/csv.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "progress.hpp"

namespace greensched::app {
namespace {

struct SimulateOptions {
  std::string nodes;
  std::string pods;
  std::string policies = "all";
  std::string seeds = kDefaultSeeds;
  double tune = kDefaultTune;
  std::string out;
  int jobs = 0;
  bool quiet = false;
  bool json = false;
  std::string power_model;
  double pue = 0;  // 0: the power model's
  std::string gpu_select;
  bool power_by_model = false;
  std::string mode = "inflation";
  std::string queue = "backfill";
  double time_scale = 1.0;
  std::string node_events;
  std::string record;
  int snapshot_pct = 100;
  double migrate_budget = 0;
  int max_moves = 4;
  int64_t checkpoint_interval_s = 1800;  // replay
  bool consolidate = false;              // replay
  std::string gpu_power;                 // comma list of pwr, proportional ("" = the model's)
  std::string loads;             // replay: comma list of offered loads in % ("" = trace rate)
  double days = 14;              // replay with --load: measured days
  double warmup_days = 1;        // replay with --load: warm-up before them
  std::string power_down_idle;   // replay: comma list of seconds or "off"
  int64_t wake_delay_s = 300;    // replay
  int64_t timeline_step_s = -1;  // replay: -1 = every instant, or 3600 with --load
  std::string shard;             // I/N: run only block I of N of the plan
  std::string description;       // what the shards of one sweep share (sweep_description)
};

// With --shard, OUT/shard.json: what `greensched merge` needs to put the shards together.
Status write_simulate_manifest(const SimulateOptions& o, const std::vector<std::string>& run_ids,
                               std::vector<std::string> files) {
  if (o.shard.empty()) return Status::Ok();
  return report::write_shard_manifest(
      o.out,
      report::make_shard_manifest("simulate " + o.mode, o.description,
                                  sim::parse_shard(o.shard).value(), run_ids, std::move(files)));
}

Result<std::vector<power::GpuPowerRule>> parse_gpu_rules(std::string_view text) {
  std::vector<power::GpuPowerRule> out;
  for (std::string_view part : sim::split_commas(text)) {
    auto rule = power::parse_gpu_power_rule(part);
    if (!rule.ok()) return Error{fmt::format("--gpu-power: {}", rule.error())};
    out.push_back(rule.value());
  }
  return out;
}

nlohmann::json to_json(const sim::RunResult& r) {
  nlohmann::json j;
  j["policy"] = r.spec.policy;
  j["seed"] = r.spec.seed;
  j["tune"] = r.spec.tune;
  j["pods_arrived"] = r.pods_arrived;
  j["pods_scheduled"] = r.pods_scheduled;
  j["pods_failed"] = r.pods_failed;
  for (int pct : {90, 100, 130}) {
    auto p = sim::point_at(r.curve, pct);
    j[fmt::format("alloc_gpu_pct_at_{}", pct)] = p ? nlohmann::json(p->alloc_gpu_pct) : nullptr;
  }
  auto p100 = sim::point_at(r.curve, 100);
  j["power_watts_at_100"] = p100 ? nlohmann::json(p100->power_watts) : nullptr;
  j["migrate_budget_pct"] = r.spec.migrate_budget_pct;
  j["pods_migrated"] = r.pods_migrated;
  j["pods_rescued"] = r.pods_rescued;
  j["migrated_pods_at_100"] = p100 ? nlohmann::json(p100->migrated_pods) : nullptr;
  j["placed_pods_at_100"] = p100 ? nlohmann::json(p100->placed_pods) : nullptr;
  j["wall_seconds"] = r.wall_seconds;
  return j;
}

nlohmann::json to_json(const sim::ReplayResult& r) {
  const auto delays = [](const sim::DelayStats& d) {
    return nlohmann::json{{"pods", d.pods}, {"mean_s", d.mean_s}, {"p99_s", d.p99_s}};
  };
  return {{"policy", r.config.policy},
          {"seed", r.config.seed},
          {"gpu_power", power::gpu_power_rule_name(r.gpu_rule)},
          {"power_down_idle_s", r.config.power_down_idle_s},
          {"target_load_pct", r.config.target_load_pct},
          {"offered_load_pct", r.offered_load_pct},
          {"window_s", r.window_s},
          {"window_start_s", r.window_start_s},
          {"pods_total", r.pods_total},
          {"pods_started", r.pods_started},
          {"pods_never_started", r.pods_never_started},
          {"pods_requeued", r.pods_requeued},
          {"mean_queue_delay_s", r.mean_queue_delay_s},
          {"p99_queue_delay_s", r.p99_queue_delay_s},
          {"ls_delay", delays(r.delay_ls)},
          {"be_delay", delays(r.delay_be)},
          {"energy_kwh", r.energy_kwh},
          {"energy_floor_kwh", r.energy_floor_kwh},
          {"kwh_per_gpu_hour", r.kwh_per_gpu_hour},
          {"gpu_alloc_pct", r.gpu_alloc_pct},
          {"mean_nodes_awake", r.mean_nodes_awake},
          {"wakeups", r.wakeups},
          {"migrate_budget_pct", r.config.migrate_budget_pct},
          {"pods_migrated", r.pods_migrated},
          {"pods_rescued", r.pods_rescued},
          {"lost_gpu_hours", r.lost_gpu_hours},
          {"lost_energy_kwh", r.lost_energy_kwh},
          {"pending_gpu_hours", r.pending_gpu_hours},
          {"consolidate", r.config.consolidate},
          {"nodes_drained", r.nodes_drained},
          {"makespan_s", r.makespan_s},
          {"wall_seconds", r.wall_seconds}};
}

// One line per run.
std::string replay_table(const std::vector<sim::ReplayResult>& results) {
  std::size_t width = 11;
  for (const auto& r : results) width = std::max(width, r.config.policy.size());
  std::string out =
      fmt::format("{:<{}} {:>5} {:>7} {:>12} {:>11} {:>8} {:>10} {:>10} {:>7} {:>9} {:>9} {:>7}\n",
                  "policy", width, "seed", "load %", "GPU rule", "sleep after", "alloc %",
                  "energy kWh", "/own floor", "awake", "LS p99 s", "BE p99 s", "never");
  for (const auto& r : results) {
    const std::string sleep =
        r.config.power_down_idle_s < 0
            ? "off"
            : format_duration(static_cast<double>(r.config.power_down_idle_s));
    out += fmt::format(
        "{:<{}} {:>5} {:>7.1f} {:>12} {:>11} {:>8.2f} {:>10.1f} {:>10.3f} {:>7.1f} {:>9.1f} "
        "{:>9.1f} {:>7}\n",
        r.config.policy, width, r.config.seed, r.offered_load_pct,
        power::gpu_power_rule_name(r.gpu_rule), sleep, r.gpu_alloc_pct, r.energy_kwh,
        r.energy_floor_kwh > 0 ? r.energy_kwh / r.energy_floor_kwh : 0.0, r.mean_nodes_awake,
        r.delay_ls.p99_s, r.delay_be.p99_s, r.pods_never_started);
  }
  static constexpr report::ColumnKey kKey[] = {
      {"policy", "policy", "the policy (--policy)"},
      {"seed", "seed", "the seed of the run"},
      {"load %", "offered_load_pct", "offered GPU load over the measured window"},
      {"GPU rule", "gpu_power",
       "how an allocated GPU draws: pwr (max whenever allocated) or proportional (--gpu-power)"},
      {"sleep after", "power_down_idle_s",
       "idle time after which a node sleeps, off: never (--power-down-idle; the CSV holds s)"},
      {"alloc %", "gpu_alloc_pct", "time-weighted GPU allocation over the window"},
      {"energy kWh", "energy_kwh", "facility energy over the window, PUE included"},
      {"/own floor", "energy_over_floor",
       "energy over this run's own floor (its placed GPU-time at energy-proportional power, "
       "nothing idle); the floor depends on the GPUs the policy chose: compare energy kWh"},
      {"awake", "mean_nodes_awake", "nodes awake (not asleep), time-weighted mean"},
      {"LS p99 s", "ls_p99_delay_s", "99th percentile wait of latency-sensitive pods"},
      {"BE p99 s", "be_p99_delay_s", "99th percentile wait of best-effort pods"},
      {"never", "pods_never_started", "pods still waiting when the replay ended"},
  };
  return out + report::column_key("summary.csv", kKey);
}

// What every replay run's config shares: queue, time scale, records, wake delay, node events.
Result<sim::ReplayConfig> base_replay_config(const SimulateOptions& o,
                                             const trace::Workload& workload) {
  sim::ReplayConfig base;
  auto queue = sim::parse_queue_discipline(o.queue);
  if (!queue.ok()) return Error{fmt::format("--queue: {}", queue.error())};
  base.queue = queue.value();
  base.time_scale = o.time_scale;
  base.record = !o.record.empty();
  base.wake_delay_s = o.wake_delay_s;
  base.migrate_budget_pct = o.migrate_budget;
  base.max_moves = o.max_moves;
  base.checkpoint_interval_s = o.checkpoint_interval_s;
  base.consolidate = o.consolidate;
  if (!o.node_events.empty()) {
    auto events = sim::read_node_events(o.node_events, workload.nodes);
    if (!events.ok()) return events.status().error();
    base.node_events = std::move(events.value());
  }
  return base;
}

// The settings replay crosses: offered loads (0: the trace at its own rate), power-down
// settings (-1: off) and GPU power rules. An error here is a usage error.
struct ReplayGrid {
  std::vector<double> loads;
  std::vector<int64_t> power_downs;
  std::vector<power::GpuPowerRule> rules;
};

Result<ReplayGrid> parse_replay_grid(const SimulateOptions& o,
                                     const power::PowerModel& power_model) {
  ReplayGrid grid;
  if (!o.loads.empty()) {
    auto loads = sim::parse_number_list(o.loads, "--load", 0, 1000, true);
    if (!loads.ok()) return Error{loads.error()};
    grid.loads = loads.value();
  }
  if (grid.loads.empty()) grid.loads.push_back(0);  // the trace at its own rate
  auto power_downs = parse_power_down_idle(o.power_down_idle.empty() ? "off" : o.power_down_idle);
  if (!power_downs.ok()) return Error{power_downs.error()};
  grid.power_downs = power_downs.value();
  auto rules = parse_gpu_rules(o.gpu_power.empty()
                                   ? std::string(power::gpu_power_rule_name(power_model.gpu_rule()))
                                   : o.gpu_power);
  if (!rules.ok()) return Error{rules.error()};
  grid.rules = rules.value();
  return grid;
}

// The nodes' power figures under each GPU rule.
Result<std::vector<std::vector<power::NodePower>>> resolve_replay_power(
    const trace::Workload& workload, const power::PowerModel& power_model,
    const std::vector<power::GpuPowerRule>& rules) {
  std::vector<std::vector<power::NodePower>> figures;
  for (power::GpuPowerRule rule : rules) {
    power::PowerModel m = power_model;
    m.set_gpu_rule(rule);
    auto f = m.resolve(workload.nodes, workload.models);
    if (!f.ok()) return f.status().error();
    figures.push_back(std::move(f.value()));
  }
  return figures;
}

// What every replay run shares.
struct ReplaySetup {
  const SimulateOptions& o;
  const trace::Workload& workload;  // the trace at its own rate
  const std::vector<std::string>& policies;
  const ReplayGrid& grid;
  const std::vector<std::vector<power::NodePower>>& figures;  // per GPU rule
  double pue;
  // The target workload is the trace's, whatever rate it is replayed at.
  frag::TargetWorkload target;
};

// One load and seed: the workload (jobs drawn from the trace until the load is met, or none:
// the trace itself) and the config of its runs.
struct ReplayRun {
  std::optional<trace::Workload> generated;
  sim::ReplayConfig config;
};

Result<ReplayRun> prepare_replay_run(const ReplaySetup& s, const sim::ReplayConfig& base,
                                     int64_t capacity, double load, uint64_t seed) {
  const SimulateOptions& o = s.o;
  ReplayRun run{std::nullopt, base};
  run.config.seed = seed;
  if (!(load > 0)) {
    if (o.timeline_step_s > 0) run.config.timeline_step_s = o.timeline_step_s;
    return run;
  }
  trace::LoadSpec spec;
  spec.load_pct = load;
  spec.days = o.days;
  spec.warmup_days = o.warmup_days;
  spec.seed = seed;
  auto generated = trace::generate_load(s.workload.pods, capacity, spec);
  if (!generated.ok()) return Error{fmt::format("--load {}: {}", load, generated.error())};
  trace::Workload& w = run.generated.emplace();
  w.models = s.workload.models;
  w.nodes = s.workload.nodes;
  w.shape_count = s.workload.shape_count;
  w.nodes_source = s.workload.nodes_source;
  w.pods_source = fmt::format("{} at {} % load", s.workload.pods_source, load);
  w.pods = std::move(generated.value().pods);
  run.config.measure_from_s = generated.value().window.start_s;
  run.config.measure_to_s = generated.value().window.end_s;
  run.config.target_load_pct = load;
  run.config.timeline_step_s = o.timeline_step_s < 0 ? 3600 : o.timeline_step_s;
  if (!o.quiet) {
    fmt::print(stderr,
               "load {} % seed {}: {} jobs ({} running at the start), offered load {:.2f} "
               "% over {} measured after a {} warm-up, arrivals by {}\n",
               load, seed, w.pods.size(), generated.value().running_at_start,
               generated.value().offered_load_pct, plural(o.days, "day", "days"),
               plural(o.warmup_days, "day", "days"), generated.value().profile);
  }
  return run;
}

// One load and seed: its workload, drawn by the first run that needs it and freed by the last
// to end, so that only the groups being run hold one.
struct ReplayGroup {
  double load = 0;
  uint64_t seed = 0;
  std::mutex mutex;
  bool drawn = false;
  Status error;
  std::optional<ReplayRun> run;
  std::size_t runs_left = 0;  // under `mutex`
};

// The group's workload and config, drawing them on first use.
Status draw_group(const ReplaySetup& s, const sim::ReplayConfig& base, int64_t capacity,
                  ReplayGroup& g) {
  std::lock_guard<std::mutex> lock(g.mutex);
  if (!g.drawn) {
    g.drawn = true;
    auto run = prepare_replay_run(s, base, capacity, g.load, g.seed);
    if (run.ok()) {
      g.run = std::move(run.value());
    } else {
      g.error = run.status();
    }
  }
  return g.error;
}

// Per load and seed one workload; on it every policy x GPU rule x power-down setting, in that
// order in the results. One task runs a policy and power-down setting under every rule (once,
// where the rule cannot change the schedule). All tasks share one pool of workers, so one
// load and seed's last runs overlap the next one's first instead of leaving a core idle.
Result<std::vector<sim::ReplayResult>> run_replay_grid(const ReplaySetup& s,
                                                       const sim::ReplayConfig& base,
                                                       const std::vector<uint64_t>& seeds,
                                                       sim::RunRange range, ProgressBar& bar) {
  int64_t capacity = 0;
  for (const NodeSpec& n : s.workload.nodes) capacity += int64_t{n.gpu_count} * kGpuMilli;
  const std::size_t rule_count = s.grid.rules.size();
  const std::size_t power_down_count = s.grid.power_downs.size();
  const std::size_t variant_count = s.policies.size() * rule_count * power_down_count;
  std::vector<ReplayGroup> groups(s.grid.loads.size() * seeds.size());
  struct Task {
    std::size_t group;
    std::size_t policy;
    std::size_t power_down;
  };
  std::vector<Task> tasks;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    groups[g].load = s.grid.loads[g / seeds.size()];
    groups[g].seed = seeds[g % seeds.size()];
    for (std::size_t p = 0; p < s.policies.size(); ++p) {
      for (std::size_t d = 0; d < power_down_count; ++d) {
        // Only the tasks with a run in the shard's range (all of them without --shard).
        bool wanted = false;
        for (std::size_t k = 0; k < rule_count; ++k) {
          wanted = wanted ||
                   range.contains(g * variant_count + (p * rule_count + k) * power_down_count + d);
        }
        if (!wanted) continue;
        tasks.push_back(Task{g, p, d});
        ++groups[g].runs_left;
      }
    }
  }
  const std::size_t total = tasks.size() * rule_count;
  std::vector<sim::ReplayResult> results(range.end - range.begin);
  std::size_t done = 0;
  std::mutex progress;
  const Status status = parallel_for(tasks.size(), s.o.jobs, [&](std::size_t i) -> Status {
    const Task& t = tasks[i];
    ReplayGroup& g = groups[t.group];
    if (Status st = draw_group(s, base, capacity, g); !st.ok()) return st;
    const trace::Workload& w = g.run->generated ? *g.run->generated : s.workload;
    sim::ReplayConfig c = g.run->config;
    c.policy = s.policies[t.policy];
    c.power_down_idle_s = s.grid.power_downs[t.power_down];
    auto r = sim::run_replay_each(w, s.target, s.figures, s.pue, c);
    if (!r.ok()) return Error{r.error()};
    double wall = 0;
    for (std::size_t k = 0; k < rule_count; ++k) {
      wall += r.value()[k].wall_seconds;
      const std::size_t run =
          t.group * variant_count + (t.policy * rule_count + k) * power_down_count + t.power_down;
      if (range.contains(run)) results[run - range.begin] = std::move(r.value()[k]);
    }
    {
      std::lock_guard<std::mutex> lock(g.mutex);
      if (--g.runs_left == 0) g.run.reset();  // the group's last run: free its workload
    }
    std::lock_guard<std::mutex> lock(progress);
    done += rule_count;
    bar.update(done, total, fmt::format("{} seed {} ({:.2f} s)", c.policy, c.seed, wall));
    return Status::Ok();
  });
  if (!status.ok()) return status.error();
  bar.update(total, total, "done");
  return results;
}

// The runs on stdout: a JSON array of to_json(run) with --json, else the table `table` writes.
template <typename RunResult, typename Table>
void print_results(const SimulateOptions& o, const std::vector<RunResult>& results,
                   const Table& table) {
  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : results) all.push_back(to_json(r));
    std::cout << all.dump(2) << "\n";
  } else if (!o.quiet) {
    std::cout << table(results);
  }
  std::cout.flush();
}

// --record's decision records, then --out's timeline.csv and summary.csv.
Status write_replay_files(const SimulateOptions& o, const std::vector<sim::ReplayResult>& results) {
  if (!o.record.empty()) {
    std::string records;
    for (const auto& r : results)
      records += sim::tag_run_records(r.records, "policy", r.config.policy, r.config.seed);
    if (Status s = write_text_file(o.record, records); !s.ok()) return s;
  }
  if (o.out.empty()) return Status::Ok();
  const std::string timeline = report::replay_timeline_csv(results);
  std::ostringstream summary;
  report::write_replay_summary_csv(summary, results);
  if (Status s =
          write_text_files(o.out, {{"timeline.csv", timeline}, {"summary.csv", summary.str()}});
      !s.ok()) {
    return s;
  }
  if (!o.quiet) fmt::print(stderr, "wrote {0}/timeline.csv and {0}/summary.csv\n", o.out);
  return Status::Ok();
}

int run_replay_mode(const SimulateOptions& o, const trace::Workload& workload,
                    const power::PowerModel& power_model, const std::vector<std::string>& policies,
                    const std::vector<uint64_t>& seeds) {
  auto base = base_replay_config(o, workload);
  if (!base.ok()) return fail(base);
  auto grid = parse_replay_grid(o, power_model);
  if (!grid.ok()) return fail(grid.error(), kExitUsage);
  auto figures = resolve_replay_power(workload, power_model, grid.value().rules);
  if (!figures.ok()) return fail(figures);
  const ReplaySetup setup{o,
                          workload,
                          policies,
                          grid.value(),
                          figures.value(),
                          power_model.pue(),
                          frag::build_target_workload(workload.pods)};
  // Held to the end of the command: its line ends when it goes, after the output.
  ProgressBar bar(!o.quiet && stderr_is_terminal());
  // The plan's runs, in the order of the results: load, seed, policy, GPU rule, power-down.
  std::vector<std::string> run_ids;
  for (double load : grid.value().loads) {
    for (uint64_t seed : seeds) {
      for (const std::string& policy : policies) {
        for (power::GpuPowerRule rule : grid.value().rules) {
          for (int64_t down : grid.value().power_downs) {
            run_ids.push_back(fmt::format("{}/{}/{:g}/{}/{}", policy, seed, load,
                                          power::gpu_power_rule_name(rule), down));
          }
        }
      }
    }
  }
  auto range = sim::shard_runs(o.shard, run_ids.size());
  if (!range.ok()) return fail(range.status().message(), kExitUsage);
  auto results = run_replay_grid(setup, base.value(), seeds, range.value(), bar);
  if (!results.ok()) return fail(results);
  print_results(o, results.value(), replay_table);
  if (Status s = write_replay_files(o, results.value()); !s.ok()) return fail(s);
  if (Status s = write_simulate_manifest(o, run_ids, {"timeline.csv", "summary.csv"}); !s.ok()) {
    return fail(s);
  }
  return 0;
}

// The policies and seeds; an error here is a usage error.
struct SimulateLists {
  std::vector<uint64_t> seeds;
  std::vector<std::string> policies;
};

Result<SimulateLists> parse_simulate_lists(const SimulateOptions& o) {
  if (o.nodes.empty() != o.pods.empty()) {
    return Error{"give both --nodes and --pods, or neither for the built-in workload"};
  }
  if (!(o.tune > 0 && o.tune <= 10)) {
    return Error{fmt::format("--tune must be in (0, 10], got {}", o.tune)};
  }
  if (!(o.time_scale > 0)) return Error{"--time-scale must be > 0"};
  if (o.pue != 0 && !(o.pue >= 1.0)) return Error{"--pue must be >= 1.0"};
  auto seeds = parse_seeds(o.seeds);
  if (!seeds.ok()) return seeds.status().error();
  auto policies = sim::parse_policy_list(o.policies);
  if (!policies.ok()) return Error{policies.error()};
  return SimulateLists{seeds.value(), policies.value()};
}

// --power-model, or the built-in model; with --pue's PUE.
Result<power::PowerModel> load_simulate_power_model(const SimulateOptions& o) {
  power::PowerModel power_model = power::PowerModel::builtin();
  if (!o.power_model.empty()) {
    auto loaded = power::PowerModel::load(o.power_model);
    if (!loaded.ok()) return loaded.status().error();
    power_model = std::move(loaded.value());
  }
  if (o.pue != 0) power_model.set_pue(o.pue);
  return power_model;
}

// The options that depend on the mode; inflation's one --gpu-power rule goes into the model.
// An error here is a usage error.
Status check_mode_options(const SimulateOptions& o, power::PowerModel& power_model) {
  if (o.mode != "replay") {
    if (!o.loads.empty() || !o.power_down_idle.empty()) {
      return Error{"--load and --power-down-idle are for --mode replay"};
    }
    if (!o.gpu_power.empty()) {
      auto rule = power::parse_gpu_power_rule(o.gpu_power);
      if (!rule.ok()) {
        return Error{fmt::format("--gpu-power: {} (inflation takes one rule)", rule.error())};
      }
      power_model.set_gpu_rule(rule.value());
    }
  }
  if (!(o.days > 0 && o.days <= 366)) return Error{"--days must be in (0, 366]"};
  if (!(o.warmup_days >= 0 && o.warmup_days <= 366)) {
    return Error{"--warmup-days must be in [0, 366]"};
  }
  if (o.wake_delay_s < 0) return Error{"--wake-delay must be >= 0"};
  if (o.nodes.empty() && o.mode == "replay" && o.loads.empty()) {
    return Error{
        "--mode replay needs pods with creation and deletion times: give --nodes and --pods, "
        "or --load PCT, which gives the built-in pods the openb trace's durations and "
        "arrival profile"};
  }
  return Status::Ok();
}

// The node and pod lists, or the built-in workload (with synthetic times for replay).
Result<trace::Workload> load_simulate_workload(const SimulateOptions& o) {
  if (!o.nodes.empty()) return trace::load_openb_workload(o.nodes, o.pods);
  trace::Workload workload = trace::builtin_openb_workload();
  if (o.mode == "replay") {
    // Durations, arrival hours and QoS from the openb trace's statistics, over 4 weeks.
    trace::assign_synthetic_times(workload.pods, 20230101, 28);
    workload.pods_source += " (durations and arrivals from the openb statistics)";
  }
  return workload;
}

void print_workload_lines(const SimulateOptions& o, const trace::Workload& workload,
                          const SimulateLists& lists) {
  int gpus = 0;
  for (const auto& n : workload.nodes) gpus += n.gpu_count;
  fmt::print(stderr, "workload: {} nodes, {} GPUs ({}); {} pods ({})\n", workload.nodes.size(),
             gpus, workload.nodes_source, workload.pods.size(), workload.pods_source);
  fmt::print(stderr, "{} mode: {} x {}\n", o.mode,
             plural(lists.policies.size(), "policy", "policies"),
             plural(lists.seeds.size(), "seed", "seeds"));
}

// Every policy x seed of the inflation protocol, in plan order.
Result<std::vector<sim::RunResult>> run_inflation_experiments(const SimulateOptions& o,
                                                              const trace::Workload& workload,
                                                              const power::PowerModel& power_model,
                                                              const SimulateLists& lists,
                                                              sim::RunRange range) {
  sim::ExperimentPlan plan;
  plan.first_run = range.begin;
  plan.end_run = range.end;
  plan.policies = lists.policies;
  plan.seeds = lists.seeds;
  plan.tune = o.tune;
  plan.jobs = o.jobs;
  plan.power_model = power_model;
  plan.gpu_select = o.gpu_select;
  plan.record = !o.record.empty();
  plan.snapshot_pct = o.out.empty() ? -1 : o.snapshot_pct;
  plan.migrate_budget_pct = o.migrate_budget;
  plan.move_limits.max_moves = o.max_moves;
  ProgressBar bar(!o.quiet && stderr_is_terminal());  // finishes its line when it goes
  return sim::run_experiments(
      workload, plan, [&](std::size_t done, std::size_t total, const sim::RunResult& r) {
        bar.update(
            done, total,
            fmt::format("{} seed {} ({:.2f} s)", r.spec.policy, r.spec.seed, r.wall_seconds));
      });
}

// --record's decision records, then --out's curves.csv and summary.csv.
Status write_inflation_files(const SimulateOptions& o, const trace::Workload& workload,
                             const std::vector<sim::RunResult>& results) {
  if (!o.record.empty()) {
    std::string records;
    for (const auto& r : results)
      records += sim::tag_run_records(r.records, "policy", r.spec.policy, r.spec.seed);
    if (Status s = write_text_file(o.record, records); !s.ok()) return s;
    if (!o.quiet) {
      fmt::print(stderr, "wrote the decision records of {} run(s) to {}\n", results.size(),
                 o.record);
    }
  }
  if (!o.out.empty()) {
    if (Status s = report::write_results(o.out, results, &workload); !s.ok()) return s;
    if (!o.quiet) fmt::print(stderr, "wrote {0}/curves.csv and {0}/summary.csv\n", o.out);
  }
  return Status::Ok();
}

int run_inflation_mode(const SimulateOptions& o, const trace::Workload& workload,
                       const power::PowerModel& power_model, const SimulateLists& lists) {
  std::vector<std::string> run_ids;  // policy-major, as run_experiments orders the runs
  for (const std::string& policy : lists.policies) {
    for (uint64_t seed : lists.seeds) run_ids.push_back(fmt::format("{}/{}", policy, seed));
  }
  auto range = sim::shard_runs(o.shard, run_ids.size());
  if (!range.ok()) return fail(range.status().message(), kExitUsage);
  auto results = run_inflation_experiments(o, workload, power_model, lists, range.value());
  if (!results.ok()) return fail(results);
  print_results(o, results.value(), [&](const std::vector<sim::RunResult>& runs) {
    return report::summary_table(runs, o.power_by_model);
  });
  if (Status s = write_inflation_files(o, workload, results.value()); !s.ok()) return fail(s);
  std::vector<std::string> files = {"curves.csv", "summary.csv"};
  for (const auto& r : results.value()) {
    if (!r.snapshot_used_milli.empty()) {
      files.push_back("occupancy.csv");
      break;
    }
  }
  if (Status s = write_simulate_manifest(o, run_ids, files); !s.ok()) return fail(s);
  return 0;
}

int run_simulate(const SimulateOptions& o) {
  auto lists = parse_simulate_lists(o);
  if (!lists.ok()) return fail(lists.error(), kExitUsage);
  if (!o.shard.empty()) {
    if (auto shard = sim::parse_shard(o.shard); !shard.ok()) {
      return fail(shard.status().message(), kExitUsage);
    }
    if (o.out.empty()) return fail("--shard needs --out (the shard's own folder)", kExitUsage);
  }
  auto power_model = load_simulate_power_model(o);
  if (!power_model.ok()) return fail(power_model);
  if (Status s = check_mode_options(o, power_model.value()); !s.ok()) {
    return fail(s.message(), kExitUsage);
  }
  auto workload = load_simulate_workload(o);
  if (!workload.ok()) return fail(workload);
  // A GPU model with no power figures is refused, as `greensched serve` refuses it.
  if (Status s = power::check_gpu_models(power_model.value(), workload.value().nodes,
                                         workload.value().models, "--power-model FILE");
      !s.ok()) {
    return fail(s.message());
  }
  if (!o.quiet) print_workload_lines(o, workload.value(), lists.value());
  if (o.mode == "replay") {
    return run_replay_mode(o, workload.value(), power_model.value(), lists.value().policies,
                           lists.value().seeds);
  }
  return run_inflation_mode(o, workload.value(), power_model.value(), lists.value());
}

// --policy's help: every policy the catalogue and the registered factories offer.
std::string policy_option_help() {
  return fmt::format(
      "comma list of {}; weighted mixes such as pwr:200+fgd:800; or all (docs/POLICIES.md)",
      policy_names());
}

}  // namespace

Action add_simulate_command(CLI::App& app) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Schedule a pod list on a cluster under one or more policies and seeds: filled to a "
      "stated load (the FGD paper's protocol, the default) or replayed in time (--mode replay)");
  cmd->footer(
      "Inflation mode (default), the protocol of the FGD paper (ATC'23): the pods are shuffled\n"
      "and inflated with more pods drawn from the trace until GPU requests reach TUNE x cluster\n"
      "GPU capacity; pods only arrive; a pod that fits nowhere fails. Prints GPU allocation at\n"
      "90/100/130 % arrival, fragmentation and power.\n\n"
      "Replay mode (--mode replay): pods arrive at creation_time and leave after their trace\n"
      "lifetime; pods that do not fit wait in a queue. Prints queueing delay and energy.\n\n"
      "Examples:\n"
      "  greensched simulate --nodes openb_node_list_gpu_node.csv \\\n"
      "      --pods openb_pod_list_default.csv --policy fgd,bestfit --seeds 42-51 --out results/\n"
      "  greensched simulate ... --policy fgd,pwr:200+fgd:800 --report-power-by-model\n"
      "  greensched simulate ... --mode replay --policy fgd --out replay/\n"
      "  greensched simulate --mode replay --load 50 --policy fgd,fgd-energy \\\n"
      "      --power-down-idle off,1800 --gpu-power pwr,proportional --seeds 42-46 --out "
      "loaded/\n\n"
      "Sweeps over several machines: --shard I/N runs block I (0-based) of N contiguous, equal\n"
      "(+-1) blocks of the plan's runs and writes the same files restricted to them, plus\n"
      "shard.json; greensched merge rebuilds the one-machine files byte for byte:\n"
      "  for i in 0 1 2; do greensched simulate --policy fgd,bestfit --seeds 42-51 \\\n"
      "      --shard $i/3 --out shard-$i; done\n"
      "  greensched merge shard-0 shard-1 shard-2 --out results/");
  cmd->add_option("--nodes", opts->nodes, "openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--pods", opts->pods,
                  "openb pod list CSV (any variant). Without --nodes/--pods: the built-in "
                  "workload (openb statistics)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--policy", opts->policies, policy_option_help())->capture_default_str();
  add_seeds_option(cmd, opts->seeds, "seeds, one run per policy and seed", false);
  cmd->add_option("--tune", opts->tune,
                  "inflation: arrived GPU requests as a multiple of cluster GPU capacity")
      ->capture_default_str();
  cmd->add_option("--out", opts->out,
                  "folder to write curves.csv and summary.csv into (replay: timeline.csv, "
                  "summary.csv); created if absent");
  cmd->add_option("--jobs,-j", opts->jobs, "parallel runs (default: all cores)");
  cmd->add_flag("--quiet,-q", opts->quiet,
                "no table, progress or workload lines: only --json, files and errors");
  cmd->add_flag("--json", opts->json, "print per-run results as JSON instead of the table");
  cmd->add_option("--power-model", opts->power_model,
                  "JSON power model (watts per GPU model and CPU, overrides per node type or "
                  "node name, PUE); default: the built-in data/power-model.json")
      ->check(CLI::ExistingFile);
  cmd->add_option("--pue", opts->pue, "facility PUE (>= 1.0); overrides the power model's");
  cmd->add_option("--gpu-select", opts->gpu_select,
                  "in a mix, the policy whose rule picks the GPU inside the node (default: fgd "
                  "when fgd is in the mix, else the first)");
  cmd->add_flag("--report-power-by-model", opts->power_by_model,
                "add a table of power at 100 % arrival by the nodes' GPU model");
  cmd->add_option("--record", opts->record,
                  "write a decision record per pod (JSON Lines) to this file; read it with "
                  "greensched explain");
  cmd->add_option("--migrate-budget", opts->migrate_budget,
                  "bounded migration: when a GPU pod fits nowhere, move running pods to make "
                  "room, up to PCT % of the pods placed (replay: started) so far (cumulative; "
                  "0: never). docs/POLICIES.md says how moves are searched")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--max-moves", opts->max_moves,
                  "with --migrate-budget: the most moves one pod's plan may use")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  as_duration(cmd->add_option("--checkpoint-interval", opts->checkpoint_interval_s,
                              "replay with --migrate-budget: a moved pod restarts from its last "
                              "checkpoint, taken this often in its run (0: none; all its run so "
                              "far is lost)")
                  ->capture_default_str(),
              {.bare_unit_s = 1});
  cmd->add_flag("--consolidate", opts->consolidate,
                "replay with --migrate-budget and --power-down-idle: when no pod waits, empty a "
                "lightly used node by moving its pods (within the same budget) and put it to "
                "sleep, where the idle energy saved outweighs the run time the moves lose");
  cmd->add_option("--snapshot-at", opts->snapshot_pct,
                  "with --out: write occupancy.csv, every GPU's use when arrivals first reach "
                  "this % (first seed of each policy; -1: none)")
      ->capture_default_str();
  cmd->add_option("--mode", opts->mode, "inflation (FGD paper protocol) or replay (time replay)")
      ->check(CLI::IsMember({"inflation", "replay"}))
      ->capture_default_str();
  cmd->add_option("--queue", opts->queue,
                  "replay: backfill (any queued pod that fits starts, oldest first: a pod that "
                  "fits nowhere does not hold up the ones behind it, as in kube-scheduler), fifo "
                  "(the head blocks the rest) or priority (latency-sensitive pods first, then the "
                  "rest, each backfilled: the queue of every fleet site)")
      ->check(CLI::IsMember({"fifo", "backfill", "priority"}))
      ->capture_default_str();
  cmd->add_option("--time-scale", opts->time_scale,
                  "replay: divide trace times by this (60: one trace minute per second)")
      ->capture_default_str();
  cmd->add_option("--load", opts->loads,
                  "replay: offered GPU load in % of cluster GPUs, a comma list (30,50,70,90). "
                  "Jobs are drawn from the pod list (shape, duration, QoS kept) with its "
                  "hour-of-week arrival profile until the load is met; works on the built-in "
                  "workload too. Without it the pod list is replayed at its own rate");
  cmd->add_option("--days", opts->days, "replay with --load: days measured")->capture_default_str();
  cmd->add_option("--warmup-days", opts->warmup_days,
                  "replay with --load: days before the measured ones, run but not measured")
      ->capture_default_str();
  as_duration(cmd->add_option("--power-down-idle", opts->power_down_idle,
                              "replay: nodes idle this long sleep (draw nothing) until a queued "
                              "pod needs them; a comma list of durations or off (off,30m runs "
                              "both)"),
              {.bare_unit_s = 1, .list = true, .allow_off = true});
  as_duration(cmd->add_option("--wake-delay", opts->wake_delay_s,
                              "replay: time a sleeping node takes to wake (at idle power)")
                  ->capture_default_str(),
              {.bare_unit_s = 1});
  cmd->add_option("--gpu-power", opts->gpu_power,
                  "GPU power rule: pwr (any allocation draws max, the PWR paper) or proportional "
                  "(idle + (max - idle) x allocated share); replay takes a comma list. Default: "
                  "the power model's (pwr)");
  as_duration(cmd->add_option("--timeline-step", opts->timeline_step_s,
                              "replay: time between timeline.csv points (default: every "
                              "instant; 1h with --load)"),
              {.bare_unit_s = 1});
  cmd->add_option("--shard", opts->shard,
                  "I/N: run only block I (0-based) of N of the plan's runs (policy x seed, and "
                  "replay's loads x GPU rules x power-down settings) and write OUT/shard.json for "
                  "greensched merge; needs --out");
  cmd->add_option("--node-events", opts->node_events,
                  "replay: CSV time,node,event with event down or up (pods on a downed node are "
                  "re-queued)")
      ->check(CLI::ExistingFile);
  return [opts, cmd] {
    opts->description = sweep_description(*cmd);
    return run_simulate(*opts);
  };
}

}  // namespace greensched::app
