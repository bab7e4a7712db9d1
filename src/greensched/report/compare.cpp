#include "greensched/report/compare.hpp"
#include "greensched/report/chart_facts.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/duration.hpp"
#include "greensched/report/column_label.hpp"
#include "greensched/report/csv_table.hpp"
#include "greensched/report/multi_writer.hpp"
#include "greensched/report/page.hpp"
#include "greensched/report/stat.hpp"

namespace greensched::report {
namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What a kind of summary.csv is matched by, and its columns that are settings, not metrics.
struct KindSpec {
  std::string kind;
  std::string describe;           // for messages
  std::vector<std::string> keys;  // candidate key columns; the first is always a key
  std::vector<std::string> settings;
};

const KindSpec* kind_of(const std::vector<std::string>& header) {
  static const KindSpec kSimulate{
      "simulate", "simulate", {"policy", "seed"}, {"tune", "wall_seconds"}};
  static const KindSpec kReplay{"replay",
                                "simulate --mode replay",
                                {"policy", "seed", "queue", "gpu_power", "power_down_idle_s",
                                 "wake_delay_s", "target_load_pct"},
                                {"window_s", "window_start_s", "wall_seconds"}};
  static const KindSpec kMulti{"multi",
                               "multi",
                               {"agent", "controller", "target_load_pct", "slack_h"},
                               {"window_s", "wall_seconds"}};
  if (header.empty()) return nullptr;
  if (header[0] == "agent") return &kMulti;
  if (header[0] != "policy") return nullptr;
  if (std::find(header.begin(), header.end(), "queue") != header.end()) return &kReplay;
  return &kSimulate;
}

struct RunTable {
  std::string dir, path;
  const KindSpec* spec = nullptr;
  Table table;
};

Result<RunTable> read_run(const std::string& dir) {
  RunTable run;
  run.dir = dir;
  run.path = (fs::path(dir) / "summary.csv").string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{fmt::format("{}: not a directory", dir)};
  if (!fs::is_regular_file(run.path, ec)) {
    return Error{fmt::format(
        "{}: no such file (compare reads the summary.csv that simulate, simulate --mode replay "
        "and multi write into their --out folder)",
        run.path)};
  }
  const auto all_text = [](const std::vector<std::string>& header) {
    TableSpec spec;
    for (const std::string& h : header) spec.columns.push_back(text_col(h, false));
    return spec;
  };
  auto t = read_table(run.path, all_text);
  if (!t.ok()) return Error{t.error()};
  run.table = std::move(t.value());
  run.spec = kind_of(run.table.header);
  if (run.spec == nullptr) {
    return Error{fmt::format(
        "{}:1: not a summary.csv of simulate, simulate --mode replay or multi (its first column "
        "is '{}', expected 'policy' or 'agent')",
        run.path, run.table.header.empty() ? "" : run.table.header[0])};
  }
  if (run.table.rows == 0) return Error{fmt::format("{}: no rows", run.path)};
  return run;
}

// A number cell: empty is no value; anything else must be a finite number.
bool parse_number(const std::string& text, double& out) {
  if (text.empty()) {
    out = kNaN;
    return true;
  }
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

int decimals_of(const std::string& text) {
  const auto dot = text.find('.');
  if (dot == std::string::npos) return 0;
  std::size_t n = 0;
  while (dot + 1 + n < text.size() && std::isdigit(static_cast<unsigned char>(text[dot + 1 + n]))) {
    ++n;
  }
  return static_cast<int>(std::min<std::size_t>(n, 6));
}

bool is_key_candidate(const KindSpec& spec, const std::string& column) {
  return std::find(spec.keys.begin(), spec.keys.end(), column) != spec.keys.end();
}

bool is_setting(const KindSpec& spec, const std::string& column) {
  return std::find(spec.settings.begin(), spec.settings.end(), column) != spec.settings.end();
}

// Numeric columns of the first run that are neither keys nor settings, in file order.
std::vector<std::string> default_metrics(const RunTable& run) {
  std::vector<std::string> metrics;
  for (const std::string& h : run.table.header) {
    if (is_key_candidate(*run.spec, h) || is_setting(*run.spec, h)) continue;
    const auto& cells = run.table.text(h);
    bool numeric = true;
    double v = 0;
    for (const std::string& c : cells) numeric = numeric && parse_number(c, v);
    if (numeric) metrics.push_back(h);
  }
  return metrics;
}

Status choose_metrics(const CompareOptions& options, const RunTable& first,
                      std::vector<std::string>& metrics) {
  const std::vector<std::string> all = default_metrics(first);
  if (options.metrics.empty()) {
    metrics = all;
    return Status::Ok();
  }
  for (const std::string& m : options.metrics) {
    if (std::find(all.begin(), all.end(), m) == all.end()) {
      std::string names;
      for (const std::string& a : all) names += (names.empty() ? "" : ", ") + a;
      return Error{fmt::format("{}: no metric '{}' (its metrics: {})", first.path, m, names)};
    }
    if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
  }
  return Status::Ok();
}

// Key candidates present in the file that name rows: those that vary inside some run.
std::vector<std::string> choose_keys(const std::vector<RunTable>& runs, bool per_seed) {
  const KindSpec& spec = *runs[0].spec;
  std::vector<std::string> keys;
  for (std::size_t k = 0; k < spec.keys.size(); ++k) {
    const std::string& c = spec.keys[k];
    if (c == "seed" && !per_seed) continue;
    bool varies = k == 0;
    for (const RunTable& run : runs) {
      if (varies || !run.table.has(c)) continue;
      const auto& v = run.table.text(c);
      varies = std::set<std::string>(v.begin(), v.end()).size() > 1;
    }
    const bool in_any =
        std::any_of(runs.begin(), runs.end(), [&](const RunTable& r) { return r.table.has(c); });
    if (varies && in_any) keys.push_back(c);
  }
  return keys;
}

// Columns other than the keys, seed and run time with one value in each run, which is not
// the same in all of them: what the runs were made with differently.
std::vector<std::pair<std::string, std::vector<std::string>>> differing_settings(
    const std::vector<RunTable>& runs, const std::vector<std::string>& keys) {
  const KindSpec& spec = *runs[0].spec;
  std::vector<std::string> candidates = spec.keys;
  candidates.insert(candidates.end(), spec.settings.begin(), spec.settings.end());
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const std::string& c : candidates) {
    if (c == "seed" || c == "wall_seconds" ||
        std::find(keys.begin(), keys.end(), c) != keys.end()) {
      continue;
    }
    std::vector<std::string> values;
    for (const RunTable& run : runs) {
      if (!run.table.has(c)) break;
      const auto& v = run.table.text(c);
      if (std::set<std::string>(v.begin(), v.end()).size() != 1) break;
      values.push_back(v[0]);
    }
    if (values.size() == runs.size() &&
        std::set<std::string>(values.begin(), values.end()).size() > 1) {
      out.emplace_back(c, std::move(values));
    }
  }
  return out;
}

// "42-44,50": the distinct whole seeds of a run in order, runs of consecutive ones joined.
std::string seed_list(const Table& t) {
  if (!t.has("seed")) return "";
  std::set<long long> seeds;
  for (const std::string& s : t.text("seed")) {
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end == s.c_str() + s.size() && !s.empty()) seeds.insert(v);
  }
  std::string out;
  for (auto it = seeds.begin(); it != seeds.end();) {
    const long long lo = *it;
    long long hi = lo;
    for (++it; it != seeds.end() && *it == hi + 1; ++it) hi = *it;
    if (!out.empty()) out += ',';
    out += hi == lo ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi);
  }
  return out;
}

