// The shared command-line conventions (cli_conventions.hpp).
#include "cli_conventions.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "command_util.hpp"
#include "greensched/core/duration.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/trace/csv.hpp"

#ifndef GREENSCHED_SOURCE_DATA_DIR
#define GREENSCHED_SOURCE_DATA_DIR "../shared/data"
#endif
#ifndef GREENSCHED_INSTALL_DATA_DIR
#define GREENSCHED_INSTALL_DATA_DIR "share/greensched/data"
#endif

namespace greensched::app {

Result<std::vector<uint64_t>> parse_seeds(std::string_view text) {
  auto seeds = sim::parse_seed_list(text);
  if (!seeds.ok()) return Error{"--" + seeds.error()};  // "--seeds: '9-3' is not ..."
  if (seeds.value().empty()) return Error{"--seeds: give at least one seed"};
  return seeds.value();
}

Result<uint64_t> parse_one_seed(std::string_view text) {
  auto seeds = parse_seeds(text);
  if (!seeds.ok()) return seeds.status().error();
  if (seeds.value().size() != 1) {
    return Error{fmt::format("--seeds: this command runs with one seed, got {} ('{}')",
                             seeds.value().size(), text)};
  }
  return seeds.value().front();
}

CLI::Option* add_seeds_option(CLI::App* cmd, std::string& seeds, const std::string& help,
                              bool one_seed) {
  const std::string text =
      one_seed ? help + " (one seed)" : help + ": a list and/or ranges, e.g. 42-51 or 1,5,7-9";
  CLI::Option* option = cmd->add_option("--seeds", seeds, text)->capture_default_str();
  add_deprecated_alias(cmd, "--seed", "--seeds", seeds);
  return option;
}

Result<std::vector<int64_t>> parse_power_down_idle(std::string_view text) {
  std::vector<int64_t> out;
  for (std::string_view part : sim::split_commas(text)) {
    if (part == "off") {
      out.push_back(-1);
      continue;
    }
    const auto v = trace::parse_int(part);
    if (!v || *v < 0) {
      return Error{fmt::format("--power-down-idle: '{}' is not 'off' or seconds >= 0", part)};
    }
    out.push_back(*v);
  }
  return out;
}

namespace {

std::string unit_name(double bare_unit_s) {
  if (bare_unit_s == 3600) return "hours";
  if (bare_unit_s == 60) return "minutes";
  if (bare_unit_s == 86400) return "days";
  return "seconds";
}

// One duration in bare units, as the option's variable reads it.
Result<std::string> to_bare(std::string_view item, const DurationOption& spec) {
  if (spec.allow_off && item == "off") return std::string(item);
  auto seconds = parse_duration(item, spec.bare_unit_s);
  if (!seconds.ok() && spec.allow_off) {
    return Error{fmt::format("'{}' is not 'off' or a duration (e.g. 30m, 1h, 1800)", item)};
  }
  if (!seconds.ok()) return seconds.status().error();
  const double bare = seconds.value() / spec.bare_unit_s;
  if (spec.whole && bare != std::floor(bare)) {
    return Error{
        fmt::format("'{}' is not a whole number of {}", item, unit_name(spec.bare_unit_s))};
  }
  return fmt::format("{}", bare);
}

}  // namespace

CLI::Option* as_duration(CLI::Option* option, DurationOption spec) {
  option->transform(CLI::Validator(
      [spec](std::string& text) {
        std::string out;
        for (std::string_view item :
             spec.list ? sim::split_commas(text) : std::vector<std::string_view>{text}) {
          auto bare = to_bare(item, spec);
          if (!bare.ok()) return bare.error();  // CLI11 puts the option's name before it
          out += (out.empty() ? "" : ",") + bare.value();
        }
        text = out;
        return std::string();
      },
      ""));
  option->type_name(spec.list ? (spec.allow_off ? "off|DURATION,..." : "DURATION,...")
                              : "DURATION");
  // The default, in units: every item of a list, "off" kept.
  const std::string given_default = option->get_default_str();
  if (!given_default.empty()) {
    std::string shown;
    for (std::string_view item : sim::split_commas(given_default)) {
      const auto seconds = parse_duration(item, spec.bare_unit_s);
      shown += (shown.empty() ? "" : ",") +
               (seconds.ok() ? format_duration(seconds.value()) : std::string(item));
    }
    option->default_str(shown);
  }
  option->description(
      option->get_description() +
      fmt::format(" (e.g. 30m or 1h30m; a bare number is {})", unit_name(spec.bare_unit_s)));
  return option;
}

std::string policy_names() {
  std::string names;
  for (const policy::PolicyInfo& p : policy::policy_catalog()) {
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  for (const auto& [name, summary] : policy::registered_policy_factories()) {
    names += ", " + name + (name == "learned" ? "=MODEL.json" : "");
  }
  return names;
}

void deprecation_note(const std::string& command, const std::string& what,
                      const std::string& instead) {
  fmt::print(stderr, "greensched {}: {} is deprecated; {}\n", command, what,
             instead.rfind("--", 0) == 0 ? "pass " + instead : instead);
}

void add_deprecated_flag_alias(CLI::App* cmd, const std::string& old_name,
                               const std::string& new_name, bool& variable) {
  const std::string command = cmd->get_name();
  cmd->add_flag(old_name, variable)
      ->group("")
      ->each([command, old_name, new_name](const std::string&) {
        deprecation_note(command, old_name, new_name);
      });
}

OutFile resolve_out_file(const std::string& out, const std::string& name,
                         std::string_view old_suffix) {
  if (out.size() > old_suffix.size() && out.ends_with(old_suffix) &&
      !std::filesystem::is_directory(out)) {
    deprecation_note(command_name(), "--out FILE",
                     fmt::format("pass a folder (the file written is FOLDER/{})", name));
    return OutFile{out, true};
  }
  return OutFile{(std::filesystem::path(out) / name).string(), false};
}

Result<OutFile> create_out_file(const std::string& out, const std::string& name,
                                std::string_view old_suffix) {
  OutFile file = resolve_out_file(out, name, old_suffix);
  const std::filesystem::path folder = std::filesystem::path(file.path).parent_path();
  if (!folder.empty()) {
    if (Status s = write_text_files(folder.string(), {}); !s.ok()) return s.error();
  }
  return file;
}

int parse_error_exit(CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
  // The command it was for: the first argument that names one.
  for (int i = 1; i < argc && command_name().empty(); ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("-")) continue;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == arg) command_name() = sub->get_name();
    }
    break;
  }
  std::string message;
  for (char c : std::string(error.what())) {
    if (c == '\n') {
      message += "; ";
    } else {
      message += c;
    }
  }
  while (!message.empty() && (message.back() == ' ' || message.back() == ';')) message.pop_back();
  if (message.find("does not exist") != std::string::npos) return fail(message, kExitInput);
  const std::string& command = command_name();
  return fail(
      fmt::format("{} (see greensched {}{}--help)", message, command, command.empty() ? "" : " "),
      kExitUsage);
}

