// greensched multi: summary.csv (carbon and energy bars per agent, the carbon against delay
// frontier over slacks, outcome and movement tables) and timeline.csv (grid intensity per
// site, the fleet's carbon and waiting jobs over time).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "greensched/report/chart_facts.hpp"
#include "greensched/report/column_label.hpp"
#include "greensched/report/section.hpp"

namespace greensched::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The carbon of `local` at the same load and slack as row r, else of the first row.
double local_carbon(const Table& summary, std::size_t r) {
  const auto& agent = summary.text("agent");
  const auto& carbon = summary.num("carbon_kg");
  const auto same = [&](const char* c, std::size_t a, std::size_t b) {
    if (!summary.has(c)) return true;
    const double x = summary.num(c)[a], y = summary.num(c)[b];
    return (!std::isfinite(x) && !std::isfinite(y)) || x == y;
  };
  for (std::size_t b = 0; b < summary.rows; ++b) {
    if (agent[b] == "local" && same("target_load_pct", r, b) && same("slack_h", r, b)) {
      return carbon[b];
    }
  }
  return summary.rows > 0 ? carbon[0] : kNaN;
}

// Carbon against BE delay over the slacks swept, one chart per load, one line per agent: the
// frontier an operator chooses a slack on.
void add_carbon_delay_frontier(Page& page, const Table& summary) {
  const auto& agent = summary.text("agent");
  const auto& slack = summary.num("slack_h");
  const auto& target = summary.num("target_load_pct");
  std::map<double, Keys> agents_at;  // load -> agents
  std::map<double, std::vector<std::vector<std::pair<double, std::size_t>>>> rows_at;
  for (std::size_t r = 0; r < summary.rows; ++r) {
    const double load = std::isfinite(target[r]) ? target[r] : 0.0;
    const std::size_t a = agents_at[load].add(agent[r]);
    auto& rows = rows_at[load];
    if (a == rows.size()) rows.emplace_back();
    rows[a].emplace_back(slack[r], r);
  }
  std::size_t k = 0;
  for (auto& [load, rows] : rows_at) {
    svg::LineChart chart;
    chart.id = fmt::format("chart-multi-frontier-{}-svg", k);
    chart.title = load > 0 ? fmt::format("Carbon against BE delay at {:g} % fleet load", load)
                           : std::string("Carbon against BE delay");
    chart.x_label = "BE wait, p99 (hours)";
    chart.y_label = "Carbon vs local (%)";
    chart.y_from_zero = false;
    for (std::size_t a = 0; a < rows.size(); ++a) {
      std::sort(rows[a].begin(), rows[a].end());
      svg::Series line;
      line.name = agents_at[load].names()[a];
      line.color = page.colors.color(line.name);
      for (const auto& [sl, r] : rows[a]) {
        const double base = local_carbon(summary, r);
        line.points.push_back(svg::Point{summary.num("p99_delay_s_be")[r] / 3600.0,
                                         100.0 * (summary.num("carbon_kg")[r] / base - 1.0)});
      }
      chart.series.push_back(std::move(line));
    }
    page.chart(fmt::format("chart-multi-frontier-{}", k++), svg::render_line_chart(chart),
               "Each agent's carbon (relative to local at the same load and slack) against the "
               "99th percentile of best-effort jobs' wait, one point per slack swept (a BE job "
               "may be deferred up to its slack), in increasing slack along each line. Down and "
               "to the left is better: the line is the trade-off an operator picks a slack on.",
               chart_facts(chart));
  }
}

// What the rows of summary.csv differ by besides the agent: load, slack, controller.
struct MultiRows {
  bool by_load = false;
  bool by_slack = false;
  bool by_controller = false;
};

MultiRows multi_rows(const Table& summary) {
  const auto varies = [&](const char* c) {
    if (!summary.has(c)) return false;
    std::set<double> v;
    for (double x : summary.num(c)) v.insert(std::isfinite(x) ? x : -1);
    return v.size() > 1;
  };
  MultiRows m;
  m.by_load = varies("target_load_pct");
  m.by_slack = varies("slack_h");
  m.by_controller = summary.has("controller") && [&] {
    const auto& c = summary.text("controller");
    return std::set<std::string>(c.begin(), c.end()).size() > 1;
  }();
  return m;
}

