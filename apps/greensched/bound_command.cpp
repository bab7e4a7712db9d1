// greensched bound: the offline upper bound on GPU allocation (an LP over node types and pod
// shapes, learn/bound.hpp) for the pods arrived by a given arrival level, beside what each
// policy allocates there. Also runs the drift protocol (two pod lists, switching part way).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <span>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/words.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/learn/evaluation.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "progress.hpp"

namespace greensched::app {
namespace {

struct BoundCliOptions {
  std::string nodes;
  std::string pods;
  double arrival_pct = 100;  // the bound's arrival level
  std::string seeds = kDefaultSeeds;
  std::string policies = "all";
  double run_tune = kDefaultTune;  // --tune: the policies' runs
  bool tune_given = false;
  bool arrival_given = false;
  bool json = false;
  bool integer = false;
  double time_limit = 60;
  int jobs = 0;
  bool quiet = false;
  bool drift = false;
  double drift_at = 0.5;
  std::string drift_target = "both";
};

double mean(std::span<const double> v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

int run_bound(const BoundCliOptions& o) {
  if (o.nodes.empty() != o.pods.empty()) {
    return fail("give both --nodes and --pods, or neither for the built-in workload", kExitUsage);
  }
  if (!(o.arrival_pct > 0 && o.arrival_pct <= 1000)) {
    return fail("--arrival must be in (0, 1000]", kExitUsage);
  }
  if (!(o.run_tune > 0 && o.run_tune <= 10)) return fail("--tune must be in (0, 10]", kExitUsage);
  if (o.tune_given && !o.arrival_given && !o.quiet) {
    fmt::print(stderr,
               "greensched bound: note: --tune is the policies' runs' inflation, as in simulate; "
               "the bound's arrival level is --arrival PCT (default 100; it was --tune)\n");
  }
  if (!(o.drift_at > 0 && o.drift_at < 1)) return fail("--drift-at must be in (0, 1)", kExitUsage);
  const int pct = static_cast<int>(std::lround(o.arrival_pct));
  auto seeds = parse_seeds(o.seeds);
  if (!seeds.ok()) return fail(seeds.error(), kExitUsage);
  std::vector<std::string> policies;
  if (o.policies != "none") {
    auto parsed = sim::parse_policy_list(o.policies);
    if (!parsed.ok()) return fail(parsed.error(), kExitUsage);
    policies = parsed.value();
  }
  if (!policies.empty() && o.run_tune * 100.0 < pct + 0.5) {
    return fail(fmt::format("--tune {} (the policies' runs) does not reach the bound's {} % "
                            "arrival bin (--arrival)",
                            o.run_tune, pct),
                kExitUsage);
  }

  // The workload: one pod list, or two with --drift.
  learn::DriftWorkload drift;
  trace::Workload plain;
  const bool drifting = o.drift;
  if (drifting) {
    const std::size_t comma = o.pods.find(',');
    if (o.pods.empty() || comma == std::string::npos ||
        o.pods.find(',', comma + 1) != std::string::npos) {
      return fail("--drift needs --nodes and --pods FIRST.csv,SECOND.csv", kExitUsage);
    }
    auto loaded =
        learn::load_drift_workload(o.nodes, o.pods.substr(0, comma), o.pods.substr(comma + 1));
    if (!loaded.ok()) return fail(loaded);
    drift = std::move(loaded.value());
  } else if (o.nodes.empty()) {
    plain = trace::builtin_openb_workload();
  } else {
    auto loaded = trace::load_openb_workload(o.nodes, o.pods);
    if (!loaded.ok()) return fail(loaded);
    plain = std::move(loaded.value());
  }
  const trace::Workload& workload = drifting ? drift.workload : plain;
  if (!o.quiet) {
    fmt::print(stderr, "workload: {} nodes; {} pods ({}); bound at {} % arrival, {}\n",
               workload.nodes.size(), workload.pods.size(), workload.pods_source, pct,
               plural(seeds.value().size(), "seed", "seeds"));
  }

  learn::EvalPlan plan;
  plan.policies = policies;
  plan.seeds = seeds.value();
  plan.tune = o.run_tune;
  plan.jobs = o.jobs;
  if (drifting) plan.drift_switch = o.drift_at;
  learn::BoundOptions options;
  options.integer = o.integer;
  options.time_limit_s = o.time_limit;
  auto bounds = learn::bounds_per_seed(workload, drifting ? &drift : nullptr, plan, pct, options);
  if (!bounds.ok()) return fail(bounds);

  std::vector<learn::PolicySummary> summaries;
  if (!policies.empty()) {
    auto scenario = sim::make_scenario(workload, power::PowerModel::builtin());
    if (!scenario.ok()) return fail(scenario);
    if (drifting && o.drift_target == "first") {
      scenario.value().target = frag::build_target_workload(
          std::span<const PodSpec>(workload.pods).subspan(0, drift.first_count));
    }
    auto results = [&] {
      ProgressBar bar(!o.quiet && stderr_is_terminal());
      return learn::run_policies(
          scenario.value(), drifting ? &drift : nullptr, plan,
          [&](std::size_t done, std::size_t total, const sim::RunResult& r) {
            bar.update(done, total, fmt::format("{} seed {}", r.spec.policy, r.spec.seed));
          });
    }();
    if (!results.ok()) return fail(results);
    summaries = learn::summarize(results.value(), pct);
  }

  std::vector<double> bound_pct;
  for (const auto& b : bounds.value()) bound_pct.push_back(b.upper_bound_alloc_pct());
  const double bound_mean = mean(bound_pct);
  const double gpus =
      bounds.value().empty()
          ? 0.0
          : static_cast<double>(bounds.value().front().cluster_gpu_milli) / kGpuMilli;

  if (o.json) {
    nlohmann::json j;
    j["nodes"] = workload.nodes_source;
    j["pods"] = workload.pods_source;
    j["arrival_pct"] = pct;
    j["drift"] = drifting ? nlohmann::json(o.drift_at) : nlohmann::json(nullptr);
    j["form"] = o.integer ? "integer" : "lp";
    j["upper_bound_alloc_pct"] = bound_mean;
    j["seeds"] = nlohmann::json::array();
    for (std::size_t i = 0; i < bounds.value().size(); ++i) {
      const learn::BoundResult& b = bounds.value()[i];
      j["seeds"].push_back(
          {{"seed", plan.seeds[i]},
           {"upper_bound_alloc_pct", b.upper_bound_alloc_pct()},
           {"arrived_gpu_pct", static_cast<double>(b.requested_gpu_milli) /
                                   static_cast<double>(b.cluster_gpu_milli) * 100.0},
           {"node_types", b.node_types},
           {"pod_shapes", b.pod_shapes},
           {"proven_optimal", b.proven_optimal},
           {"solve_seconds", b.solve_seconds}});
    }
    j["policies"] = nlohmann::json::array();
    for (const auto& s : summaries) {
      j["policies"].push_back({{"policy", s.policy},
                               {"alloc_gpu_pct", s.mean_alloc_pct},
                               {"alloc_gpu_pct_per_seed", s.alloc_pct},
                               {"unallocated_gpus", s.mean_unallocated_gpus},
                               {"power_watts", s.mean_power_watts},
                               {"gap_to_bound_pct", bound_mean - s.mean_alloc_pct}});
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (o.quiet) return 0;

  fmt::print("upper bound on GPU allocation at {} % arrival ({}, {} node types):\n", pct,
             o.integer ? "integer program, CBC" : "LP relaxation, CLP",
             bounds.value().empty() ? 0 : bounds.value().front().node_types);
  fmt::print("{:>6} {:>10} {:>10} {:>11} {:>8}\n", "seed", "arrived %", "bound %", "pod shapes",
             "solve s");
  for (std::size_t i = 0; i < bounds.value().size(); ++i) {
    const learn::BoundResult& b = bounds.value()[i];
    fmt::print("{:>6} {:>10.2f} {:>10.2f} {:>11} {:>8.2f}{}\n", plan.seeds[i],
               static_cast<double>(b.requested_gpu_milli) /
                   static_cast<double>(b.cluster_gpu_milli) * 100.0,
               b.upper_bound_alloc_pct(), b.pod_shapes, b.solve_seconds,
               b.proven_optimal ? "" : " (time limit: dual bound)");
  }
  if (!summaries.empty()) {
    std::size_t width = 10;
    for (const auto& s : summaries) width = std::max(width, s.policy.size());
    fmt::print("\n{:<{}} {:>9} {:>13} {:>12} {:>13}\n", "policy", width,
               fmt::format("alloc@{}", pct), "unalloc GPUs", "power kW", "gap to bound");
    for (const auto& s : summaries) {
      fmt::print("{:<{}} {:>9.2f} {:>13.1f} {:>12.1f} {:>13.2f}\n", s.policy, width,
                 s.mean_alloc_pct, s.mean_unallocated_gpus, s.mean_power_watts / 1000.0,
                 bound_mean - s.mean_alloc_pct);
    }
    fmt::print("{:<{}} {:>9.2f} {:>13.1f}\n", "bound", width, bound_mean,
               gpus * (100.0 - bound_mean) / 100.0);
    fmt::print(
        "policies: mean over seeds of the {} % arrival bin, runs with tune {}{}; gap in points\n",
        pct, o.run_tune, drifting ? fmt::format(", drift after {:.0f} %", o.drift_at * 100) : "");
  } else {
    fmt::print("mean bound: {:.2f} %\n", bound_mean);
  }
  return 0;
}

}  // namespace

Action add_bound_command(CLI::App& app) {
  auto opts = std::make_shared<BoundCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bound", "An offline upper bound on the GPU allocation any policy could reach");
  cmd->footer(
      "For each seed, the pods that arrive by the --arrival % bin of the inflation run\n"
      "(all known in advance) are packed by a linear program over node types and pod shapes\n"
      "(COIN-OR CLP; --integer: CBC). No policy allocates more at that arrival level. The\n"
      "policies then run as `simulate` runs them (--tune) and their allocation in the\n"
      "same bin is printed next to the bound.\n\n"
      "Examples:\n"
      "  greensched bound --nodes openb_node_list_gpu_node.csv \\\n"
      "      --pods openb_pod_list_default.csv --arrival 100 --seeds 42-51 --policy fgd,bestfit\n"
      "  greensched bound ... --pods default.csv,gpushare100.csv --drift --policy fgd,fgd-online");
  cmd->add_option("--nodes", opts->nodes, "openb node list CSV")->check(CLI::ExistingFile);
  cmd->add_option(
      "--pods", opts->pods,
      "openb pod list CSV; with --drift two lists FIRST,SECOND. Without --nodes/--pods: "
      "the built-in workload");
  cmd->add_option("--arrival", opts->arrival_pct,
                  "arrival level of the bound: % of the cluster's GPU capacity requested")
      ->capture_default_str()
      ->each([opts](const std::string&) { opts->arrival_given = true; });
  add_seeds_option(cmd, opts->seeds, "seeds, one bound and one run per policy each", false);
  cmd->add_option("--policy", opts->policies,
                  fmt::format("policies to run beside the bound: a comma list of {}; mixes such "
                              "as pwr:200+fgd:800; all; or none",
                              policy_names()))
      ->capture_default_str();
  cmd->add_option("--tune", opts->run_tune,
                  "inflation of the policies' runs: arrived GPU requests as a multiple of the "
                  "cluster's GPU capacity, as in simulate")
      ->capture_default_str()
      ->each([opts](const std::string&) { opts->tune_given = true; });
  add_deprecated_alias(cmd, "--run-tune", "--tune", opts->run_tune);
  cmd->add_flag("--json", opts->json,
                "print upper_bound_alloc_pct, per-seed bounds and policy figures as JSON");
  cmd->add_flag("--integer", opts->integer,
                "integer pod counts (CBC branch and bound) instead of the LP relaxation");
  as_duration(cmd->add_option("--time-limit", opts->time_limit,
                              "time per integer solve; on timeout the proven dual bound is used")
                  ->capture_default_str(),
              {.bare_unit_s = 1, .whole = false});
  cmd->add_option("--jobs,-j", opts->jobs, "parallel runs and solves (default: all cores)");
  cmd->add_flag("--quiet,-q", opts->quiet, "no table or progress: only --json and errors");
  cmd->add_flag("--drift", opts->drift,
                "drift protocol: the first pod list's arrivals, then the second's");
  cmd->add_option("--drift-at", opts->drift_at,
                  "with --drift: switch after this fraction of the arrived GPU requests")
      ->capture_default_str();
  cmd->add_option("--drift-target", opts->drift_target,
                  "with --drift: FGD's offline target workload from both lists or the first only")
      ->check(CLI::IsMember({"both", "first"}))
      ->capture_default_str();
  return [opts] { return run_bound(*opts); };
}

}  // namespace greensched::app