std::string run_label(std::size_t i) {
  std::string label;
  for (std::size_t n = i + 1; n > 0; n = (n - 1) / 26) {
    label.insert(label.begin(), static_cast<char>('A' + (n - 1) % 26));
  }
  return label;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// The text of a value with `decimals` decimals; "-" (or "" in CSV) for no value.
std::string fixed(double v, int decimals, bool sign = false) {
  if (!std::isfinite(v)) return "-";
  if (v == 0) v = 0;  // no "-0.00"
  std::string s = sign ? fmt::format("{:+.{}f}", v, decimals) : fmt::format("{:.{}f}", v, decimals);
  if (sign && (s == fmt::format("-{:.{}f}", 0.0, decimals))) s[0] = '+';
  return s;
}

// Decimals shown for metric m: as written in summary.csv; one more for means over seeds
// (a mean of two counts ends in .5), up to 4.
int shown_decimals(const Comparison& c, std::size_t m) {
  return c.seeds_averaged && c.decimals[m] < 4 ? c.decimals[m] + 1 : c.decimals[m];
}

std::string full(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string();
}

// A setting or key value as a reader says it: a power-down of -1 is "never", durations carry
// units, a load of "" is the pod list's own rate. compare.csv and --json keep the raw text.
std::string readable(const std::string& column, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  const bool number = !value.empty() && end == value.c_str() + value.size();
  if (column == "power_down_idle_s") {
    return !number ? value : v < 0 ? "never" : "after " + format_duration(v);
  }
  if (column == "wake_delay_s" || column == "window_s") {
    return number ? format_duration(v) : value;
  }
  if (column == "target_load_pct") return value.empty() ? "own rate" : value + " %";
  if (column == "slack_h") return number ? format_duration(v * 3600) : value;
  return value;
}

// The unit of a summary.csv column, from the suffix every such column ends in: energy_kwh is
// kWh, p99_delay_s_be is s, pods_failed a count; "" where the name says none.
std::string unit_of(const std::string& column) {
  const auto has = [&](std::string_view part) { return column.find(part) != std::string::npos; };
  const auto ends = [&](std::string_view tail) { return column.ends_with(tail); };
  if (has("_pct")) return "%";
  if (ends("_kwh")) return "kWh";
  if (ends("_kg")) return "kg";
  if (ends("_usd")) return "USD";
  if (ends("_watts") || has("_watts_")) return "W";
  if (has("gpu_milli")) return "milli-GPU";
  if (ends("_gb") || column.starts_with("gb_")) return "GB";
  if (ends("_seconds") || ends("_s") || has("_s_")) return "s";
  if (ends("_h") || has("_hours")) return "h";
  if (ends("_cycles")) return "cycles";
  if (column.starts_with("pods_") || column.starts_with("jobs") || ends("_violations") ||
      ends("_preemptions") || ends("wakeups") || ends("_pods") || column == "pods_total") {
    return "count";
  }
  return "";
}

// The distinct sites of a multi run, in order of first appearance in its timeline.csv ("" when
// it has none): two fleets compared are runs that differ.
std::string sites_of(const std::string& dir) {
  std::error_code ec;
  const std::string path = (fs::path(dir) / "timeline.csv").string();
  if (!fs::is_regular_file(path, ec)) return "";
  auto table = read_table(path, {text_col("site", false)});
  if (!table.ok() || !table.value().has("site")) return "";
  std::vector<std::string> sites;
  for (const std::string& s : table.value().text("site")) {
    if (std::find(sites.begin(), sites.end(), s) == sites.end()) sites.push_back(s);
  }
  return join(sites, ", ");
}

}  // namespace

