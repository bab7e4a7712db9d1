// simulate, replay mode: timeline.csv (pods, GPUs, power and energy over time, one line per
// policy) and summary.csv (a table per policy, queue and setting; energy against load where
// several loads ran).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "greensched/core/duration.hpp"
#include "greensched/report/chart_facts.hpp"
#include "greensched/report/section.hpp"
#include "greensched/report/stat.hpp"

namespace greensched::report {
namespace {

using svg::escape;

// The load, GPU power rule and sleep setting of row r of a replay table ("" when absent).
std::string replay_setting(const Table& t, std::size_t r, const char* load_column) {
  std::string key;
  const auto text_or_num = [&](const char* c) -> std::string {
    if (!t.has(c)) return "";
    if (t.texts.count(c)) return t.text(c)[r];
    const double v = t.num(c)[r];
    return std::isfinite(v) ? fmt::format("{:g}", v) : "";
  };
  for (const char* c : {load_column, "gpu_power", "power_down_idle_s"}) {
    key += text_or_num(c);
    key += '\x1f';
  }
  return key;
}

// timeline.csv by series (a policy, and its setting where the file holds several) and seed,
// inside each run's measured window when summary.csv gives it: times in days from the window's
// start, energy counted from there, so that the charts show what the tables measure.
struct ReplayRuns {
  static constexpr std::size_t kMetrics = 5;
  struct Run {
    std::vector<double> t;
    std::array<std::vector<double>, kMetrics> v;
  };
  Keys policies;                    // the series' names
  std::vector<std::string> policy;  // per series: its policy (the series' colour)
  std::vector<Keys> seeds;
  std::vector<std::vector<Run>> runs;  // [series][seed]
  double t_max = 0;
  std::size_t max_seeds = 0;
  bool windowed = false;  // cut to the measured windows
};

// A setting key's load, GPU power rule and sleep setting (replay_setting's order).
std::array<std::string, 3> setting_parts(const std::string& key) {
  std::array<std::string, 3> parts;
  std::size_t pos = 0;
  for (std::string& part : parts) {
    const std::size_t end = key.find('\x1f', pos);
    if (end == std::string::npos) break;
    part = key.substr(pos, end - pos);
    pos = end + 1;
  }
  return parts;
}

// "50 %, pwr, sleep after 30m": the parts of a setting key that vary in the file.
std::string short_setting(const std::string& key, const std::array<bool, 3>& varies) {
  const std::array<std::string, 3> parts = setting_parts(key);
  std::string out;
  const auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (varies[0]) add(parts[0].empty() ? "own rate" : parts[0] + " %");
  if (varies[1]) add(parts[1]);
  if (varies[2]) {
    const double idle = std::atof(parts[2].c_str());
    add(parts[2] == "-1" ? "always on" : "sleep after " + format_duration(idle));
  }
  return out;
}

ReplayRuns group_replay_runs(const Table& tl, const Table* summary) {
  const auto& policy = tl.text("policy");
  const auto& seed = tl.text("seed");
  const auto& time = tl.num("time_s");
  // Each row's setting, and which parts of it vary across the file.
  std::vector<std::string> settings(tl.rows);
  std::array<std::set<std::string>, 3> values;
  for (std::size_t r = 0; r < tl.rows; ++r) {
    settings[r] = replay_setting(tl, r, "load_pct");
    const std::array<std::string, 3> parts = setting_parts(settings[r]);
    for (std::size_t k = 0; k < parts.size(); ++k) values[k].insert(parts[k]);
  }
  const std::array<bool, 3> varies = {values[0].size() > 1, values[1].size() > 1,
                                      values[2].size() > 1};
  // Each run's measured window: policy, seed and setting -> [start, end).
  std::map<std::string, std::pair<double, double>> windows;
  if (summary != nullptr && summary->has("window_start_s") && summary->has("window_s")) {
    for (std::size_t r = 0; r < summary->rows; ++r) {
      const double start = summary->num("window_start_s")[r];
      if (!std::isfinite(start)) continue;
      windows[summary->text("policy")[r] + '\x1e' + summary->text("seed")[r] + '\x1e' +
              replay_setting(*summary, r, "target_load_pct")] = {
          start, start + summary->num("window_s")[r]};
    }
  }
  ReplayRuns g;
  g.windowed = !windows.empty();
  const std::array<const std::vector<double>*, ReplayRuns::kMetrics> metric = {
      &tl.num("running_pods"), &tl.num("queued_pods"), &tl.num("allocated_gpus"),
      &tl.num("power_watts"), &tl.num("energy_joules")};
  const std::array<double, ReplayRuns::kMetrics> scale = {1, 1, 1, 1e-3, 1.0 / 3.6e6};
  std::map<std::pair<std::size_t, std::size_t>, double> energy_at_start;
  for (std::size_t r = 0; r < tl.rows; ++r) {
    const std::string& setting = settings[r];
    double start = 0, end = std::numeric_limits<double>::infinity();
    if (g.windowed) {
      const auto w = windows.find(policy[r] + '\x1e' + seed[r] + '\x1e' + setting);
      if (w == windows.end()) continue;
      std::tie(start, end) = w->second;
    }
    const std::string detail = short_setting(setting, varies);
    const std::string name = detail.empty() ? policy[r] : policy[r] + " (" + detail + ")";
    const std::size_t p = g.policies.add(name);
    if (p == g.runs.size()) {
      g.runs.emplace_back();
      g.seeds.emplace_back();
      g.policy.push_back(policy[r]);
    }
    const std::size_t s = g.seeds[p].add(seed[r]);
    if (s == g.runs[p].size()) g.runs[p].emplace_back();
    // The energy used before the window is not the window's.
    double& before = energy_at_start.try_emplace({p, s}, 0.0).first->second;
    if (time[r] <= start) before = tl.num("energy_joules")[r];
    if (time[r] < start || time[r] > end) continue;
    ReplayRuns::Run& run = g.runs[p][s];
    run.t.push_back((time[r] - start) / kDay);
    for (std::size_t m = 0; m < ReplayRuns::kMetrics; ++m) {
      const double v = m == 4 ? (*metric[m])[r] - before : (*metric[m])[r];
      run.v[m].push_back(v * scale[m]);
    }
    g.t_max = std::max(g.t_max, (time[r] - start) / kDay);
  }
  for (const auto& s : g.seeds) g.max_seeds = std::max(g.max_seeds, s.size());
  return g;
}

// Metric m of policy p: one seed as it is; several seeds sampled on a common time grid (the
// value in force at each grid time), as the mean with a min..max band.
svg::Series replay_series(Page& page, const ReplayRuns& g, std::size_t p, std::size_t m) {
  constexpr std::size_t kGrid = 1000;
  svg::Series s;
  s.name = g.policies.names()[p];
  s.color = page.colors.color(s.name);
  const auto& rs = g.runs[p];
  if (rs.size() == 1) {
    for (std::size_t i = 0; i < rs[0].t.size(); ++i) {
      s.points.push_back(svg::Point{rs[0].t[i], rs[0].v[m][i]});
    }
    return s;
  }
  std::vector<std::size_t> cursor(rs.size(), 0);
  for (std::size_t grid = 0; grid <= kGrid; ++grid) {
    const double t = g.t_max * static_cast<double>(grid) / static_cast<double>(kGrid);
    std::vector<double> values;
    for (std::size_t k = 0; k < rs.size(); ++k) {
      const ReplayRuns::Run& run = rs[k];
      while (cursor[k] < run.t.size() && run.t[cursor[k]] <= t) ++cursor[k];
      if (run.t.empty()) continue;
      values.push_back(run.v[m][cursor[k] == 0 ? 0 : cursor[k] - 1]);
    }
    const Stat st = stat_of(values);
    s.points.push_back(svg::Point{t, st.mean});
    s.band_lo.push_back(svg::Point{t, st.lo});
    s.band_hi.push_back(svg::Point{t, st.hi});
  }
  return s;
}

void add_band_legend(const ReplayRuns& g, svg::LineChart& chart) {
  if (g.max_seeds > 1) {
    chart.extra_legend.push_back(
        svg::LegendEntry{"band: min–max over seeds", "#777777", false, true});
  }
}

void add_replay_pods_chart(Page& page, const ReplayRuns& g, const std::string& seeds_text) {
  svg::LineChart chart;
  chart.id = "chart-replay-pods-svg";
  chart.title = "Running and queued pods over time";
  chart.x_label = g.windowed ? "Time (days into the measured window)" : "Time (days)";
  chart.y_label = "Pods";
  for (std::size_t p = 0; p < g.policies.size(); ++p) {
    chart.series.push_back(replay_series(page, g, p, 0));
    svg::Series queued = replay_series(page, g, p, 1);
    queued.dashed = true;
    queued.in_legend = false;
    queued.name += " (queued)";
    chart.series.push_back(std::move(queued));
  }
  chart.extra_legend.push_back(svg::LegendEntry{"solid: running", "#444444", false, false});
  chart.extra_legend.push_back(svg::LegendEntry{"dashed: queued", "#444444", true, false});
  add_band_legend(g, chart);
  page.chart("chart-replay-pods", svg::render_line_chart(chart),
             "Pods running (solid lines) and pods waiting in the queue because they fit "
             "nowhere yet (dashed lines), over the replayed time, one colour per policy. A "
             "policy that leaves less capacity stranded keeps the queue shorter." +
                 seeds_text,
             chart_facts(chart));
}

void add_replay_timeline(Page& page, const Table& tl, const Table* summary) {
  const ReplayRuns g = group_replay_runs(tl, summary);
  const std::string seeds_text =
      (g.max_seeds > 1
           ? " With several seeds per policy, each line is the mean over the seeds of the value "
             "in force at each moment, and the shaded band spans the lowest to the highest seed."
           : std::string()) +
      (g.windowed ? " Only the measured window is shown (days from its start, after the "
                    "warm-up), as the tables measure it."
                  : std::string());
  add_replay_pods_chart(page, g, seeds_text);
  const struct {
    const char* id;
    const char* title;
    const char* y_label;
    std::size_t metric;
    const char* caption;
  } specs[] = {
      {"chart-replay-gpus", "Allocated GPUs over time", "Allocated GPUs (GPUs)", 2,
       "How many GPUs (whole GPUs; shares of a GPU add up) are allocated to running pods at "
       "each moment of the replay, one line per policy."},
      {"chart-replay-power", "Cluster power over time", "Cluster power (kW)", 3,
       "The power the cluster draws at each moment (IT power times PUE), one line per policy. "
       "Lower at the same work is better."},
      {"chart-replay-energy", "Cumulative energy over time", "Energy since the start (kWh)", 4,
       "The energy the cluster has used since the start of the measured window (of the replay, "
       "without one); the last point of a line is the energy in the table. Lower is better."},
  };
  for (const auto& spec : specs) {
    svg::LineChart chart;
    chart.id = std::string(spec.id) + "-svg";
    chart.title = spec.title;
    chart.x_label = g.windowed ? "Time (days into the measured window)" : "Time (days)";
    chart.y_label = spec.y_label;
    for (std::size_t p = 0; p < g.policies.size(); ++p)
      chart.series.push_back(replay_series(page, g, p, spec.metric));
    add_band_legend(g, chart);
    page.chart(spec.id, svg::render_line_chart(chart), spec.caption + seeds_text,
               chart_facts(chart));
  }
}

// Energy against offered load, one chart per GPU power rule, one line per policy and sleep
// setting (dashed: nodes sleep), the mean over seeds with a min..max band.
void add_energy_against_load(Page& page, const Table& summary) {
  const auto& policy = summary.text("policy");
  const auto& load = summary.num("offered_load_pct");
  const auto& target = summary.num("target_load_pct");
  const auto& energy = summary.num("energy_kwh");
  const auto& sleep = summary.num("power_down_idle_s");
  const auto& rule = summary.text("gpu_power");
  Keys rules;
  for (std::size_t r = 0; r < summary.rows; ++r) rules.add(rule[r]);
  for (std::size_t k = 0; k < rules.size(); ++k) {
    // Series key -> target load -> (offered loads, energies).
    Keys series;
    std::vector<std::map<double, std::pair<std::vector<double>, std::vector<double>>>> points;
    std::vector<bool> sleeps;
    std::vector<std::string> policy_of;
    for (std::size_t r = 0; r < summary.rows; ++r) {
      if (rule[r] != rules.names()[k]) continue;
      const bool sleeping = std::isfinite(sleep[r]) && sleep[r] >= 0;
      const std::size_t i = series.add(sleeping ? policy[r] + " (nodes sleep)" : policy[r]);
      if (i == points.size()) {
        points.emplace_back();
        sleeps.push_back(sleeping);
        policy_of.push_back(policy[r]);
      }
      auto& [x, y] = points[i][target[r]];
      x.push_back(load[r]);
      y.push_back(energy[r] / 1000.0);
    }
    svg::LineChart chart;
    chart.id = fmt::format("chart-replay-energy-load-{}-svg", k);
    chart.title = fmt::format("Energy against load (GPU power rule: {})", rules.names()[k]);
    chart.x_label = "Offered GPU load (% of cluster GPUs)";
    chart.y_label = "Energy over the measured days (MWh)";
    for (std::size_t i = 0; i < series.size(); ++i) {
      svg::Series line;
      line.name = series.names()[i];
      line.color = page.colors.color(policy_of[i]);
      line.dashed = sleeps[i];
      for (const auto& [t, xy] : points[i]) {
        const Stat sx = stat_of(xy.first);
        const Stat sy = stat_of(xy.second);
        line.points.push_back(svg::Point{sx.mean, sy.mean});
        line.band_lo.push_back(svg::Point{sx.mean, sy.lo});
        line.band_hi.push_back(svg::Point{sx.mean, sy.hi});
      }
      chart.series.push_back(std::move(line));
    }
    chart.extra_legend.push_back(svg::LegendEntry{"solid: always on", "#444444", false, false});
    chart.extra_legend.push_back(
        svg::LegendEntry{"dashed: idle nodes sleep", "#444444", true, false});
    page.chart(
        fmt::format("chart-replay-energy-load-{}", k), svg::render_line_chart(chart),
        fmt::format(
            "Facility energy over the measured days at each offered load (GPU requests × run "
            "time over cluster GPUs × time), one colour per policy; dashed lines let idle nodes "
            "sleep. GPU power rule “{}”: {}. Each point is the mean over seeds, the band the "
            "lowest to the highest seed. Savings count where the cluster is loaded: compare "
            "lines at the same load.",
            escape(rules.names()[k]),
            rules.names()[k] == "proportional"
                ? "a GPU draws idle + (max − idle) × its allocated share"
                : "a GPU with any allocation draws its max power (PWR paper)"),
        chart_facts(chart));
  }
}

// summary.csv runs grouped by policy, queue and setting (load, GPU rule, sleep).
struct ReplayGroups {
  Keys groups;
  std::vector<std::vector<std::size_t>> rows_of;
  std::vector<std::array<std::string, 3>> names;  // policy, queue, setting key
  std::set<std::string> loads;
};

ReplayGroups group_replay_summary(const Table& summary, bool loaded) {
  const auto& policy = summary.text("policy");
  const auto& queue = summary.text("queue");
  ReplayGroups g;
  for (std::size_t r = 0; r < summary.rows; ++r) {
    const std::string setting = loaded ? replay_setting(summary, r, "target_load_pct") : "";
    const std::size_t i = g.groups.add(policy[r] + "\x1f" + queue[r] + "\x1f" + setting);
    if (i == g.rows_of.size()) {
      g.rows_of.emplace_back();
      g.names.push_back({policy[r], queue[r], setting});
    }
    g.rows_of[i].push_back(r);
    if (loaded) g.loads.insert(setting_parts(setting)[0]);
  }
  return g;
}

// The metric columns of the table that summary.csv has.
std::vector<MeanColumn> replay_summary_cols(const Table& summary, bool loaded) {
  std::vector<MeanColumn> cols;
  if (loaded) {
    cols = {
        {"offered_load_pct", "Load (%)", 1, 1, 0},
        {"gpu_alloc_pct", "GPU alloc (%)", 1, 1, 0},
        {"energy_kwh", "Energy (MWh)", 1e-3, 1, -1},
        {"energy_over_floor", "Energy / own floor", 1, 3, -1},
        {"kwh_per_gpu_hour", "kWh per GPU-hour", 1, 3, -1},
        {"mean_nodes_awake", "Nodes awake", 1, 0, -1},
        {"ls_p99_delay_s", "LS p99 wait (s)", 1, 0, -1},
        {"be_p99_delay_s", "BE p99 wait (s)", 1, 0, -1},
        {"pods_never_started", "Never started", 1, -1, -1},
    };
  } else {
    cols = {
        {"pods_total", "Pods", 1, -1, 0},
        {"pods_started", "Started", 1, -1, +1},
        {"pods_never_started", "Never started", 1, -1, -1},
        {"pods_requeued", "Re-queued", 1, -1, 0},
        {"mean_queue_delay_s", "Mean wait (s)", 1, 1, -1},
        {"p99_queue_delay_s", "p99 wait (s)", 1, 1, -1},
        {"energy_kwh", "Energy (kWh)", 1, 1, -1},
        {"makespan_s", "Makespan (days)", 1.0 / kDay, 2, 0},
    };
  }
  std::erase_if(cols, [&](const MeanColumn& c) { return !summary.has(c.column); });
  return cols;
}

HtmlTable replay_summary_table(Page& page, const Table& summary, const ReplayGroups& g,
                               bool loaded) {
  const std::vector<MeanColumn> cols = replay_summary_cols(summary, loaded);
  HtmlTable t;
  t.headers = {"Policy", "Queue"};
  if (loaded) t.headers.insert(t.headers.end(), {"GPU rule", "Nodes sleep"});
  t.headers.push_back("Runs");
  const std::size_t first_metric = t.headers.size() - 1;
  for (const MeanColumn& c : cols) t.headers.push_back(c.header);
  std::vector<std::vector<double>> means(cols.size());
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    HtmlTable::Row row;
    row.name = g.names[i][0];
    row.color = page.colors.color(row.name);
    row.cells.push_back(g.names[i][1]);
    const std::size_t r0 = g.rows_of[i].front();
    if (loaded) {
      row.cells.push_back(summary.text("gpu_power")[r0]);
      const double sleep = summary.num("power_down_idle_s")[r0];
      row.cells.push_back(std::isfinite(sleep) && sleep >= 0 ? "after " + format_duration(sleep)
                                                             : "never");
    }
    row.cells.push_back(fmt::format("{}", g.rows_of[i].size()));
    add_means(row, summary, cols, g.rows_of[i], means);
    t.rows.push_back(std::move(row));
  }
  // Best values only mean something among runs at one load.
  if (g.loads.size() <= 1) mark_best_means(t, cols, means, first_metric);
  return t;
}

void add_replay_summary(Page& page, const Table& summary) {
  const bool loaded = summary.has("target_load_pct") && summary.has("gpu_power");
  const ReplayGroups g = group_replay_summary(summary, loaded);
  if (loaded && g.loads.size() > 1 && summary.has("offered_load_pct")) {
    add_energy_against_load(page, summary);
  }
  const HtmlTable t = replay_summary_table(page, summary, g, loaded);
  page.table(
      "table-replay-summary", t.render(),
      loaded ? "Means over the runs (seeds) of each policy and setting, from summary.csv, over "
               "the measured days (the warm-up excluded). Load is the offered GPU load; energy "
               "is facility energy; a run's own floor is what an ideal energy-proportional "
               "cluster would draw for the work that run placed (each running pod its share of "
               "its GPUs' and CPU's maximum power, nothing idle): it depends on the GPUs the "
               "policy chose, so compare energy across policies and the ratio within one; nodes "
               "awake counts nodes drawing power. Waits "
               "run from a pod's arrival to its start, a node's wake-up included; pods that "
               "never started were still queued at the end."
             : "Means over the runs (seeds) of each policy and queue discipline, from "
               "summary.csv. Waits are from a pod's arrival to its start; pods that never "
               "started were still queued at the end. The best value of each column is in bold.");
}

}  // namespace

