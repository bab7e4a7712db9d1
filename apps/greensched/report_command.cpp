// greensched report: one self-contained HTML page of charts and tables from a results
// directory written by `simulate` or `multi`.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/report/html_report.hpp"
#include "narrator_options.hpp"
#include "progress.hpp"

namespace greensched::app {
namespace {

struct ReportCliOptions {
  std::string in;
  std::string out;
  std::string title = "greensched report";
  int failed = 10;
  int decisions = 5;
  std::string record;
  NarratorOptions narrator;
};

int run_report(const ReportCliOptions& o) {
  report::HtmlReportOptions options;
  options.in_dir = o.in;
  options.title = o.title;
  options.failed = o.failed;
  options.decisions = o.decisions;
  options.record = o.record;
  if (std::string why = narrator_usage_problem(o.narrator); !why.empty()) {
    return fail(why, kExitUsage);
  }
  const OpenNarrator narrator = open_narrator(o.narrator);
  options.narrator = narrator.config;
  options.narrator_info = narrator.info;
  // A narrated report asks the narrator once per decision, seconds each: a bar on a terminal.
  auto bar = std::make_shared<ProgressBar>(!narrator.config.url.empty() && stderr_is_terminal());
  options.progress = [bar](std::size_t done, std::size_t total, std::string_view what) {
    bar->update(done, total, fmt::format("narrating {}", what));
  };
  auto built = report::build_html_report(options);
  options.progress = nullptr;
  bar.reset();  // finishes its line before the notes
  if (!built.ok()) return fail(built);
  for (const std::string& note : built.value().notes) fmt::print(stderr, "note: {}\n", note);
  const std::string folder = o.out.empty() ? o.in : o.out;
  auto created = create_out_file(folder, "report.html", ".html");
  if (!created.ok()) return fail(created.status());
  const OutFile& out = created.value();
  if (Status s = write_text_file(out.path, built.value().html); !s.ok()) return fail(s);
  const auto& figures = built.value().figures;
  std::string list;
  for (const std::string& id : figures) list += (list.empty() ? "" : " ") + id;
  fmt::print("wrote {} ({:.0f} KB): {}\n", out.path,
             static_cast<double>(built.value().html.size()) / 1024.0, list);
  return 0;
}

}  // namespace

Action add_report_command(CLI::App& app) {
  auto opts = std::make_shared<ReportCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Write one self-contained HTML page of charts from a results folder");
  cmd->footer(
      "Reads whatever a run wrote into --in: curves.csv, summary.csv and occupancy.csv "
      "(simulate),\n"
      "timeline.csv and summary.csv (simulate --mode replay, or multi), and decision records\n"
      "(--record FILE, or decisions.jsonl in --in): the failed pods and the fleet decisions\n"
      "that moved or deferred a job, told as greensched explain tells them, beside their "
      "charts.\nThe page has inline SVG charts and loads nothing from the network.\n\n"
      "A narrator (--narrator-url, as for explain; docs/EXPLAIN.md) adds each told decision's\n"
      "narration under its words once the guard has checked it; without one, or with every\n"
      "narration refused, the page is the same.\n\n"
      "Examples:\n"
      "  greensched simulate --policy all --seeds 42-44 --out results/\n"
      "  greensched report --in results/                 # writes results/report.html\n"
      "  greensched multi --out multi/ && greensched report --in multi/ --out pages/multi/");
  cmd->add_option("--in", opts->in, "results directory written by simulate or multi")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", opts->out,
                  "folder to write report.html into; created if absent (default: the --in "
                  "folder)");
  cmd->add_option("--title", opts->title, "page title")->capture_default_str();
  cmd->add_option("--failed", opts->failed,
                  "failed pods to explain (the first N in the records, as explain --failed N does)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--decisions", opts->decisions,
                  "fleet decisions to tell, of those that sent a job away from home or deferred "
                  "it (the first N in the records, multi --record or a dispatch journal)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_narrator_options(cmd, opts->narrator);
  cmd->add_option("--record", opts->record,
                  "decision records (JSON Lines) written by simulate --record (default: "
                  "decisions.jsonl in --in when present)")
      ->check(CLI::ExistingFile);
  return [opts] { return run_report(*opts); };
}

}  // namespace greensched::app
