// greensched calibrate: fit the power model's idle and max watts per GPU model and CPU to
// readings taken by `greensched monitor --jsonl`, and write a model --power-model accepts.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/json_fields.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/monitor/calibration.hpp"
#include "greensched/monitor/sample_json.hpp"

namespace greensched::power {
extern const char kBuiltinPowerModelJson[];
}

namespace greensched::app {
namespace {

struct CalibrateCliOptions {
  std::vector<std::string> samples;
  std::string out;
  std::string base;
  std::vector<std::string> maps;
  std::string cpu_key;
  int64_t min_samples = 10;
  bool json = false;
};

std::vector<std::string> keys_of(const nlohmann::json& root, const char* table) {
  std::vector<std::string> keys;
  if (root.contains(table) && root[table].is_object()) {
    for (const auto& [k, v] : root[table].items()) keys.push_back(k);
  }
  return keys;
}

int run_calibrate(const CalibrateCliOptions& o) {
  std::vector<monitor::NodeSample> samples;
  for (const std::string& path : o.samples) {
    auto text = read_file(path);
    if (!text.ok()) return fail(text);
    auto read = monitor::read_samples_jsonl(text.value(), path);
    if (!read.ok()) return fail(read);
    for (auto& s : read.value()) samples.push_back(std::move(s));
  }
  std::string base_text = power::kBuiltinPowerModelJson;
  std::string base_source = "built-in data/power-model.json";
  if (!o.base.empty()) {
    auto text = read_file(o.base);
    if (!text.ok()) return fail(text);
    base_text = text.value();
    base_source = o.base;
  }
  auto parsed_base = parse_json_text(base_text, base_source);
  if (!parsed_base.ok()) return fail(parsed_base);
  const nlohmann::json& base = parsed_base.value();

  monitor::CalibrationOptions opts;
  opts.cpu_key = o.cpu_key;
  opts.min_samples = o.min_samples;
  for (const std::string& m : o.maps) {
    const std::size_t eq = m.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
      return fail(fmt::format("--map '{}': expected 'NVML NAME=KEY'", m), kExitUsage);
    }
    opts.gpu_keys[m.substr(0, eq)] = m.substr(eq + 1);
  }
  const std::vector<std::string> gpu_keys = keys_of(base, "gpus");
  const std::vector<std::string> cpu_keys = keys_of(base, "cpus");
  const monitor::Calibration c = monitor::calibrate(samples, gpu_keys, cpu_keys, opts);

  if (o.json) {
    std::cout << monitor::calibration_json(c).dump(2) << "\n";
  } else {
    std::cout << monitor::calibration_table(c);
  }
  std::cout.flush();
  if (c.fits.empty()) return fail("nothing could be fitted; no model written");
  auto model = monitor::calibrated_model_json(c, base_text, base_source);
  if (!model.ok()) return fail(model);
  auto created = create_out_file(o.out, "power-model.json", ".json");
  if (!created.ok()) return fail(created.status());
  const OutFile& out = created.value();
  if (Status s = write_text_file(out.path, model.value()); !s.ok()) return fail(s);
  fmt::print(stderr, "wrote {} (use it with --power-model {})\n", out.path, out.path);
  return 0;
}

}  // namespace

Action add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit the power model's watts to readings of greensched monitor");
  cmd->footer(
      "Fit idle and max watts per GPU model (power vs utilisation, least squares) and per CPU\n"
      "(RAPL package power vs utilisation) to readings of `greensched monitor --jsonl`; report\n"
      "R² and mean absolute error; write a power model (the schema of data/power-model.json)\n"
      "merged into --base for everything not measured.\n\n"
      "Example:\n"
      "  greensched monitor --interval 1s --jsonl monitor.jsonl --count 900   # under load\n"
      "  greensched calibrate --samples monitor.jsonl --out calibrated/\n"
      "  greensched simulate --power-model calibrated/power-model.json ...");
  cmd->add_option("--samples", o->samples, "JSON Lines file(s) written by greensched monitor")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", o->out,
                  "folder to write power-model.json (the fitted model) into; created if absent")
      ->required();
  cmd->add_option("--base", o->base, "power model to merge into (default: the built-in one)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--map", o->maps,
                  "NVML name to power-model key, e.g. --map 'NVIDIA H100 80GB HBM3=H100'");
  cmd->add_option("--cpu-key", o->cpu_key, "power-model key of the CPU (default: from its name)");
  cmd->add_option("--min-samples", o->min_samples, "readings needed to fit an entry")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print the fits as JSON");
  return [o] { return run_calibrate(*o); };
}

}  // namespace greensched::app