CLI::Option* add_data_dir_option(CLI::App* cmd, std::string& dir) {
  dir = default_data_dir();
  return cmd->add_option("--data-dir", dir, kDataDirHelp)
      ->check(CLI::Validator(
          [](std::string& given) {
            std::error_code ec;
            if (std::filesystem::is_directory(given, ec)) return std::string();
            return fmt::format(
                "Directory does not exist: {} (from {}); give the folder that holds the shared "
                "data (carbon/, energy/, openb/), or set $GREENSCHED_DATA to it and leave "
                "--data-dir out",
                given, std::filesystem::current_path(ec).string());
          },
          "DIR"));
}

std::string sweep_description(const CLI::App& cmd) {
  std::string description;
  std::istringstream config(cmd.config_to_str(false, false));
  for (std::string line; std::getline(config, line);) {
    const std::string key = line.substr(0, line.find('='));
    if (key != "shard" && key != "out" && key != "jobs" && key != "quiet" && key != "json" &&
        key != "record") {
      description += line + "\n";
    }
  }
  return description;
}

std::string default_data_dir() {
  if (const char* env = std::getenv("GREENSCHED_DATA"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.parent_path().filename() == "bin") {
    const std::filesystem::path installed =
        exe.parent_path().parent_path() / GREENSCHED_INSTALL_DATA_DIR;
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return GREENSCHED_SOURCE_DATA_DIR;
}

}  // namespace greensched::app
