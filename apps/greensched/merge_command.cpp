// greensched merge: the shard folders of a sweep run with --shard I/N (simulate, both modes, and
// multi) put back together into the files one machine would have written, byte for byte.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/report/shard_files.hpp"

namespace greensched::app {
namespace {

struct MergeCliOptions {
  std::vector<std::string> dirs;
  std::string out;
  bool quiet = false;
};

int run_merge(const MergeCliOptions& o) {
  auto names = report::merge_shards(o.dirs, o.out);
  if (!names.ok()) return fail(names);
  if (!o.quiet) {
    fmt::print(stderr, "merged {} shard(s) into {}: {}\n", o.dirs.size(), o.out,
               fmt::join(names.value(), ", "));
  }
  return 0;
}

}  // namespace

Action add_merge_command(CLI::App& app) {
  auto opts = std::make_shared<MergeCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "put the shard folders of a sweep run with --shard I/N back together");
  cmd->footer(
      "Each shard folder holds shard.json (written by simulate or multi --shard I/N): the\n"
      "plan's fingerprint, the shard's index and count and the files it wrote. Every shard of\n"
      "one sweep must be given exactly once, in any order; a missing or duplicate shard, or a\n"
      "shard of another sweep, is an error that names it. The merged files equal those of the\n"
      "sweep run on one machine, byte for byte, but for inflation summary.csv's wall_seconds (the\n"
      "time each machine measured): simulate's summary.csv, curves.csv and occupancy.csv;\n"
      "replay's summary.csv and timeline.csv; multi's summary.csv, timeline.csv,\n"
      "energy_timeline.csv and, with --decisions, decisions.csv (in OUT/seed-N with several\n"
      "seeds). --record\n"
      "files are not merged: concatenate the shards' files in shard order.\n\n"
      "Example:\n"
      "  for i in 0 1 2; do greensched simulate --mode replay --load 50 --days 1 \\\n"
      "      --policy fgd,bestfit --seeds 42-45 --shard $i/3 --out shard-$i; done\n"
      "  greensched merge shard-0 shard-1 shard-2 --out results/");
  cmd->add_option("dirs", opts->dirs, "shard folders, one per shard")->required()->expected(1, -1);
  cmd->add_option("--out", opts->out, "folder to write the merged files into; created if absent")
      ->required();
  cmd->add_flag("--quiet,-q", opts->quiet, "no summary line on stderr");
  return [opts] { return run_merge(*opts); };
}

}  // namespace greensched::app
