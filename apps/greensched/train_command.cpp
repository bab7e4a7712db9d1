// greensched train: trains a learned policy (learn/trainer.hpp) in the simulator with the
// cross-entropy method and writes its model as JSON. Seeded, checkpointed after every
// generation, resumable, with progress on stderr.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/learn/trainer.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "progress.hpp"

namespace greensched::app {
namespace {

struct TrainCliOptions {
  std::string nodes;
  std::vector<std::string> pods;
  std::string out;
  std::string checkpoint;
  bool resume = false;
  std::string seed_pool = "1000-9999";
  std::string seeds = "1";
  bool quiet = false;
  learn::TrainOptions train;
};

int run_train(TrainCliOptions o) {
  auto seed = parse_one_seed(o.seeds);
  if (!seed.ok()) return fail(seed.status().message(), kExitUsage);
  o.train.seed = seed.value();
  auto created = create_out_file(o.out, "model.json", ".json");
  if (!created.ok()) return fail(created.status());
  const OutFile& out = created.value();
  if (o.checkpoint.empty()) {
    o.checkpoint = out.legacy ? out.path + ".ckpt.json"
                              : (std::filesystem::path(o.out) / "checkpoint.json").string();
  }
  o.out = out.path;
  const std::size_t dash = o.seed_pool.find('-');
  auto low = sim::parse_seed_list(o.seed_pool.substr(0, dash));
  auto high =
      sim::parse_seed_list(dash == std::string::npos ? o.seed_pool : o.seed_pool.substr(dash + 1));
  if (!low.ok() || !high.ok() || low.value().size() != 1 || high.value().size() != 1) {
    return fail(fmt::format("--seed-pool '{}': expected LOW-HIGH", o.seed_pool), kExitUsage);
  }
  o.train.seed_low = low.value()[0];
  o.train.seed_high = high.value()[0];

  std::vector<trace::Workload> workloads;
  for (const std::string& pods : o.pods) {
    auto w = trace::load_openb_workload(o.nodes, pods);
    if (!w.ok()) return fail(w);
    workloads.push_back(std::move(w.value()));
    o.train.trace_names.push_back(std::filesystem::path(pods).stem().string());
  }
  std::vector<const trace::Workload*> pointers;
  for (const auto& w : workloads) pointers.push_back(&w);

  std::unique_ptr<learn::TrainCheckpoint> resume;
  if (o.resume) {
    auto c = learn::load_checkpoint(o.checkpoint);
    if (!c.ok()) return fail(c);
    resume = std::make_unique<learn::TrainCheckpoint>(std::move(c.value()));
    if (!o.quiet) {
      fmt::print(stderr, "resuming {} at generation {}\n", o.checkpoint, resume->state.generation);
    }
  }
  if (!o.quiet) {
    fmt::print(stderr,
               "training on {} traces, {} generations x {} candidates x {} runs; seeds from "
               "{}-{}; checkpoint {}\n",
               workloads.size(), o.train.generations, o.train.cem.population + 1, o.train.pairs,
               o.train.seed_low, o.train.seed_high, o.checkpoint);
  }
  auto result = learn::train(
      pointers, o.train, resume.get(), o.checkpoint,
      [&](const learn::GenerationRecord& r, int generations) {
        // Progress, a line per generation, on a terminal only; the checkpoint keeps the history.
        if (o.quiet || !stderr_is_terminal()) return;
        fmt::print(stderr,
                   "generation {:>3}/{}: best {:+.3f}  elite {:+.3f}  model {:+.3f}  spread "
                   "{:.4f}  ({:.1f} s)\n",
                   r.generation + 1, generations, r.best, r.elite_mean, r.mean_model, r.mean_sigma,
                   r.seconds);
      });
  if (!result.ok()) return fail(result);
  if (Status s = learn::save_linear_model(result.value().model, o.out); !s.ok()) {
    return fail(s);
  }
  const auto& history = result.value().checkpoint.history;
  fmt::print("wrote {}: {} trainable weights, {} generations in {:.1f} s{}\n", o.out,
             result.value().trainable, result.value().checkpoint.state.generation,
             result.value().checkpoint.elapsed_seconds,
             history.empty() ? ""
                             : fmt::format("; last model objective {:+.3f} (FGD = 0)",
                                           history.back().mean_model));
  return 0;
}

}  // namespace

Action add_train_command(CLI::App& app) {
  auto opts = std::make_shared<TrainCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a learned scheduling policy in the simulator (cross-entropy method)");
  cmd->footer(
      "The policy scores each feasible node by a linear model over features the simulator\n"
      "computes (FGD's fragmentation change, PWR's power change, residual CPU/memory/GPU, GPU\n"
      "reuse, GPU-model scarcity) with weights per pod class. Each generation samples\n"
      "candidates around the current weights (starting at FGD's), runs each on the same\n"
      "(trace, seed) pairs drawn from --seed-pool (never 42-51), and keeps the best. The\n"
      "objective is allocation at 100 % arrival minus FGD's, minus --power-weight x power\n"
      "increase over FGD's in %. Use the model with --policy learned:MODEL.json.\n\n"
      "Example:\n"
      "  greensched train --nodes openb_node_list_gpu_node.csv \\\n"
      "      --pods openb_pod_list_default.csv openb_pod_list_cpu*.csv --out models/m/\n"
      "  greensched simulate --policy learned:models/m/model.json ...");
  cmd->add_option("--nodes", opts->nodes, "openb node list CSV")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--pods", opts->pods, "training pod lists (one or more CSVs)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", opts->out,
                  "folder to write model.json (the model) and checkpoint.json into; created if "
                  "absent")
      ->required();
  cmd->add_option("--checkpoint", opts->checkpoint,
                  "checkpoint file, rewritten every generation (default: OUT/checkpoint.json)");
  cmd->add_flag("--resume", opts->resume, "continue from the checkpoint (same options)");
  cmd->add_option("--generations", opts->train.generations, "CEM generations")
      ->capture_default_str();
  cmd->add_option("--population", opts->train.cem.population, "candidates per generation")
      ->capture_default_str();
  cmd->add_option("--elite", opts->train.cem.elite, "best candidates kept per generation")
      ->capture_default_str();
  cmd->add_option("--pairs", opts->train.pairs, "(trace, seed) runs per generation")
      ->capture_default_str();
  add_seeds_option(cmd, opts->seeds, "seed of the sampling and of the runs drawn", true);
  cmd->add_option("--seed-pool", opts->seed_pool,
                  "simulation seeds are drawn from LOW-HIGH (must not meet 42-51)")
      ->capture_default_str();
  opts->train.tune = kDefaultTune;
  cmd->add_option("--tune", opts->train.tune,
                  "inflation of the training runs, as in simulate: the objective reads the 100 % "
                  "arrival bin, which any tune above 1.0 reaches, but the runs differ with the "
                  "tune (models/*.json were trained with 1.01)")
      ->capture_default_str();
  cmd->add_option("--power-weight", opts->train.power_weight,
                  "allocation points given up per % of power above FGD's")
      ->capture_default_str();
  cmd->add_option("--l2", opts->train.l2,
                  "pull towards FGD's weights: points per ((w - w_FGD) / 0.01)^2")
      ->capture_default_str();
  cmd->add_option("--sigma", opts->train.init_sigma, "initial spread of the weights")
      ->capture_default_str();
  cmd->add_flag("--load-weights", opts->train.load_weights,
                "also train weights that scale with the cluster's load");
  cmd->add_option("--resolution", opts->train.resolution,
                  "score resolution of the model (ties within it go to the tie order)")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", opts->train.jobs, "parallel runs (default: all cores)");
  cmd->add_flag("--quiet,-q", opts->quiet, "no progress on stderr (shown on a terminal only)");
  return [opts] { return run_train(*opts); };
}

}  // namespace greensched::app