Result<Comparison> compare_runs(const CompareOptions& options) {
  if (options.dirs.size() < 2) return Error{"compare needs two or more results folders"};
  std::vector<RunTable> runs;
  for (const std::string& dir : options.dirs) {
    auto run = read_run(dir);
    if (!run.ok()) return Error{run.error()};
    runs.push_back(std::move(run.value()));
    const RunTable& first = runs.front();
    const RunTable& last = runs.back();
    if (last.spec != first.spec) {
      return Error{fmt::format("{}: a {} summary, but {} is a {} summary: compare runs of one kind",
                               last.path, last.spec->describe, first.path, first.spec->describe)};
    }
  }
  Comparison c;
  c.kind = runs[0].spec->kind;
  if (Status s = choose_metrics(options, runs[0], c.metrics); !s.ok()) return s.error();
  c.keys = choose_keys(runs, options.per_seed);
  c.settings = differing_settings(runs, c.keys);
  if (c.kind == "multi") {
    std::vector<std::string> sites;
    for (const RunTable& run : runs) sites.push_back(sites_of(run.dir));
    if (std::set<std::string>(sites.begin(), sites.end()).size() > 1) {
      c.settings.emplace_back("sites", std::move(sites));
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    c.runs.push_back(
        CompareRun{runs[i].dir, run_label(i), runs[i].table.rows, seed_list(runs[i].table)});
  }
  c.decimals.assign(c.metrics.size(), 0);

  // Rows of each run grouped by key; keys in order of first appearance over the runs.
  std::vector<std::vector<std::string>> key_order;
  std::map<std::vector<std::string>, std::vector<std::vector<std::size_t>>> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Table& t = runs[i].table;
    for (std::size_t r = 0; r < t.rows; ++r) {
      std::vector<std::string> key;
      for (const std::string& k : c.keys) key.push_back(t.has(k) ? t.text(k)[r] : "");
      auto [it, inserted] = groups.try_emplace(key, runs.size());
      if (inserted) key_order.push_back(key);
      it->second[i].push_back(r);
      if (it->second[i].size() > 1) c.seeds_averaged = true;
    }
  }
  for (const auto& key : key_order) {
    const auto& per_run = groups.at(key);
    if (std::any_of(per_run.begin(), per_run.end(), [](const auto& g) { return g.empty(); })) {
      ++c.partial_keys;
    }
    for (std::size_t m = 0; m < c.metrics.size(); ++m) {
      CompareRow row;
      row.key = key;
      row.metric = c.metrics[m];
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const Table& t = runs[i].table;
        std::vector<double> values;
        if (t.has(row.metric)) {
          for (std::size_t r : per_run[i]) {
            const std::string& cell = t.text(row.metric)[r];
            double v = 0;
            if (!parse_number(cell, v)) {
              return Error{fmt::format("{}:{}: {} '{}' is not a number", runs[i].path, r + 2,
                                       row.metric, cell)};
            }
            c.decimals[m] = std::max(c.decimals[m], decimals_of(cell));
            values.push_back(v);
          }
        }
        row.values.push_back(stat_of(values).mean);
        row.averaged.push_back(per_run[i].size());
      }
      c.rows.push_back(std::move(row));
    }
  }
  // Shown to about four significant digits: 77736 kWh, not 77736.154829.
  for (std::size_t m = 0; m < c.metrics.size(); ++m) {
    double largest = 0;
    for (const CompareRow& row : c.rows) {
      if (row.metric != c.metrics[m]) continue;
      for (double v : row.values) {
        if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
      }
    }
    const int cap =
        largest >= 1 ? std::max(0, 3 - static_cast<int>(std::floor(std::log10(largest)))) : 4;
    c.decimals[m] = std::min(c.decimals[m], cap);
  }
  return c;
}

