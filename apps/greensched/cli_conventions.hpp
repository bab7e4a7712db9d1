// The conventions every greensched command shares, in one place so that they cannot drift
// apart: --seeds lists, --power-down-idle values, --out folders, the --tune default, where
// data paths start, and the deprecated spellings that keep working for one release.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "greensched/core/status.hpp"

namespace greensched::app {

// The inflation every run uses unless --tune says otherwise: arrivals up to 130 % of the
// cluster's GPU capacity, the FGD paper's protocol (allocation read at 90, 100 and 130 %).
inline constexpr double kDefaultTune = 1.3;
inline constexpr const char* kDefaultSeeds = "42";

// "42-51", "1,5,7-9" -> the seeds, in order. An error names --seeds.
Result<std::vector<uint64_t>> parse_seeds(std::string_view text);

// For a command that runs with one seed: that seed, or an error saying so.
Result<uint64_t> parse_one_seed(std::string_view text);

// Registers --seeds on `cmd` (a list, or one seed where `one_seed`) and its deprecated
// spelling --seed, both into `seeds`.
CLI::Option* add_seeds_option(CLI::App* cmd, std::string& seeds, const std::string& help,
                              bool one_seed);

// --power-down-idle: a comma list of "off" or whole seconds >= 0; off is -1.
Result<std::vector<int64_t>> parse_power_down_idle(std::string_view text);

// A time option: it takes durations with units (12h, 30m, 1h30m, 90s, 2d; core/duration.hpp),
// or with `list` a comma list of them ("off" passed through where `allow_off`). Each is
// rewritten, before the option's own checks, into a bare number in `bare_unit_s`, the unit the
// option always took, so a bare number still means what it meant, and the variable behind it
// keeps its type. Shows DURATION as the metavar, the default with its unit, and says in the
// help what a bare number is.
struct DurationOption {
  double bare_unit_s = 1;  // 1: seconds, 3600: hours
  bool whole = true;       // the option holds whole bare units (an integer variable)
  bool list = false;
  bool allow_off = false;
};
CLI::Option* as_duration(CLI::Option* option, DurationOption spec);

// Every policy a --policy option accepts, for its help: the catalogue's and the registered
// factories' ("fgd, pwr, ..., learned=MODEL.json").
std::string policy_names();

// Registers a hidden, deprecated spelling `old_name` of `new_name` that stores into the same
// variable; using it prints "greensched CMD: OLD is deprecated; pass NEW" on stderr.
template <typename T>
void add_deprecated_alias(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                          T& variable);

// --out DIR: the file `name` inside DIR (DIR is created when written). An --out ending in
// `old_suffix` is the deprecated file spelling: used as the file, with a note on stderr.
struct OutFile {
  std::string path;     // the file to write
  bool legacy = false;  // --out named the file itself
};
OutFile resolve_out_file(const std::string& out, const std::string& name,
                         std::string_view old_suffix);
// resolve_out_file, then creates the folder the file goes in (the --out folder, or the old
// form's parent folder); fails when it cannot be created.
Result<OutFile> create_out_file(const std::string& out, const std::string& name,
                                std::string_view old_suffix);

// What the shards of one sweep (--shard I/N) must share, for their plan's fingerprint: every
// option given on `cmd` (CLI11's config form, a name=value line each) but those that only say
// where results go (out, record), how they are shown (json, quiet), how many cores run them
// (jobs) and which shard runs (shard).
std::string sweep_description(const CLI::App& cmd);

// Where relative data paths (a fleet file's carbon, price and weather series) start when
// --data-dir is not given: $GREENSCHED_DATA; else, for an installed binary
// (PREFIX/bin/greensched), PREFIX/share/greensched/data; else the source tree's ../shared/data
// as it was at build time. Never the working directory.
std::string default_data_dir();

// The rule above in words, for --help.
inline constexpr const char* kDataDirHelp =
    "base of relative data paths in the fleet file (default: $GREENSCHED_DATA, else "
    "PREFIX/share/greensched/data for an installed binary, else the source tree's "
    "../shared/data; never the working directory)";

// Adds --data-dir to `cmd`, filling `dir`; `dir` holds default_data_dir() when it is not given.
CLI::Option* add_data_dir_option(CLI::App* cmd, std::string& dir);

// A command-line parse error ends like every other error: one line "greensched COMMAND: ..."
// and exit 2 (1 where a file or folder it names does not exist). --help and --version print
// and exit 0.
int parse_error_exit(CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

// Prints the deprecation note for `what` ("--seed", "--out FILE") in favour of `instead`.
void deprecation_note(const std::string& command, const std::string& what,
                      const std::string& instead);

// The same for a flag.
void add_deprecated_flag_alias(CLI::App* cmd, const std::string& old_name,
                               const std::string& new_name, bool& variable);

template <typename T>
void add_deprecated_alias(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                          T& variable) {
  const std::string command = cmd->get_name();
  cmd->add_option(old_name, variable)
      ->group("")  // hidden: not in --help, the man pages, completion or docs/CLI.md
      ->each([command, old_name, new_name](const std::string&) {
        deprecation_note(command, old_name, new_name);
      });
}

}  // namespace greensched::app