std::vector<Column> replay_timeline_columns() {
  return {text_col("policy"),
          text_col("seed"),
          num_col("time_s"),
          num_col("running_pods"),
          num_col("queued_pods"),
          num_col("allocated_gpus"),
          num_col("power_watts"),
          num_col("energy_joules"),
          text_col("load_pct", false),
          text_col("gpu_power", false),
          text_col("power_down_idle_s", false)};
}

std::vector<Column> replay_summary_columns() {
  std::vector<Column> cols = {text_col("policy"), text_col("seed"), text_col("queue")};
  for (const char* c :
       {"pods_total",         "pods_started",      "pods_never_started", "pods_requeued",
        "mean_queue_delay_s", "p99_queue_delay_s", "energy_kwh",         "makespan_s",
        "power_down_idle_s",  "target_load_pct",   "offered_load_pct",   "energy_floor_kwh",
        "energy_over_floor",  "kwh_per_gpu_hour",  "gpu_alloc_pct",      "mean_nodes_awake",
        "ls_p99_delay_s",     "be_p99_delay_s",    "window_s",           "window_start_s"}) {
    cols.push_back(num_col(c, true, false));
  }
  cols.push_back(text_col("gpu_power", false));
  return cols;
}

void add_replay_section(Page& page, const Table* timeline, const Table* summary) {
  page.section("sec-replay", "Time replay",
               "Pods arrive at their trace times, run for their trace lifetimes and wait in a "
               "queue when they fit nowhere. Time runs along the horizontal axis in days.");
  if (timeline != nullptr) add_replay_timeline(page, *timeline, summary);
  if (summary != nullptr) add_replay_summary(page, *summary);
}

}  // namespace greensched::report
