// greensched profile: what a pod list asks for (kinds, GPU shares, CPU and memory per GPU,
// model constraints, QoS, lifetimes, arrivals, FGD's target workload), and with --predict how
// well job durations and energy can be predicted from shape and QoS.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/monitor/prediction_eval.hpp"
#include "greensched/monitor/profile_report.hpp"
#include "greensched/monitor/workload_profile.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/trace/openb_reader.hpp"

namespace greensched::app {
namespace {

struct ProfileCliOptions {
  std::string pods;
  bool json = false;
  std::string out;
  bool predict = false;
  double train_share = 0.7;
  int64_t min_support = 5;
  std::string power_model;
  std::string energy_gpu = "G2";
};

int run_profile(const ProfileCliOptions& o) {
  GpuModelRegistry models;
  auto pods = trace::read_openb_pods(o.pods, models);
  if (!pods.ok()) return fail(pods);
  const monitor::WorkloadProfile profile = monitor::profile_workload(pods.value(), models, o.pods);

  std::optional<monitor::PredictionEvaluation> prediction;
  if (o.predict) {
    power::PowerModel pm = power::PowerModel::builtin();
    if (!o.power_model.empty()) {
      auto loaded = power::PowerModel::load(o.power_model);
      if (!loaded.ok()) return fail(loaded);
      pm = std::move(loaded.value());
    }
    auto energy = monitor::JobEnergyModel::make(pm, models, o.energy_gpu);
    if (!energy.ok()) return fail(fmt::format("--energy-gpu: {}", energy.error()), kExitUsage);
    auto e =
        monitor::evaluate_time_split(pods.value(), energy.value(), o.train_share, o.min_support);
    if (!e.ok()) return fail(fmt::format("{}: --predict: {}", o.pods, e.error()));
    prediction = e.value();
  }

  if (o.json) {
    nlohmann::json j = monitor::profile_json(profile, models);
    if (prediction) j["prediction"] = monitor::prediction_json(*prediction);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << monitor::profile_table(profile, models);
    if (prediction) std::cout << "\n" << monitor::prediction_table(*prediction);
  }
  std::cout.flush();
  if (!o.out.empty()) {
    auto files = monitor::profile_csvs(profile, models);
    if (prediction)
      files.emplace_back("profile_prediction.csv", monitor::prediction_csv(*prediction));
    if (Status s = write_text_files(o.out, files); !s.ok()) return fail(s);
    fmt::print(stderr, "wrote {} profile_*.csv files to {}\n", files.size(), o.out);
  }
  return 0;
}

}  // namespace

Action add_profile_command(CLI::App& app) {
  auto o = std::make_shared<ProfileCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Profile a pod list: job kinds, GPU shares, lifetimes, arrivals");
  cmd->footer(
      "Profile a pod list (any openb variant): pods and requested GPUs by kind (CPU-only,\n"
      "shared GPU, one GPU, multi-GPU), GPU share histogram, CPU and memory per GPU, GPU model\n"
      "constraints, QoS mix, lifetimes, arrivals by hour and FGD's target workload. With\n"
      "--predict: predict each job's duration and energy from its shape and QoS, trained on the\n"
      "first 70 % of jobs by creation time and scored on the rest against a global median.\n\n"
      "Example:\n"
      "  greensched profile --pods ../shared/data/openb/openb_pod_list_default.csv --predict \\\n"
      "      --out profile/");
  cmd->add_option("--pods", o->pods, "openb pod list")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", o->json, "print JSON instead of the table");
  cmd->add_option("--out", o->out, "folder to write the profile_*.csv files into");
  cmd->add_flag("--predict", o->predict, "also evaluate job duration and energy prediction");
  cmd->add_option("--train-share", o->train_share, "--predict: share of jobs to train on")
      ->capture_default_str();
  cmd->add_option("--min-support", o->min_support,
                  "--predict: jobs a group needs before its quantiles are used")
      ->capture_default_str();
  cmd->add_option("--power-model", o->power_model, "--predict: JSON power model for energy")
      ->check(CLI::ExistingFile);
  cmd->add_option("--energy-gpu", o->energy_gpu,
                  "--predict: GPU model charged to jobs without a model constraint")
      ->capture_default_str();
  return [o] { return run_profile(*o); };
}

}  // namespace greensched::app