double compare_delta(const CompareRow& row, std::size_t r) {
  return row.values[r] - row.values[0];  // NaN when either is
}

double compare_delta_pct(const CompareRow& row, std::size_t r) {
  const double base = row.values[0];
  if (!std::isfinite(base) || base == 0) return kNaN;
  return 100.0 * compare_delta(row, r) / std::fabs(base);
}

std::string compare_text(const Comparison& c) {
  std::string out = fmt::format(
      "{} {} runs compared{}; rows matched by {}\n", c.runs.size(),
      c.kind == "replay" ? "simulate --mode replay" : c.kind,
      c.seeds_averaged ? ", means over seeds (--per-seed: seed by seed)" : "", join(c.keys, ", "));
  std::size_t dir_w = 0;
  for (const CompareRun& r : c.runs) dir_w = std::max(dir_w, r.dir.size());
  for (const CompareRun& r : c.runs) {
    out += fmt::format("  {}  {:<{}}  {} rows{}\n", r.label, r.dir, dir_w, r.rows,
                       r.seeds.empty() ? "" : ", seeds " + r.seeds);
  }
  for (const auto& [column, values] : c.settings) {
    std::string per_run;
    for (std::size_t i = 0; i < values.size(); ++i) {
      per_run +=
          fmt::format("{}{} {}", i ? ", " : "", c.runs[i].label, readable(column, values[i]));
    }
    out += fmt::format("runs differ in {}: {}\n", column, per_run);
  }
  std::vector<std::string> deltas;
  for (std::size_t i = 1; i < c.runs.size(); ++i) deltas.push_back(c.runs[i].label + "-A");
  out += fmt::format("{}: a run minus run A; %: that as a percentage of A\n\n", join(deltas, ", "));

  // Cells first, then column widths.
  std::vector<std::string> header = c.keys;
  header.push_back("metric");
  header.push_back("unit");
  for (const CompareRun& r : c.runs) header.push_back(r.label);
  for (std::size_t i = 1; i < c.runs.size(); ++i) {
    header.push_back(c.runs[i].label + "-A");
    header.push_back(c.runs[i].label + "-A %");
  }
  std::vector<std::vector<std::string>> lines{header};
  for (const CompareRow& row : c.rows) {
    const std::size_t m = static_cast<std::size_t>(
        std::find(c.metrics.begin(), c.metrics.end(), row.metric) - c.metrics.begin());
    const int d = shown_decimals(c, m);
    std::vector<std::string> line;
    for (std::size_t k = 0; k < c.keys.size(); ++k) line.push_back(readable(c.keys[k], row.key[k]));
    line.push_back(row.metric);
    line.push_back(unit_of(row.metric));
    for (double v : row.values) line.push_back(fixed(v, d));
    for (std::size_t i = 1; i < c.runs.size(); ++i) {
      line.push_back(fixed(compare_delta(row, i), d, true));
      const double pct = compare_delta_pct(row, i);
      line.push_back(std::isfinite(pct) ? fixed(pct, 2, true) + " %" : "-");
    }
    lines.push_back(std::move(line));
  }
  const std::size_t text_cols = c.keys.size() + 2;
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& line : lines) {
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  for (const auto& line : lines) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (i > 0) text += "  ";
      text += i < text_cols ? fmt::format("{:<{}}", line[i], width[i])
                            : fmt::format("{:>{}}", line[i], width[i]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  if (c.partial_keys > 0) {
    out += fmt::format("\n{} not in every run (- where missing)\n",
                       plural(c.partial_keys, "row", "rows"));
  }
  return out;
}

std::string compare_csv(const Comparison& c) {
  std::string out;
  for (const std::string& k : c.keys) out += csv_field(k) + ",";
  out += "metric,run,dir,value,delta,delta_pct\n";
  for (const CompareRow& row : c.rows) {
    std::string key;
    for (const std::string& k : row.key) key += csv_field(k) + ",";
    for (std::size_t i = 0; i < c.runs.size(); ++i) {
      out += fmt::format("{}{},{},{},{},{},{}\n", key, csv_field(row.metric), c.runs[i].label,
                         csv_field(c.runs[i].dir), full(row.values[i]),
                         i == 0 ? "" : full(compare_delta(row, i)),
                         i == 0 ? "" : full(compare_delta_pct(row, i)));
    }
  }
  return out;
}

std::string compare_json(const Comparison& c) {
  using json = nlohmann::ordered_json;
  const auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json j;
  j["kind"] = c.kind;
  j["keys"] = c.keys;
  j["metrics"] = c.metrics;
  j["seeds_averaged"] = c.seeds_averaged;
  j["settings"] = json::object();
  for (const auto& [column, values] : c.settings) j["settings"][column] = values;
  j["runs"] = json::array();
  for (const CompareRun& r : c.runs) {
    j["runs"].push_back(
        json{{"label", r.label}, {"dir", r.dir}, {"rows", r.rows}, {"seeds", r.seeds}});
  }
  j["rows"] = json::array();
  for (const CompareRow& row : c.rows) {
    json key = json::object();
    for (std::size_t k = 0; k < c.keys.size(); ++k) key[c.keys[k]] = row.key[k];
    json values = json::array(), delta = json::array(), pct = json::array();
    for (std::size_t i = 0; i < c.runs.size(); ++i) {
      values.push_back(number(row.values[i]));
      delta.push_back(i == 0 ? json(nullptr) : number(compare_delta(row, i)));
      pct.push_back(i == 0 ? json(nullptr) : number(compare_delta_pct(row, i)));
    }
    j["rows"].push_back(json{{"key", key},
                             {"metric", row.metric},
                             {"values", values},
                             {"delta", delta},
                             {"delta_pct", pct},
                             {"averaged", row.averaged}});
  }
  return j.dump(2) + "\n";
}

std::string compare_html(const Comparison& c, const std::string& title) {
  Page page;
  std::string runs_html;
  for (const CompareRun& r : c.runs) {
    runs_html += fmt::format("{}<b>{}</b> <code>{}</code> ({}{})", runs_html.empty() ? "" : "; ",
                             r.label, svg::escape(r.dir), plural(r.rows, "row", "rows"),
                             r.seeds.empty() ? "" : ", seeds " + svg::escape(r.seeds));
  }
  std::string keys_html;
  for (const std::string& k : c.keys) {
    keys_html += (keys_html.empty() ? "" : ", ") + svg::escape(column_label(k));
  }
  page.section(
      "sec-compare", "Runs compared",
      fmt::format("{} runs of <code>{}</code>: {}. Rows are matched by {}{}; each later run is "
                  "compared with run A (its value minus A's, and that as a percentage of A).",
                  c.runs.size(), c.kind == "replay" ? "simulate --mode replay" : c.kind, runs_html,
                  keys_html, c.seeds_averaged ? ", and are means over seeds" : ""));
  std::string settings_html;
  for (const auto& [column, values] : c.settings) {
    std::string per_run;
    for (std::size_t i = 0; i < values.size(); ++i) {
      per_run += fmt::format("{}{} {}", i ? ", " : "", c.runs[i].label,
                             svg::escape(readable(column, values[i])));
    }
    settings_html +=
        fmt::format(" The runs differ in {} ({}).", svg::escape(column_label(column)), per_run);
  }
  if (!settings_html.empty()) page.body += "<p class=\"intro\">" + settings_html + "</p>\n";
  const auto key_text = [&](const CompareRow& row) { return join(row.key, " / "); };
  for (std::size_t m = 0; m < c.metrics.size(); ++m) {
    if (m % 2 == 0) page.body += "<div class=\"row\">\n";
    svg::BarChart chart;
    chart.id = fmt::format("chart-compare-{}-svg", m);
    chart.title = column_label(c.metrics[m]);
    chart.value_label = column_label(c.metrics[m]);
    chart.decimals = shown_decimals(c, m);
    for (const CompareRow& row : c.rows) {
      if (row.metric != c.metrics[m]) continue;
      for (std::size_t i = 0; i < c.runs.size(); ++i) {
        if (!std::isfinite(row.values[i])) continue;
        chart.bars.push_back(svg::Bar{fmt::format("{} · {}", key_text(row), c.runs[i].label),
                                      row.values[i], page.colors.color("run " + c.runs[i].label)});
      }
    }
    page.chart(fmt::format("chart-compare-{}", m), svg::render_bar_chart(chart),
               fmt::format("<code>{}</code> of each row in each run (one colour per run).",
                           svg::escape(c.metrics[m])),
               chart_facts(chart));
    if (m % 2 == 1 || m + 1 == c.metrics.size()) page.body += "</div>\n";
  }
  HtmlTable t;
  t.text_columns = c.keys.size() + 1;
  for (const std::string& k : c.keys) t.headers.push_back(column_label(k));
  t.headers.push_back("Metric");
  for (const CompareRun& r : c.runs) t.headers.push_back(r.label);
  for (std::size_t i = 1; i < c.runs.size(); ++i) {
    t.headers.push_back(fmt::format("{} − A", c.runs[i].label));
    t.headers.push_back(fmt::format("{} − A (%)", c.runs[i].label));
  }
  for (const CompareRow& row : c.rows) {
    const std::size_t m = static_cast<std::size_t>(
        std::find(c.metrics.begin(), c.metrics.end(), row.metric) - c.metrics.begin());
    const int d = shown_decimals(c, m);
    HtmlTable::Row r;
    r.name = row.key.empty() ? "" : readable(c.keys[0], row.key[0]);
    for (std::size_t k = 1; k < row.key.size(); ++k)
      r.cells.push_back(readable(c.keys[k], row.key[k]));
    r.cells.push_back(column_label(row.metric));
    for (double v : row.values) r.cells.push_back(std::isfinite(v) ? fixed(v, d) : "–");
    for (std::size_t i = 1; i < c.runs.size(); ++i) {
      const double delta = compare_delta(row, i);
      const double pct = compare_delta_pct(row, i);
      r.cells.push_back(std::isfinite(delta) ? fixed(delta, d, true) : "–");
      r.cells.push_back(std::isfinite(pct) ? fixed(pct, 2, true) + " %" : "–");
    }
    t.rows.push_back(std::move(r));
  }
  page.table("table-compare", t.render(),
             "Every compared value: the runs side by side, then each later run minus run A and "
             "that as a percentage of A (– where a run has no such row or A's value is 0). "
             "<code>compare.csv</code> has the same numbers in full precision.");
  std::vector<std::string> inputs, dirs;
  for (const CompareRun& r : c.runs) {
    inputs.push_back((fs::path(r.dir) / "summary.csv").string());
    dirs.push_back(r.dir);
  }
  return render_document(page, title, join(dirs, " "), inputs, "greensched compare");
}

}  // namespace greensched::report
