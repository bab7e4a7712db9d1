#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/report/results_writer.hpp"
#include "greensched/report/timeline_writer.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "progress.hpp"

namespace greensched::app {
namespace {

struct SimulateOptions {
  std::string nodes;
  std::string pods;
  std::string policies = "all";
  std::string seeds = "42";
  double tune = 1.3;
  std::string out;
  int jobs = 0;
  bool quiet = false;
  bool json = false;
  std::string power_model;
  double pue = 0;  // 0: the power model's
  std::string gpu_select;
  bool power_by_model = false;
  std::string mode = "inflation";
  std::string queue = "fifo";
  double time_scale = 1.0;
  std::string node_events;
  std::string record;
  int snapshot_pct = 100;
};

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
  j["wall_seconds"] = r.wall_seconds;
  return j;
}

nlohmann::json to_json(const sim::ReplayResult& r) {
  return {{"policy", r.config.policy},
          {"seed", r.config.seed},
          {"pods_total", r.pods_total},
          {"pods_started", r.pods_started},
          {"pods_never_started", r.pods_never_started},
          {"pods_requeued", r.pods_requeued},
          {"mean_queue_delay_s", r.mean_queue_delay_s},
          {"p99_queue_delay_s", r.p99_queue_delay_s},
          {"energy_kwh", r.energy_kwh},
          {"makespan_s", r.makespan_s},
          {"wall_seconds", r.wall_seconds}};
}

int run_replay_mode(const SimulateOptions& o, const trace::Workload& workload,
                    const power::PowerModel& power_model, const std::vector<std::string>& policies,
                    const std::vector<uint64_t>& seeds) {
  sim::ReplayConfig base;
  base.queue =
      o.queue == "backfill" ? sim::QueueDiscipline::kBackfill : sim::QueueDiscipline::kFifo;
  base.time_scale = o.time_scale;
  base.record = !o.record.empty();
  if (!o.node_events.empty()) {
    auto events = sim::read_node_events(o.node_events, workload.nodes);
    if (!events.ok()) return fail(events.error());
    base.node_events = std::move(events.value());
  }
  auto figures = power_model.resolve(workload.nodes, workload.models);
  if (!figures.ok()) return fail(figures.error());
  const frag::TargetWorkload target = frag::build_target_workload(workload.pods);

  std::vector<sim::ReplayResult> results;
  {
    ProgressBar bar(!o.quiet && stderr_is_terminal());
    const std::size_t total = policies.size() * seeds.size();
    for (const std::string& policy : policies) {
      for (uint64_t seed : seeds) {
        sim::ReplayConfig config = base;
        config.policy = policy;
        config.seed = seed;
        auto r = sim::run_replay(workload, target, figures.value(), power_model.pue(), config);
        if (!r.ok()) return fail(r.error());
        results.push_back(std::move(r.value()));
        bar.update(results.size(), total,
                   fmt::format("{} seed {} ({:.2f} s)", policy, seed, results.back().wall_seconds));
      }
    }
  }

  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : results) all.push_back(to_json(r));
    std::cout << all.dump(2) << "\n";
  } else {
    std::size_t width = 11;
    for (const auto& r : results) width = std::max(width, r.config.policy.size());
    fmt::print("{:<{}} {:>5} {:>8} {:>13} {:>12} {:>12} {:>11}\n", "policy", width, "seed",
               "started", "never started", "mean wait s", "p99 wait s", "energy kWh");
    for (const auto& r : results) {
      fmt::print("{:<{}} {:>5} {:>8} {:>13} {:>12.1f} {:>12.1f} {:>11.1f}\n", r.config.policy,
                 width, r.config.seed, r.pods_started, r.pods_never_started, r.mean_queue_delay_s,
                 r.p99_queue_delay_s, r.energy_kwh);
    }
  }
  std::cout.flush();
  if (!o.record.empty()) {
    std::string records;
    for (const auto& r : results) {
      std::istringstream lines(r.records);
      for (std::string line; std::getline(lines, line);) {
        records += fmt::format("{{\"run\":{{\"policy\":\"{}\",\"seed\":{}}},{}\n", r.config.policy,
                               r.config.seed, line.substr(1));
      }
    }
    if (Status s = write_text_file(o.record, records); !s.ok()) {
      return fail(s.message());
    }
  }
  if (o.out.empty()) return 0;

  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) return fail(fmt::format("{}: cannot create directory: {}", o.out, ec.message()));
  // One timeline for all runs, each row prefixed with its policy and seed.
  std::string timeline;
  for (const auto& r : results) {
    std::ostringstream one;
    report::write_timeline_csv(one, r);
    std::istringstream lines(one.str());
    std::string line;
    std::getline(lines, line);
    if (timeline.empty()) timeline = "policy,seed," + line + "\n";
    while (std::getline(lines, line)) {
      timeline += fmt::format("{},{},{}\n", r.config.policy, r.config.seed, line);
    }
  }
  std::ostringstream summary;
  report::write_replay_summary_csv(summary, results);
  if (Status s =
          write_text_file((std::filesystem::path(o.out) / "timeline.csv").string(), timeline);
      !s.ok())
    return fail(s.message());
  if (Status s =
          write_text_file((std::filesystem::path(o.out) / "summary.csv").string(), summary.str());
      !s.ok())
    return fail(s.message());
  if (!o.quiet) fmt::print(stderr, "wrote {0}/timeline.csv and {0}/summary.csv\n", o.out);
  return 0;
}

