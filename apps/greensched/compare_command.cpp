// greensched compare: the same metrics of two or more results folders of one kind (simulate,
// simulate --mode replay, or multi) side by side, with each run's difference from the first;
// a table on stdout (or JSON), and with --out a page of charts and a CSV.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/report/compare.hpp"

namespace greensched::app {
namespace {

struct CompareCliOptions {
  std::vector<std::string> dirs;
  std::string out;
  std::vector<std::string> metrics;
  bool per_seed = false;
  bool json = false;
  std::string title = "greensched compare";
};

int run_compare(const CompareCliOptions& o) {
  report::CompareOptions options;
  options.dirs = o.dirs;
  options.metrics = o.metrics;
  options.per_seed = o.per_seed;
  auto compared = report::compare_runs(options);
  if (!compared.ok()) return fail(compared);
  const report::Comparison& c = compared.value();
  if (!o.out.empty()) {
    namespace fs = std::filesystem;
    const std::vector<std::pair<std::string, std::string>> files = {
        {"compare.html", report::compare_html(c, o.title)},
        {"compare.csv", report::compare_csv(c)}};
    if (Status s = write_text_files(o.out, files); !s.ok()) return fail(s);
    if (!o.json) {
      fmt::print("wrote {} and {}\n\n", (fs::path(o.out) / "compare.html").string(),
                 (fs::path(o.out) / "compare.csv").string());
    }
  }
  fmt::print("{}", o.json ? report::compare_json(c) : report::compare_text(c));
  return 0;
}

}  // namespace

Action add_compare_command(CLI::App& app) {
  auto opts = std::make_shared<CompareCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "compare the same metrics across results folders, with deltas against the first");
  cmd->footer(
      "Reads summary.csv in each folder (written by simulate, simulate --mode replay or multi;\n"
      "all of one kind). Rows are matched by their key columns (policy or agent; queue, GPU\n"
      "power rule, sleep, load, slack, controller where they differ inside a run); rows that\n"
      "differ only by seed are averaged unless --per-seed. Each later run is shown minus the\n"
      "first, and as a percentage of it.\n\n"
      "Examples:\n"
      "  greensched simulate --policy fgd,bestfit --seeds 42-43 --out a/\n"
      "  greensched simulate --policy fgd,bestfit --seeds 42-43 --tune 1.1 --out b/\n"
      "  greensched compare a/ b/\n"
      "  greensched compare a/ b/ --metrics alloc_gpu_pct_at_100,pods_failed --out cmp/\n"
      "      (cmp/compare.html: charts and the table; cmp/compare.csv: every value)");
  cmd->add_option("dirs", opts->dirs, "results folders; the first is the baseline")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--out", opts->out, "folder to write compare.html and compare.csv into");
  cmd->add_option("--metrics", opts->metrics,
                  "summary.csv columns to compare, comma-separated (default: every metric)")
      ->delimiter(',');
  cmd->add_flag("--per-seed", opts->per_seed, "match rows seed by seed instead of averaging");
  cmd->add_flag("--json", opts->json, "print the comparison as JSON instead of the table");
  cmd->add_option("--title", opts->title, "title of compare.html")->capture_default_str();
  return [opts] { return run_compare(*opts); };
}

}  // namespace greensched::app