void add_multi_bars(Page& page, const Table& summary, const MultiRows& m) {
  const auto& agent = summary.text("agent");
  const auto label = [&](std::size_t r) {
    std::string l = agent[r];
    if (m.by_controller) l += " / " + summary.text("controller")[r];
    if (m.by_load) l += fmt::format(" @ {:g} %", summary.num("target_load_pct")[r]);
    if (m.by_slack) l += fmt::format(", slack {:g} h", summary.num("slack_h")[r]);
    return l;
  };
  svg::BarChart carbon;
  carbon.id = "chart-multi-carbon-svg";
  carbon.title = "Carbon emitted per agent";
  carbon.value_label = "Carbon (kg CO₂)";
  carbon.decimals = 0;
  svg::BarChart energy;
  energy.id = "chart-multi-energy-svg";
  energy.title = "Energy used per agent";
  energy.value_label = "Energy (kWh)";
  energy.decimals = 0;
  for (std::size_t r = 0; r < summary.rows; ++r) {
    const std::string& color = page.colors.color(agent[r]);
    carbon.bars.push_back(svg::Bar{label(r), summary.num("carbon_kg")[r], color});
    energy.bars.push_back(svg::Bar{label(r), summary.num("energy_kwh")[r], color});
  }
  const std::string measured =
      summary.has("offered_load_pct")
          ? " Measured over the run's measured days, at the fleet load shown in the table."
          : std::string();
  page.body += "<div class=\"row\">\n";
  page.chart("chart-multi-carbon", svg::render_bar_chart(carbon),
             "Total carbon emitted by the whole fleet under each dispatch agent: the energy each "
             "site used times its grid's carbon intensity at that time, plus moving data "
             "between sites. Shorter bars are better." +
                 measured,
             chart_facts(carbon));
  page.chart("chart-multi-energy", svg::render_bar_chart(energy),
             "Total energy the fleet used under each agent, including moving data between sites. "
             "An agent can save carbon without saving energy, by running work where and when "
             "the grid is cleaner." +
                 measured,
             chart_facts(energy));
  page.body += "</div>\n";
}

// A column of the multi tables; its header is column_label(column) (the computed "Carbon vs
// local" column has no column of its own).
struct MultiCol {
  std::string column;
  int decimals;
  int better;  // +1 higher is better, -1 lower, 0 none
  std::string header() const { return column.empty() ? "Carbon vs local" : column_label(column); }
};

// Three tables, so that each fits its card: outcomes, movement and load, site energy.
const std::vector<MultiCol>& outcome_cols() {
  static const std::vector<MultiCol> cols = {
      {"target_load_pct", 0, 0},
      {"slack_h", -1, 0},
      {"energy_kwh", 0, -1},
      {"carbon_kg", 0, -1},
      {"", 1, -1},
      {"mean_delay_s_ls", 1, -1},
      {"p99_delay_s_ls", 0, -1},
      {"mean_delay_s_be", 0, -1},
      {"p99_delay_s_be", 0, -1},
      {"ls_slo_violations", -1, -1},
      {"jobs_never_started", -1, -1},
  };
  return cols;
}

const std::vector<MultiCol>& movement_cols() {
  static const std::vector<MultiCol> cols = {
      {"target_load_pct", 0, 0}, {"slack_h", -1, 0}, {"offered_load_pct", 1, 0},
      {"gpu_alloc_pct", 1, 0},   {"jobs", -1, 0},    {"jobs_deferred", -1, 0},
      {"jobs_moved", -1, 0},     {"gb_moved", 0, 0}, {"transfer_kwh", 1, 0},
      {"be_preemptions", -1, 0},
  };
  return cols;
}

// The site energy controllers' outcome, on rows that ran one (`controller` set).
const std::vector<MultiCol>& energy_cols() {
  static const std::vector<MultiCol> cols = {
      {"target_load_pct", 0, 0},  {"slack_h", -1, 0},
      {"controller", 0, 0},       {"cost_usd", 0, -1},
      {"grid_import_kwh", 0, -1}, {"generation_kwh", 0, 0},
      {"onsite_kwh_used", 0, 0},  {"self_consumption_pct", 1, 0},
      {"export_kwh", 0, 0},       {"curtailed_kwh", 0, 0},
      {"battery_cycles", 1, 0},
  };
  return cols;
}

