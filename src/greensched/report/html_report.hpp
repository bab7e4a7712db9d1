// One self-contained HTML page (inline SVG charts, inline CSS, no external resources) made
// from whatever a greensched run wrote into a results directory. A section appears only for
// the files present:
//   simulate (inflation): curves.csv, summary.csv (first column `policy`, alloc columns),
//                         occupancy.csv;
//   simulate (replay):    timeline.csv (first column `policy`), summary.csv (with `queue`);
//   multi:                summary.csv and timeline.csv (first column `agent`);
//   decision records:     --record FILE or decisions.jsonl: the last N failed pods, explained.
// A malformed file stops the report with "file:line: reason". The same inputs give a
// byte-identical page.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/explain/narrator.hpp"

namespace greensched::report {

struct HtmlReportOptions {
  std::string in_dir;
  std::string title = "greensched report";
  int failed = 10;     // failed pods to explain (the first ones in the record file)
  int decisions = 5;   // fleet decisions that moved or deferred a job, to tell (the first)
  std::string record;  // decision records (JSON Lines); empty: in_dir/decisions.jsonl if any
  // A narrator (its url empty: none): each explained failed pod gets its narration under the
  // words once the guard has accepted it. Without one the page is as it was.
  explain::NarratorConfig narrator;
  explain::NarratorInfo narrator_info;
  // Called after each narrated decision (a narrator's reply takes seconds): for a progress bar.
  std::function<void(std::size_t done, std::size_t total, std::string_view what)> progress;
};

struct HtmlReport {
  std::string html;
  std::vector<std::string> figures;  // ids of the charts and tables, in page order
  std::vector<std::string> inputs;   // the files read
  std::vector<std::string> notes;    // the narrator's: errors, refusals (one line each)
};

Result<HtmlReport> build_html_report(const HtmlReportOptions& options);

}  // namespace greensched::report
