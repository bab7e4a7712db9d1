#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "greensched/report/results_writer.hpp"
#include "greensched/sim/experiment.hpp"
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
  j["wall_seconds"] = r.wall_seconds;
  return j;
}

int run_simulate(const SimulateOptions& o) {
  if (o.nodes.empty() != o.pods.empty()) {
    fmt::print(stderr,
               "error: give both --nodes and --pods, or neither for the built-in workload\n");
    return 2;
  }
  if (!(o.tune > 0 && o.tune <= 10)) {
    fmt::print(stderr, "error: --tune must be in (0, 10], got {}\n", o.tune);
    return 2;
  }
  auto seeds = sim::parse_seed_list(o.seeds);
  if (!seeds.ok()) {
    fmt::print(stderr, "error: {}\n", seeds.error());
    return 2;
  }
  auto policies = sim::parse_policy_list(o.policies);
  if (!policies.ok()) {
    fmt::print(stderr, "error: {}\n", policies.error());
    return 2;
  }

  trace::Workload workload;
  if (o.nodes.empty()) {
    workload = trace::builtin_openb_workload();
  } else {
    auto loaded = trace::load_openb_workload(o.nodes, o.pods);
    if (!loaded.ok()) {
      fmt::print(stderr, "error: {}\n", loaded.error());
      return 1;
    }
    workload = std::move(loaded.value());
  }
  if (!o.quiet) {
    int gpus = 0;
    for (const auto& n : workload.nodes) gpus += n.gpu_count;
    fmt::print(stderr, "workload: {} nodes, {} GPUs ({}); {} pods ({})\n", workload.nodes.size(),
               gpus, workload.nodes_source, workload.pods.size(), workload.pods_source);
    fmt::print(stderr, "running {} policies x {} seeds at tune {}\n", policies.value().size(),
               seeds.value().size(), o.tune);
  }

  sim::ExperimentPlan plan{policies.value(), seeds.value(), o.tune, o.jobs};
  auto results = [&] {
    ProgressBar bar(!o.quiet && stderr_is_terminal());  // finishes its line when it goes
    return sim::run_experiments(
        workload, plan, [&](std::size_t done, std::size_t total, const sim::RunResult& r) {
          bar.update(
              done, total,
              fmt::format("{} seed {} ({:.2f} s)", r.spec.policy, r.spec.seed, r.wall_seconds));
        });
  }();
  if (!results.ok()) {
    fmt::print(stderr, "error: {}\n", results.error());
    return 1;
  }

  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : results.value()) all.push_back(to_json(r));
    std::cout << all.dump(2) << "\n";
  } else {
    std::cout << report::summary_table(results.value());
  }
  std::cout.flush();
  if (!o.out.empty()) {
    if (Status s = report::write_results(o.out, results.value()); !s.ok()) {
      fmt::print(stderr, "error: {}\n", s.message());
      return 1;
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
      "Replay a pod list against a cluster under one or more policies and seeds.\n"
      "Protocol of the FGD paper (ATC'23): the pods are shuffled and inflated with more pods\n"
      "drawn from the trace until GPU requests reach TUNE x cluster GPU capacity; pods only\n"
      "arrive; a pod that fits nowhere fails. Prints GPU allocation at 90/100/130 % arrival.\n\n"
      "Example:\n"
      "  greensched simulate --nodes openb_node_list_gpu_node.csv \\\n"
      "      --pods openb_pod_list_default.csv --policy fgd,bestfit --seeds 42-51 --out results/");
  cmd->add_option("--nodes", opts->nodes, "openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--pods", opts->pods,
                  "openb pod list CSV (any variant). Without --nodes/--pods: the built-in "
                  "workload (openb statistics)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--policy", opts->policies,
                  "comma list of random, dotprod, clustering, packing, bestfit, fgd, or all")
      ->capture_default_str();
  cmd->add_option("--seeds", opts->seeds, "seeds: a list and/or ranges, e.g. 42-51 or 1,5,7-9")
      ->capture_default_str();
  cmd->add_option("--tune", opts->tune,
                  "arrived GPU requests as a multiple of cluster GPU capacity")
      ->capture_default_str();
  cmd->add_option("--out", opts->out, "directory for curves.csv and summary.csv");
  cmd->add_option("--jobs,-j", opts->jobs, "parallel runs (default: all cores)");
  cmd->add_flag("--quiet,-q", opts->quiet, "no progress or workload lines on stderr");
  cmd->add_flag("--json", opts->json, "print per-run results as JSON instead of the table");
  return [opts] { return run_simulate(*opts); };
}

}  // namespace greensched::app
