// Compares runs of one kind (results folders of `simulate`, `simulate --mode replay` or
// `multi`, each with its summary.csv): the same metrics side by side, rows matched by their
// key columns, with each later run's difference from the first (absolute and %).
//
// Rows are matched by the kind's key columns (simulate: policy and seed; replay: policy,
// seed, queue, GPU power rule, idle sleep, wake delay and load; multi: agent, controller,
// load and slack). A key column that holds one value in every run is a setting of the run,
// not a row's name, and is left out of the match, so that two runs made with different
// options still pair their rows. Without per_seed, rows that differ only by seed are
// averaged (the mean over seeds, as the report's tables). A row that is not in every run is
// kept, with no value where it is missing.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::report {

struct CompareOptions {
  std::vector<std::string> dirs;     // two or more results folders; the first is the baseline
  std::vector<std::string> metrics;  // summary.csv columns; empty: every metric of the kind
  bool per_seed = false;             // match seed by seed instead of averaging over seeds
};

struct CompareRun {
  std::string dir;
  std::string label;     // A, B, C, ...
  std::size_t rows = 0;  // rows of its summary.csv
  std::string seeds;     // the seeds it ran ("42-43", "42,44"), "" when it has none
};

struct CompareRow {
  std::vector<std::string> key;  // values of Comparison::keys
  std::string metric;
  std::vector<double> values;         // per run; NaN: no such row (or no value) in that run
  std::vector<std::size_t> averaged;  // per run: summary.csv rows behind the value
};

struct Comparison {
  std::string kind;  // "simulate", "replay" or "multi"
  std::vector<CompareRun> runs;
  std::vector<std::string> keys;     // the columns rows are matched by
  std::vector<std::string> metrics;  // as CompareOptions::metrics lists them, else file order
  std::vector<int> decimals;         // per metric: the most decimals its cells were written with
  std::vector<CompareRow> rows;      // keys in order of first appearance, then metrics
  // Settings with one value in each run that differ between runs (e.g. tune, queue): the
  // column and its value in each run.
  std::vector<std::pair<std::string, std::vector<std::string>>> settings;
  bool seeds_averaged = false;
  std::size_t partial_keys = 0;  // keys missing from at least one run
};

Result<Comparison> compare_runs(const CompareOptions& options);

// Run r against the first: r's value minus the first's, and that as a percentage of the
// first's magnitude (NaN where the first is 0 or either value is missing).
double compare_delta(const CompareRow& row, std::size_t r);
double compare_delta_pct(const CompareRow& row, std::size_t r);

// The table for a terminal (what `greensched compare` prints).
std::string compare_text(const Comparison& c);
// One line per key, metric and run: the key columns, metric, run, dir, value, delta,
// delta_pct (empty where there is none). Numbers in full precision.
std::string compare_csv(const Comparison& c);
// The same as JSON: {"kind", "keys", "seeds_averaged", "runs": [...], "rows": [...]}.
std::string compare_json(const Comparison& c);
// A self-contained HTML page: a bar chart per metric (one colour per run) and the table.
std::string compare_html(const Comparison& c, const std::string& title);

}  // namespace greensched::report