int run_simulate(const SimulateOptions& o) {
  if (o.nodes.empty() != o.pods.empty()) {
    return fail("give both --nodes and --pods, or neither for the built-in workload", 2);
  }
  if (!(o.tune > 0 && o.tune <= 10))
    return fail(fmt::format("--tune must be in (0, 10], got {}", o.tune), 2);
  if (!(o.time_scale > 0)) return fail("--time-scale must be > 0", 2);
  if (o.pue != 0 && !(o.pue >= 1.0)) return fail("--pue must be >= 1.0", 2);
  auto seeds = sim::parse_seed_list(o.seeds);
  if (!seeds.ok()) return fail(seeds.error(), 2);
  auto policies = sim::parse_policy_list(o.policies);
  if (!policies.ok()) return fail(policies.error(), 2);

  power::PowerModel power_model = power::PowerModel::builtin();
  if (!o.power_model.empty()) {
    auto loaded = power::PowerModel::load(o.power_model);
    if (!loaded.ok()) return fail(loaded.error());
    power_model = std::move(loaded.value());
  }
  if (o.pue != 0) power_model.set_pue(o.pue);

  trace::Workload workload;
  if (o.nodes.empty()) {
    if (o.mode == "replay") {
      return fail(
          "--mode replay needs a pod list with creation and deletion times (--nodes and "
          "--pods); the built-in workload has none",
          2);
    }
    workload = trace::builtin_openb_workload();
  } else {
    auto loaded = trace::load_openb_workload(o.nodes, o.pods);
    if (!loaded.ok()) return fail(loaded.error());
    workload = std::move(loaded.value());
  }
  if (!o.quiet) {
    int gpus = 0;
    for (const auto& n : workload.nodes) gpus += n.gpu_count;
    fmt::print(stderr, "workload: {} nodes, {} GPUs ({}); {} pods ({})\n", workload.nodes.size(),
               gpus, workload.nodes_source, workload.pods.size(), workload.pods_source);
    fmt::print(stderr, "{} mode: {} policies x {} seeds\n", o.mode, policies.value().size(),
               seeds.value().size());
  }
  if (o.mode == "replay") {
    return run_replay_mode(o, workload, power_model, policies.value(), seeds.value());
  }

  sim::ExperimentPlan plan;
  plan.policies = policies.value();
  plan.seeds = seeds.value();
  plan.tune = o.tune;
  plan.jobs = o.jobs;
  plan.power_model = power_model;
  plan.gpu_select = o.gpu_select;
  plan.record = !o.record.empty();
  plan.snapshot_pct = o.out.empty() ? -1 : o.snapshot_pct;
  auto results = [&] {
    ProgressBar bar(!o.quiet && stderr_is_terminal());  // finishes its line when it goes
    return sim::run_experiments(
        workload, plan, [&](std::size_t done, std::size_t total, const sim::RunResult& r) {
          bar.update(
              done, total,
              fmt::format("{} seed {} ({:.2f} s)", r.spec.policy, r.spec.seed, r.wall_seconds));
        });
  }();
  if (!results.ok()) return fail(results.error());

  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : results.value()) all.push_back(to_json(r));
    std::cout << all.dump(2) << "\n";
  } else {
    std::cout << report::summary_table(results.value(), o.power_by_model);
  }
  std::cout.flush();
  if (!o.record.empty()) {
    std::string records;
    for (const auto& r : results.value()) {
      // Each record names its run, so several runs can share one file.
      std::istringstream lines(r.records);
      for (std::string line; std::getline(lines, line);) {
        records += fmt::format("{{\"run\":{{\"policy\":\"{}\",\"seed\":{}}},{}\n", r.spec.policy,
                               r.spec.seed, line.substr(1));
      }
    }
    std::ofstream out(o.record, std::ios::binary);
    out << records;
    out.close();
    if (!out) return fail(fmt::format("{}: cannot write", o.record));
    if (!o.quiet) {
      fmt::print(stderr, "wrote the decision records of {} run(s) to {}\n", results.value().size(),
                 o.record);
    }
  }
  if (!o.out.empty()) {
    if (Status s = report::write_results(o.out, results.value(), &workload); !s.ok()) {
      return fail(s.message());
    }
    if (!o.quiet) fmt::print(stderr, "wrote {0}/curves.csv and {0}/summary.csv\n", o.out);
  }
  return 0;
}

}  // namespace

