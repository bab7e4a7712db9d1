// greensched bound: the offline upper bound on GPU allocation (an LP over node types and pod
// shapes, learn/bound.hpp) for the pods arrived by a given arrival level, beside an achievable
// offline packing of the same pods (learn/offline_packing.hpp) and what each policy allocates
// there. Also runs the drift protocol (two pod lists, switching part way).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  bool no_packing = false;
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
  const bool packing = !o.no_packing;
  auto seed_bounds = learn::bounds_and_packings_per_seed(workload, drifting ? &drift : nullptr,
                                                         plan, pct, options, packing);
  if (!seed_bounds.ok()) return fail(seed_bounds);
  std::vector<learn::BoundResult> bounds;
  for (const learn::SeedBound& b : seed_bounds.value()) bounds.push_back(b.bound);

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
  for (const auto& b : bounds) bound_pct.push_back(b.upper_bound_alloc_pct());
  const double bound_mean = mean(bound_pct);
  const double gpus =
      bounds.empty() ? 0.0 : static_cast<double>(bounds.front().cluster_gpu_milli) / kGpuMilli;

  // The packing: per seed its best heuristic, and every heuristic's mean.
  std::vector<double> packing_pct;
  std::map<std::string, int> best_count;  // seeds on which each heuristic was the best
  std::vector<std::pair<std::string, double>> method_mean;  // in packing_method_names() order
  for (std::string_view name : learn::packing_method_names()) method_mean.emplace_back(name, 0.0);
  for (const learn::SeedBound& b : seed_bounds.value()) {
    if (!b.packing) continue;
    packing_pct.push_back(b.packing->alloc_pct());
    ++best_count[b.packing->best_method().name];
    for (const learn::PackingMethod& m : b.packing->methods) {
      for (auto& [name, sum] : method_mean) {
        if (name == m.name) sum += b.packing->alloc_pct(m.allocated_gpu_milli);
      }
    }
  }
  for (auto& [name, sum] : method_mean) {
    sum /= std::max<double>(1.0, static_cast<double>(packing_pct.size()));
  }
  const double packing_mean = mean(packing_pct);
  // The share of a policy's gap to the bound that the packing leaves, in %; none where the
  // policy reaches the bound.
  const auto gap_left = [&](double policy_pct) -> std::optional<double> {
    const double gap = bound_mean - policy_pct;
    if (gap <= 1e-9) return std::nullopt;
    return (bound_mean - packing_mean) / gap * 100.0;
  };
  std::string best_methods;  // "lp-rounding on 7 of 10 seeds, bfd on 3"
  {
    std::vector<std::pair<std::string, int>> by_count(best_count.begin(), best_count.end());
    std::stable_sort(by_count.begin(), by_count.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [name, count] : by_count) {
      best_methods += best_methods.empty()
                          ? fmt::format("{} on {} of {}", name, count,
                                        plural(packing_pct.size(), "seed", "seeds"))
                          : fmt::format(", {} on {}", name, count);
    }
  }

  if (o.json) {
    nlohmann::json j;
    j["nodes"] = workload.nodes_source;
    j["pods"] = workload.pods_source;
    j["arrival_pct"] = pct;
    j["drift"] = drifting ? nlohmann::json(o.drift_at) : nlohmann::json(nullptr);
    j["form"] = o.integer ? "integer" : "lp";
    j["upper_bound_alloc_pct"] = bound_mean;
    if (packing) {
      j["packing_alloc_pct"] = packing_mean;
      j["packing_by_method"] = nlohmann::json::object();
      for (const auto& [name, pct_mean] : method_mean) j["packing_by_method"][name] = pct_mean;
    }
    j["seeds"] = nlohmann::json::array();
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      const learn::BoundResult& b = bounds[i];
      j["seeds"].push_back(
          {{"seed", plan.seeds[i]},
           {"upper_bound_alloc_pct", b.upper_bound_alloc_pct()},
           {"arrived_gpu_pct", static_cast<double>(b.requested_gpu_milli) /
                                   static_cast<double>(b.cluster_gpu_milli) * 100.0},
           {"node_types", b.node_types},
           {"pod_shapes", b.pod_shapes},
           {"proven_optimal", b.proven_optimal},
           {"solve_seconds", b.solve_seconds}});
      const auto& p = seed_bounds.value()[i].packing;
      if (!p) continue;
      nlohmann::json& seed = j["seeds"].back();
      seed["packing_alloc_pct"] = p->alloc_pct();
      seed["packing_method"] = p->best_method().name;
      seed["packing_by_method"] = nlohmann::json::object();
      for (const learn::PackingMethod& m : p->methods) {
        seed["packing_by_method"][m.name] = p->alloc_pct(m.allocated_gpu_milli);
      }
      seed["packing_seconds"] = p->seconds;
    }
    j["policies"] = nlohmann::json::array();
    for (const auto& s : summaries) {
      j["policies"].push_back({{"policy", s.policy},
                               {"alloc_gpu_pct", s.mean_alloc_pct},
                               {"alloc_gpu_pct_per_seed", s.alloc_pct},
                               {"unallocated_gpus", s.mean_unallocated_gpus},
                               {"power_watts", s.mean_power_watts},
                               {"gap_to_bound_pct", bound_mean - s.mean_alloc_pct}});
      if (!packing) continue;
      nlohmann::json& policy = j["policies"].back();
      policy["gap_to_packing_pct"] = packing_mean - s.mean_alloc_pct;
      const std::optional<double> left = gap_left(s.mean_alloc_pct);
      policy["lp_gap_left_by_packing_pct"] = left ? nlohmann::json(*left) : nlohmann::json(nullptr);
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (o.quiet) return 0;

  fmt::print("upper bound on GPU allocation at {} % arrival ({}, {} node types){}:\n", pct,
             o.integer ? "integer program, CBC" : "LP relaxation, CLP",
             bounds.empty() ? 0 : bounds.front().node_types,
             packing ? ", beside an offline packing" : "");
  if (packing) {
    fmt::print("{:>6} {:>10} {:>10} {:>10} {:<12} {:>11} {:>8} {:>7}\n", "seed", "arrived %",
               "bound %", "packing %", "method", "pod shapes", "solve s", "pack s");
  } else {
    fmt::print("{:>6} {:>10} {:>10} {:>11} {:>8}\n", "seed", "arrived %", "bound %", "pod shapes",
               "solve s");
  }
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const learn::BoundResult& b = bounds[i];
    const double arrived = static_cast<double>(b.requested_gpu_milli) /
                           static_cast<double>(b.cluster_gpu_milli) * 100.0;
    const char* note = b.proven_optimal ? "" : " (time limit: dual bound)";
    const auto& p = seed_bounds.value()[i].packing;
    if (p) {
      fmt::print("{:>6} {:>10.2f} {:>10.2f} {:>10.2f} {:<12} {:>11} {:>8.2f} {:>7.2f}{}\n",
                 plan.seeds[i], arrived, b.upper_bound_alloc_pct(), p->alloc_pct(),
                 p->best_method().name, b.pod_shapes, b.solve_seconds, p->seconds, note);
    } else {
      fmt::print("{:>6} {:>10.2f} {:>10.2f} {:>11} {:>8.2f}{}\n", plan.seeds[i], arrived,
                 b.upper_bound_alloc_pct(), b.pod_shapes, b.solve_seconds, note);
    }
  }
  if (!summaries.empty()) {
    std::size_t width = 10;
    for (const auto& s : summaries) width = std::max(width, s.policy.size());
    const std::string packing_row = "offline packing";  // not "packing", a policy's name
    if (packing) width = std::max(width, packing_row.size());
    fmt::print("\n{:<{}} {:>9} {:>13} {:>12} {:>13}{}\n", "policy", width,
               fmt::format("alloc@{}", pct), "unalloc GPUs", "power kW", "gap to bound",
               packing ? fmt::format(" {:>15} {:>12}", "gap to offline", "LP gap left") : "");
    for (const auto& s : summaries) {
      std::string beside;
      if (packing) {
        const std::optional<double> left = gap_left(s.mean_alloc_pct);
        beside = fmt::format(" {:>15.2f} {:>12}", packing_mean - s.mean_alloc_pct,
                             left ? fmt::format("{:.0f} %", *left) : "-");
      }
      fmt::print("{:<{}} {:>9.2f} {:>13.1f} {:>12.1f} {:>13.2f}{}\n", s.policy, width,
                 s.mean_alloc_pct, s.mean_unallocated_gpus, s.mean_power_watts / 1000.0,
                 bound_mean - s.mean_alloc_pct, beside);
    }
    if (packing) {
      fmt::print("{:<{}} {:>9.2f} {:>13.1f}\n", packing_row, width, packing_mean,
                 gpus * (100.0 - packing_mean) / 100.0);
    }
    fmt::print("{:<{}} {:>9.2f} {:>13.1f}\n", "bound", width, bound_mean,
               gpus * (100.0 - bound_mean) / 100.0);
    fmt::print(
        "policies: mean over seeds of the {} % arrival bin, runs with tune {}{}; gap in points\n",
        pct, o.run_tune, drifting ? fmt::format(", drift after {:.0f} %", o.drift_at * 100) : "");
  } else {
    fmt::print("mean bound: {:.2f} %\n", bound_mean);
    if (packing) fmt::print("mean offline packing: {:.2f} %\n", packing_mean);
  }
  if (packing) {
    std::string methods;
    for (const auto& [name, pct_mean] : method_mean) {
      methods += fmt::format("{}{} {:.2f} %", methods.empty() ? "" : ", ", name, pct_mean);
    }
    fmt::print("offline packing: the best heuristic per seed ({}); heuristics' means: {}\n",
               best_methods, methods);
    if (!summaries.empty()) {
      fmt::print(
          "gap to offline: offline packing - policy, in points; LP gap left: the share of the "
          "policy's gap to the bound\nthat the offline packing leaves, (bound - packing) / "
          "(bound - policy). The optimum lies between the offline packing and the bound.\n");
    }
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
      "same pods are also placed for real, offline, by heuristics (best-fit decreasing, FGD\n"
      "over the pods sorted large first, a rounding of the LP's solution; each followed by a\n"
      "repair pass that moves, swaps or displaces a placed pod to make room): the best of\n"
      "them, the offline packing, is an allocation some placement reaches. The true optimum\n"
      "lies between the offline packing and the bound. The policies then run as `simulate`\n"
      "runs them (--tune) and their allocation in the same bin is printed next to both, with\n"
      "the share of each policy's gap to the bound that the offline packing leaves\n"
      "(--no-packing: the bound only).\n\n"
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
                "print upper_bound_alloc_pct, packing_alloc_pct, per-seed bounds and packings and "
                "policy figures as JSON");
  cmd->add_flag("--no-packing", opts->no_packing,
                "no offline packing beside the bound (the bound and the policies only)");
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