// Columns neither table knows are shown as they are (except the run time and the window).
std::vector<std::size_t> extra_columns(const Table& summary) {
  std::vector<std::size_t> extra;
  for (std::size_t i = 0; i < summary.header.size(); ++i) {
    const std::string& h = summary.header[i];
    if (h == "agent" || h == "wall_seconds" || h == "window_s") continue;
    const auto named = [&](const MultiCol& c) { return c.column == h; };
    if (std::none_of(outcome_cols().begin(), outcome_cols().end(), named) &&
        std::none_of(movement_cols().begin(), movement_cols().end(), named) &&
        std::none_of(energy_cols().begin(), energy_cols().end(), named)) {
      extra.push_back(i);
    }
  }
  return extra;
}

// The cell of column c in row r, and its value for marking the best.
std::pair<std::string, double> multi_cell(const Table& summary, const MultiCol& c, std::size_t r) {
  if (c.column == "controller") return {summary.text("controller")[r], kNaN};
  if (c.column.empty()) {
    const double base = local_carbon(summary, r);
    const double v = base > 0 ? (summary.num("carbon_kg")[r] / base - 1) * 100 : kNaN;
    return {std::isfinite(v) ? fmt::format("{:+.1f} %", v) : "–", v};
  }
  const double v = summary.num(c.column)[r];
  return {std::isfinite(v) ? format_value(v, c.decimals) : "–", v};
}

// Why column `column` has nothing to show, or "" when it has: no value in any row, or a cost
// of 0 on every row although energy was imported (no site has a price series).
std::string no_data(const Table& summary, const std::string& column,
                    const std::vector<double>& values) {
  if (column.empty() || column == "controller" || column == "target_load_pct" ||
      column == "slack_h") {
    return "";  // a computed column, the controller's name, or a setting ("–": none)
  }
  if (std::none_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); })) {
    return "no data";
  }
  if (column == "cost_usd" && summary.has("grid_import_kwh")) {
    const auto& import = summary.num("grid_import_kwh");
    const bool no_cost = std::all_of(values.begin(), values.end(),
                                     [](double v) { return !std::isfinite(v) || v == 0; });
    if (no_cost && std::any_of(import.begin(), import.end(), [](double v) { return v > 0; })) {
      return "no price data";
    }
  }
  return "";
}

std::string multi_table(Page& page, const Table& summary, const std::vector<MultiCol>& known,
                        const std::vector<std::size_t>& extra, bool mark) {
  const auto in_header = [&](const std::string& c) {
    return std::find(summary.header.begin(), summary.header.end(), c) != summary.header.end();
  };
  std::vector<MultiCol> cols;
  for (const MultiCol& c : known) {
    if (c.column.empty() || in_header(c.column)) cols.push_back(c);
  }
  HtmlTable t;
  t.headers = {"Agent"};
  for (const MultiCol& c : cols) t.headers.push_back(c.header());
  for (std::size_t i : extra) t.headers.push_back(column_label(summary.header[i]));
  std::vector<std::vector<double>> values(cols.size());
  for (std::size_t r = 0; r < summary.rows; ++r) {
    HtmlTable::Row row;
    row.name = summary.text("agent")[r];
    row.color = page.colors.color(row.name);
    for (std::size_t c = 0; c < cols.size(); ++c) {
      auto [cell, v] = multi_cell(summary, cols[c], r);
      row.cells.push_back(std::move(cell));
      values[c].push_back(v);
    }
    for (std::size_t i : extra) row.cells.push_back(summary.cells[r][i]);
    t.rows.push_back(std::move(row));
  }
  // A column without data says so rather than showing zeros or dashes.
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const std::string why = no_data(summary, cols[c].column, values[c]);
    if (why.empty()) continue;
    for (HtmlTable::Row& row : t.rows) row.cells[c] = why;
    values[c].assign(values[c].size(), kNaN);
  }
  if (mark) {
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].better != 0) t.mark_best(c, values[c], cols[c].better > 0);
    }
  }
  return t.render();
}