Action add_simulate_command(CLI::App& app) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay a pod list against a cluster under one or more policies and seeds.\n\n"
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
      "  greensched simulate ... --mode replay --queue backfill --policy fgd --out replay/");
  cmd->add_option("--nodes", opts->nodes, "openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--pods", opts->pods,
                  "openb pod list CSV (any variant). Without --nodes/--pods: the built-in "
                  "workload (openb statistics)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--policy", opts->policies,
                  "comma list of random, dotprod, clustering, packing, bestfit, fgd, pwr, weighted "
                  "mixes such as pwr:200+fgd:800, or all")
      ->capture_default_str();
  cmd->add_option("--seeds", opts->seeds, "seeds: a list and/or ranges, e.g. 42-51 or 1,5,7-9")
      ->capture_default_str();
  cmd->add_option("--tune", opts->tune,
                  "inflation: arrived GPU requests as a multiple of cluster GPU capacity")
      ->capture_default_str();
  cmd->add_option("--out", opts->out,
                  "directory for curves.csv and summary.csv (replay: timeline.csv, summary.csv)");
  cmd->add_option("--jobs,-j", opts->jobs, "parallel runs (default: all cores)");
  cmd->add_flag("--quiet,-q", opts->quiet, "no progress or workload lines on stderr");
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
  cmd->add_option("--snapshot-at", opts->snapshot_pct,
                  "with --out: write occupancy.csv, every GPU's use when arrivals first reach "
                  "this % (first seed of each policy; -1: none)")
      ->capture_default_str();
  cmd->add_option("--mode", opts->mode, "inflation (FGD paper protocol) or replay (time replay)")
      ->check(CLI::IsMember({"inflation", "replay"}))
      ->capture_default_str();
  cmd->add_option("--queue", opts->queue,
                  "replay: fifo (the head blocks the rest) or backfill (any queued pod that fits)")
      ->check(CLI::IsMember({"fifo", "backfill"}))
      ->capture_default_str();
  cmd->add_option("--time-scale", opts->time_scale,
                  "replay: divide trace times by this (60: one trace minute per second)")
      ->capture_default_str();
  cmd->add_option("--node-events", opts->node_events,
                  "replay: CSV time,node,event with event down or up (pods on a downed node are "
                  "re-queued)")
      ->check(CLI::ExistingFile);
  return [opts] { return run_simulate(*opts); };
}

}  // namespace greensched::app