void add_multi_summary(Page& page, const Table& summary) {
  const MultiRows m = multi_rows(summary);
  if (m.by_slack && summary.has("p99_delay_s_be")) add_carbon_delay_frontier(page, summary);
  add_multi_bars(page, summary, m);
  const bool mark = !m.by_load && !m.by_slack;
  page.table("table-multi-summary", multi_table(page, summary, outcome_cols(), {}, mark),
             "One row per dispatch agent (and load and slack, where several were run), from "
             "summary.csv. “Carbon vs local” compares with the local agent at the same load and "
             "slack (the first row where there is none). Load is the offered GPU load of the "
             "whole fleet; energy and carbon are those of the measured days. Waits run from a "
             "job's submission to its start: LS are latency-sensitive jobs, BE best-effort jobs "
             "that may be deferred up to the slack; an LS SLO violation is an LS job that "
             "started later than its bound. Where one load and slack were run, the best value "
             "of each column is in bold.");
  page.table("table-multi-movement",
             multi_table(page, summary, movement_cols(), extra_columns(summary), mark),
             "The same runs: offered load and time-weighted GPU allocation of the fleet, jobs "
             "deferred by the agent, jobs moved away from their home site with the data and "
             "network energy that took, and best-effort jobs preempted.");
  const std::vector<std::string> none;
  const auto& ctrl = summary.has("controller") ? summary.text("controller") : none;
  if (std::none_of(ctrl.begin(), ctrl.end(), [](const std::string& c) { return !c.empty(); })) {
    return;
  }
  // Load and slack where they vary; the on-site columns where a site generates or stores.
  const auto nonzero = [&](const char* c) {
    if (!summary.has(c)) return false;
    const auto& v = summary.num(c);
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x != 0; });
  };
  const bool onsite = nonzero("generation_kwh") || nonzero("battery_cycles") ||
                      nonzero("onsite_kwh_used") || nonzero("export_kwh");
  std::vector<MultiCol> cols;
  for (const MultiCol& c : energy_cols()) {
    if ((c.column == "target_load_pct" && !m.by_load) || (c.column == "slack_h" && !m.by_slack)) {
      continue;
    }
    const bool grid = c.column == "controller" || c.column == "cost_usd" ||
                      c.column == "grid_import_kwh" || c.column == "target_load_pct" ||
                      c.column == "slack_h";
    if (grid || onsite) cols.push_back(c);
  }
  page.table("table-multi-energy", multi_table(page, summary, cols, {}, mark),
             std::string("The same runs with each site energy controller: what the grid energy "
                         "cost (export earnings deducted; “no price data” where no site has a "
                         "price series) and the energy imported from the grid") +
                 (onsite ? ", generated on site and used there (self-consumption is the share "
                           "of generation used on site), exported, curtailed, and the "
                           "batteries' full charge cycles."
                         : ". No site of this fleet generates energy or has a battery: there is "
                           "no on-site generation, self-consumption, export, curtailment or "
                           "battery data to show."));
}

// timeline.csv of the first load and slack: per site (of the first agent) the grid carbon
// intensity, per agent the fleet's cumulative carbon and its waiting jobs.
struct MultiSeries {
  std::vector<svg::Series> intensity, carbon, queue;
  std::string setting_text;  // names the run shown when the file holds several
};

MultiSeries multi_series(Page& page, const Table& tl) {
  const auto setting_of = [&](std::size_t r) {
    std::string key;
    for (const char* c : {"load_pct", "slack_h"}) key += (tl.has(c) ? tl.text(c)[r] : "") + "\x1f";
    return key;
  };
  const std::string first_setting = setting_of(0);
  bool several = false;
  for (std::size_t r = 0; r < tl.rows && !several; ++r) several = setting_of(r) != first_setting;
  MultiSeries out;
  if (several && tl.has("load_pct") && tl.has("slack_h")) {
    out.setting_text =
        fmt::format(" Shown at {} % fleet load with {} h slack; summary.csv has every run.",
                    tl.text("load_pct")[0], tl.text("slack_h")[0]);
  }
  const auto& agent = tl.text("agent");
  const auto& site = tl.text("site");
  const std::string& first_agent = agent[0];
  const auto series = [&](const std::string& name, const std::string& color_key) {
    svg::Series s;
    s.name = name;
    s.color = page.colors.color(color_key);
    return s;
  };
  Keys sites, agents;
  for (std::size_t r = 0; r < tl.rows; ++r) {
    if (several && setting_of(r) != first_setting) continue;
    const double t = tl.num("time_s")[r] / kDay;
    if (site[r] == "fleet") {
      const std::size_t a = agents.add(agent[r]);
      if (a == out.carbon.size()) {
        out.carbon.push_back(series(agent[r], agent[r]));
        out.queue.push_back(out.carbon.back());
      }
      out.carbon[a].points.push_back(svg::Point{t, tl.num("carbon_kg")[r]});
      out.queue[a].points.push_back(
          svg::Point{t, tl.num("queued_jobs")[r] + tl.num("waiting_jobs")[r]});
    } else if (agent[r] == first_agent) {
      const std::size_t i = sites.add(site[r]);
      if (i == out.intensity.size()) out.intensity.push_back(series(site[r], "site:" + site[r]));
      out.intensity[i].points.push_back(svg::Point{t, tl.num("carbon_intensity")[r]});
    }
  }
  return out;
}

// A line chart over time in days.
void add_time_chart(Page& page, const std::string& id, const std::string& title,
                    const std::string& y_label, std::vector<svg::Series> series,
                    const std::string& caption) {
  svg::LineChart chart;
  chart.id = id + "-svg";
  chart.title = title;
  chart.x_label = "Time (days)";
  chart.y_label = y_label;
  chart.series = std::move(series);
  page.chart(id, svg::render_line_chart(chart), caption, chart_facts(chart));
}

void add_multi_timeline(Page& page, const Table& tl) {
  if (tl.rows == 0) return;
  MultiSeries s = multi_series(page, tl);
  if (!s.intensity.empty()) {
    add_time_chart(page, "chart-multi-intensity", "Grid carbon intensity per site",
                   "Carbon intensity (g CO₂/kWh)", std::move(s.intensity),
                   "How much carbon each site's electricity grid emits per kWh over time, one "
                   "line per site. This is the grid's, the same whichever agent runs; work "
                   "placed or deferred into the low parts of these lines emits less.");
  }
  if (s.carbon.empty()) return;
  add_time_chart(page, "chart-multi-carbon-time", "Cumulative carbon of the fleet over time",
                 "Carbon since the start (kg CO₂)", std::move(s.carbon),
                 "Carbon emitted by the whole fleet since the start, one line per agent; the "
                 "last point is the total. A flatter line is better; where lines part, one "
                 "agent ran work on cleaner grids or at cleaner hours." +
                     s.setting_text);
  add_time_chart(page, "chart-multi-queue", "Jobs waiting in the fleet over time",
                 "Jobs waiting (queued + deferred)", std::move(s.queue),
                 "Jobs submitted but not yet running, in the whole fleet, one line per agent: "
                 "jobs queued at a site because they do not fit yet, plus jobs the agent "
                 "deliberately deferred to a later, cleaner hour. Deferring best-effort jobs "
                 "saves carbon at the cost of waiting." +
                     s.setting_text);
}

}  // namespace

std::vector<Column> multi_summary_columns() {
  std::vector<Column> cols = {text_col("agent"), num_col("energy_kwh"), num_col("carbon_kg"),
                              text_col("controller", false)};
  for (const char* c : {"mean_delay_s_ls",
                        "mean_delay_s_be",
                        "p99_delay_s_be",
                        "ls_slo_violations",
                        "jobs_moved",
                        "gb_moved",
                        "gpu_alloc_pct",
                        "jobs_never_started",
                        "jobs",
                        "jobs_deferred",
                        "transfer_kwh",
                        "target_load_pct",
                        "offered_load_pct",
                        "slack_h",
                        "p99_delay_s_ls",
                        "be_preemptions",
                        "cost_usd",
                        "grid_import_kwh",
                        "onsite_kwh_used",
                        "self_consumption_pct",
                        "battery_cycles",
                        "export_kwh",
                        "curtailed_kwh",
                        "generation_kwh"}) {
    cols.push_back(num_col(c, true, false));
  }
  return cols;
}

std::vector<Column> multi_timeline_columns() {
  return {text_col("agent"),       num_col("time_s"),           text_col("site"),
          num_col("carbon_kg"),    num_col("carbon_intensity"), num_col("queued_jobs"),
          num_col("waiting_jobs"), text_col("load_pct", false), text_col("slack_h", false)};
}

void add_multi_section(Page& page, const Table* summary, const Table* timeline) {
  page.section("sec-multi", "Multi-cluster dispatch",
               "Jobs are submitted to sites in several regions; a dispatch agent decides where "
               "and when each one runs. One colour per agent, the same in every chart.");
  if (summary != nullptr) add_multi_summary(page, *summary);
  if (timeline != nullptr) add_multi_timeline(page, *timeline);
}

}  // namespace greensched::report
