#include "greensched/report/html_report.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/explain/explanation.hpp"
#include "greensched/report/energy_section.hpp"
#include "greensched/report/svg_chart.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::report {
namespace {

namespace fs = std::filesystem;
using svg::escape;
using svg::format_number;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDay = 86400.0;

// ---------------------------------------------------------------------------------------------
// CSV tables: the columns a section needs, numbers parsed as double, errors as file:line.

struct Column {
  std::string name;
  bool number = true;
  bool required = true;
  bool allow_empty = false;  // numbers: an empty cell reads as NaN (no value)
  double min = -kInf;
  double max = kInf;
  bool integer = false;
};

Column text_col(std::string name, bool required = true) {
  Column c;
  c.name = std::move(name);
  c.number = false;
  c.required = required;
  return c;
}

Column num_col(std::string name, bool allow_empty = false, bool required = true) {
  Column c;
  c.name = std::move(name);
  c.allow_empty = allow_empty;
  c.required = required;
  return c;
}

Column bounded_col(std::string name, double min, double max, bool integer) {
  Column c;
  c.name = std::move(name);
  c.min = min;
  c.max = max;
  c.integer = integer;
  return c;
}

struct Table {
  std::string path;
  std::vector<std::string> header;
  std::size_t rows = 0;
  std::set<std::string> present;  // requested columns found in the header
  std::map<std::string, std::vector<double>> nums;
  std::map<std::string, std::vector<std::string>> texts;
  std::vector<std::vector<std::string>> cells;  // every field as text, when asked for

  const std::vector<double>& num(const std::string& c) const { return nums.at(c); }
  const std::vector<std::string>& text(const std::string& c) const { return texts.at(c); }
  bool has(const std::string& c) const { return present.count(c) > 0; }
};

Result<Table> read_table(const std::string& path, const std::vector<Column>& columns,
                         bool keep_cells = false) {
  auto content = trace::read_file(path);
  if (!content.ok()) return Error{content.error()};
  trace::CsvReader reader(content.value(), path);
  if (Status s = reader.read_header(); !s.ok()) return Error{s.message()};
  Table t;
  t.path = path;
  t.header = reader.header();
  struct Bound {
    const Column* column;
    std::size_t index;
    std::vector<double>* nums;
    std::vector<std::string>* texts;
  };
  std::vector<Bound> bound;
  for (const Column& c : columns) {
    const auto index = reader.column(c.name);
    if (!index) {
      if (c.required) return reader.error(fmt::format("missing column '{}'", c.name));
      continue;
    }
    t.present.insert(c.name);
    if (c.number) {
      bound.push_back(Bound{&c, *index, &t.nums[c.name], nullptr});
    } else {
      bound.push_back(Bound{&c, *index, nullptr, &t.texts[c.name]});
    }
  }
  while (reader.next()) {
    const auto& fields = reader.fields();
    if (fields.size() != t.header.size()) {
      return reader.error(
          fmt::format("{} fields, but the header has {} columns", fields.size(), t.header.size()));
    }
    for (const Bound& b : bound) {
      const std::string_view field = fields[b.index];
      const Column& c = *b.column;
      if (!c.number) {
        b.texts->emplace_back(field);
        continue;
      }
      if (field.empty()) {
        if (!c.allow_empty) return reader.error(fmt::format("column '{}': empty value", c.name));
        b.nums->push_back(kNaN);
        continue;
      }
      double value = 0;
      const char* end = field.data() + field.size();
      const auto [ptr, ec] = std::from_chars(field.data(), end, value);
      if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
        return reader.error(fmt::format("column '{}': '{}' is not a number", c.name, field));
      }
      if (value < c.min || value > c.max) {
        return reader.error(
            fmt::format("column '{}': {} is outside {}..{}", c.name, field, c.min, c.max));
      }
      if (c.integer && value != std::floor(value)) {
        return reader.error(fmt::format("column '{}': {} is not a whole number", c.name, field));
      }
      b.nums->push_back(value);
    }
    if (keep_cells) t.cells.emplace_back(fields.begin(), fields.end());
    ++t.rows;
  }
  for (const Column& c : columns) {
    if (t.has(c.name)) continue;
    if (c.number) {
      t.nums[c.name].assign(t.rows, kNaN);
    } else {
      t.texts[c.name].assign(t.rows, std::string());
    }
  }
  return t;
}

// The header fields of a CSV file (empty when it cannot be read), to tell its kind.
std::vector<std::string> header_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> fields;
  for (std::size_t pos = 0;;) {
    const std::size_t comma = line.find(',', pos);
    fields.push_back(line.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return fields;
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

// Names in order of first appearance.
class Keys {
 public:
  std::size_t add(const std::string& key) {
    const auto [it, inserted] = index_.emplace(key, names_.size());
    if (inserted) names_.push_back(key);
    return it->second;
  }
  const std::vector<std::string>& names() const { return names_; }
  std::size_t size() const { return names_.size(); }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<std::string> names_;
};

struct Stat {
  double mean = kNaN;
  double lo = kNaN;
  double hi = kNaN;
  std::size_t n = 0;
};

Stat stat_of(const std::vector<double>& values) {
  Stat s;
  double sum = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    sum += v;
    s.lo = s.n == 0 ? v : std::min(s.lo, v);
    s.hi = s.n == 0 ? v : std::max(s.hi, v);
    ++s.n;
  }
  if (s.n > 0) s.mean = sum / static_cast<double>(s.n);
  return s;
}

// Fixed decimals; decimals < 0: a count, whole when it is whole (a mean over seeds may not be).
std::string format_value(double v, int decimals) {
  if (decimals < 0) decimals = std::isfinite(v) && v == std::floor(v) ? 0 : 1;
  return format_number(v, decimals);
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string swatch(const std::string& color) {
  return fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>", escape(color));
}

// ---------------------------------------------------------------------------------------------
// The page.

struct Page {
  svg::ColorMap colors;
  std::vector<std::string> figures;
  std::vector<std::pair<std::string, std::string>> toc;  // section id, heading
  std::string body;

  void section(const std::string& id, const std::string& heading, const std::string& intro_html) {
    if (!toc.empty()) body += "</section>\n";
    toc.emplace_back(id, heading);
    body += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"intro\">{}</p>\n", escape(id),
                        escape(heading), intro_html);
  }
  void chart(const std::string& id, const std::string& svg, const std::string& caption_html) {
    figures.push_back(id);
    body += fmt::format(
        "<figure class=\"chart\" id=\"{}\">\n{}\n<figcaption>{}</figcaption>\n"
        "</figure>\n",
        escape(id), svg, caption_html);
  }
  void table(const std::string& id, const std::string& table_html,
             const std::string& caption_html) {
    figures.push_back(id);
    body += fmt::format(
        "<figure class=\"table\" id=\"{}\">\n<figcaption>{}</figcaption>\n{}\n</figure>\n",
        escape(id), caption_html, table_html);
  }
};

// A table of rows of already formatted cells; the first column is a name with a colour swatch.
struct HtmlTable {
  std::vector<std::string> headers;
  struct Row {
    std::string name;
    std::string color;  // "" for no swatch
    std::vector<std::string> cells;
    std::vector<bool> best;
  };
  std::vector<Row> rows;

  std::string render() const {
    std::string out = "<div class=\"table-wrap\"><table>\n<thead><tr>";
    for (const std::string& h : headers) out += fmt::format("<th>{}</th>", escape(h));
    out += "</tr></thead>\n<tbody>\n";
    for (const Row& r : rows) {
      out += fmt::format("<tr><td class=\"name\">{}{}</td>",
                         r.color.empty() ? std::string() : swatch(r.color), escape(r.name));
      for (std::size_t i = 0; i < r.cells.size(); ++i) {
        const bool best = i < r.best.size() && r.best[i];
        out += fmt::format("<td{}>{}</td>", best ? " class=\"best\"" : "", escape(r.cells[i]));
      }
      out += "</tr>\n";
    }
    out += "</tbody></table></div>";
    return out;
  }

  // Marks the best value of column `col` (higher or lower is better) among finite values.
  void mark_best(std::size_t col, const std::vector<double>& values, bool higher) {
    double best = kNaN;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      if (!std::isfinite(best) || (higher ? v > best : v < best)) best = v;
    }
    const bool all_equal = std::all_of(values.begin(), values.end(),
                                       [&](double v) { return !std::isfinite(v) || v == best; });
    if (!std::isfinite(best) || values.size() < 2 || all_equal) return;
    for (std::size_t r = 0; r < rows.size() && r < values.size(); ++r) {
      if (rows[r].best.size() <= col) rows[r].best.resize(col + 1, false);
      rows[r].best[col] = values[r] == best;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// simulate, inflation mode: curves.csv and summary.csv.

void add_inflation_curves(Page& page, const Table& curves) {
  const auto& policy = curves.text("policy");
  const auto& seed = curves.text("seed");
  const auto& x = curves.num("arrived_gpu_pct");
  const std::array<const std::vector<double>*, 3> metric = {
      &curves.num("alloc_gpu_pct"), &curves.num("frag_gpu_milli"), &curves.num("power_watts")};
  struct Agg {
    std::set<std::string> seeds;
    std::map<double, std::array<std::vector<double>, 3>> bins;
  };
  Keys policies;
  std::vector<Agg> aggs;
  for (std::size_t r = 0; r < curves.rows; ++r) {
    const std::size_t p = policies.add(policy[r]);
    if (p == aggs.size()) aggs.emplace_back();
    aggs[p].seeds.insert(seed[r]);
    auto& bin = aggs[p].bins[x[r]];
    for (std::size_t m = 0; m < metric.size(); ++m) bin[m].push_back((*metric[m])[r]);
  }
  std::size_t max_seeds = 0;
  std::size_t min_seeds = SIZE_MAX;
  for (const Agg& a : aggs) {
    max_seeds = std::max(max_seeds, a.seeds.size());
    min_seeds = std::min(min_seeds, a.seeds.size());
  }
  const std::string seeds_text = min_seeds == max_seeds
                                     ? plural(max_seeds, "seed", "seeds")
                                     : fmt::format("{} to {} seeds", min_seeds, max_seeds);
  const bool bands = max_seeds > 1;

  struct Spec {
    std::string id, title, y_label;
    std::size_t metric;
    double scale;
    std::string caption;
  };
  const std::string band_text =
      bands ? fmt::format(
                  " Each line is the mean over {} of the policy; the shaded band around "
                  "it spans the lowest to the highest seed.",
                  escape(seeds_text))
            : fmt::format(" One run ({}) per policy.", escape(seeds_text));
  const std::vector<Spec> specs = {
      {"chart-alloc", "GPU allocation vs arrived GPU requests",
       "GPU allocation (% of cluster GPUs)", 0, 1.0,
       "Pods keep arriving and never leave. The horizontal axis is how much GPU the pods that "
       "have arrived so far ask for, as a share of the cluster's GPU capacity; the vertical "
       "axis is how much of the cluster's GPU capacity is actually allocated to placed pods. "
       "While every pod fits, a line follows the diagonal; where it bends away, pods start to "
       "fail because the free GPU capacity is scattered in pieces too small for them. Higher "
       "is better: the policy placed more work on the same GPUs." +
           band_text},
      {"chart-frag", "GPU fragmentation vs arrived GPU requests", "Fragmented GPUs (GPUs)", 1, 1e-3,
       "Fragmentation is the free GPU capacity that the typical pods of this workload could not "
       "use (the FGD paper's measure), in GPUs. It rises as the cluster fills; lower is better: "
       "less capacity is stranded in unusable pieces. Compare the lines at the same point on "
       "the horizontal axis." +
           band_text},
      {"chart-power", "Cluster power vs arrived GPU requests", "Cluster power (kW)", 2, 1e-3,
       "The power the whole cluster draws (IT power times PUE) as it fills: a GPU with any pod "
       "on it draws its full power, a free GPU its idle power. At the same allocation, lower is "
       "better; a policy that packs pods onto fewer GPUs keeps more GPUs idle." +
           band_text},
  };
  double x_max = 0;
  for (const Agg& a : aggs) {
    if (!a.bins.empty()) x_max = std::max(x_max, a.bins.rbegin()->first);
  }
  for (const Spec& spec : specs) {
    svg::LineChart chart;
    chart.id = spec.id + "-svg";
    chart.title = spec.title;
    chart.x_label = "Arrived GPU requests (% of cluster GPU capacity)";
    chart.y_label = spec.y_label;
    for (std::size_t p = 0; p < policies.size(); ++p) {
      svg::Series s;
      s.name = policies.names()[p];
      s.color = page.colors.color(s.name);
      for (const auto& [bin, values] : aggs[p].bins) {
        const Stat st = stat_of(values[spec.metric]);
        s.points.push_back(svg::Point{bin, st.mean * spec.scale});
        if (bands) {
          s.band_lo.push_back(svg::Point{bin, st.lo * spec.scale});
          s.band_hi.push_back(svg::Point{bin, st.hi * spec.scale});
        }
      }
      chart.series.push_back(std::move(s));
    }
    if (bands) {
      chart.extra_legend.push_back(
          svg::LegendEntry{"band: min–max over seeds", "#777777", false, true});
    }
    page.chart(spec.id, svg::render_line_chart(chart), spec.caption);
    if (spec.metric == 0 && x_max >= 95) {
      // Where the policies part: the same data from 80 % arrival on, with a y axis that fits.
      chart.id = "chart-alloc-zoom-svg";
      chart.title = "GPU allocation vs arrived GPU requests, from 80 % arrival (zoomed in)";
      chart.x_min = 80;
      chart.y_from_zero = false;
      chart.plot_height = 240;
      page.chart("chart-alloc-zoom", svg::render_line_chart(chart),
                 "The chart above, enlarged where the cluster runs full and the policies part: "
                 "from 80 % arrived GPU requests on, with the vertical axis cut to the range of "
                 "the data. The gap between two lines is the share of the cluster's GPUs one "
                 "policy keeps in use and the other leaves stranded.");
    }
  }
}

void add_inflation_summary(Page& page, const Table& summary) {
  const auto& policy = summary.text("policy");
  Keys policies;
  std::vector<std::vector<std::size_t>> rows_of;
  for (std::size_t r = 0; r < summary.rows; ++r) {
    const std::size_t p = policies.add(policy[r]);
    if (p == rows_of.size()) rows_of.emplace_back();
    rows_of[p].push_back(r);
  }
  struct Col {
    std::string column, header;
    double scale;
    int decimals;
    int better;  // +1 higher is better, -1 lower, 0 none
  };
  const std::vector<Col> cols = {
      {"alloc_gpu_pct_at_90", "GPU alloc % at 90 %", 1, 2, +1},
      {"alloc_gpu_pct_at_100", "GPU alloc % at 100 %", 1, 2, +1},
      {"alloc_gpu_pct_at_130", "GPU alloc % at 130 %", 1, 2, +1},
      {"frag_gpu_milli_at_100", "Fragmented GPUs at 100 %", 1e-3, 1, -1},
      {"power_watts_at_100", "Power at 100 % (kW)", 1e-3, 1, 0},
      {"pods_failed", "Failed pods", 1, -1, -1},
  };
  HtmlTable t;
  t.headers = {"Policy", "Runs"};
  for (const Col& c : cols) t.headers.push_back(c.header);
  std::vector<std::vector<double>> means(cols.size());
  for (std::size_t p = 0; p < policies.size(); ++p) {
    HtmlTable::Row row;
    row.name = policies.names()[p];
    row.color = page.colors.color(row.name);
    row.cells.push_back(fmt::format("{}", rows_of[p].size()));
    for (std::size_t c = 0; c < cols.size(); ++c) {
      std::vector<double> values;
      for (std::size_t r : rows_of[p]) values.push_back(summary.num(cols[c].column)[r]);
      const double mean = stat_of(values).mean * cols[c].scale;
      means[c].push_back(mean);
      row.cells.push_back(format_value(mean, cols[c].decimals));
    }
    t.rows.push_back(std::move(row));
  }
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (cols[c].better != 0) t.mark_best(c + 1, means[c], cols[c].better > 0);
  }
  page.table("table-summary", t.render(),
             "Means over the runs (seeds) of each policy, from summary.csv. “GPU alloc % at X %” "
             "is the share of the cluster's GPUs allocated when the arrived GPU requests reach "
             "X % of capacity; fragmentation and power are taken at 100 %. Failed pods are pods "
             "that fitted on no node by the end of the run. The best value of each column is in "
             "bold.");
}

// ---------------------------------------------------------------------------------------------
// simulate: occupancy.csv.

void add_occupancy(Page& page, const Table& occ) {
  const auto& policy = occ.text("policy");
  const auto& seed = occ.text("seed");
  const auto& arrived = occ.num("arrived_gpu_pct");
  const auto& node = occ.text("node");
  const auto& model = occ.text("model");
  const auto& gpu = occ.num("gpu");
  const auto& used = occ.num("used_milli");

  // Snapshots in order of first appearance; show two, preferring different policies.
  struct Snapshot {
    std::string policy, seed;
    double arrived;
  };
  Keys keys;
  std::vector<Snapshot> snaps;
  std::vector<std::size_t> snap_of_row(occ.rows);
  for (std::size_t r = 0; r < occ.rows; ++r) {
    const std::size_t k =
        keys.add(fmt::format("{}\x1f{}\x1f{}", policy[r], seed[r], format_number(arrived[r], 6)));
    if (k == snaps.size()) snaps.push_back(Snapshot{policy[r], seed[r], arrived[r]});
    snap_of_row[r] = k;
  }
  std::vector<std::size_t> chosen;
  std::set<std::string> chosen_policies;
  for (std::size_t k = 0; k < snaps.size() && chosen.size() < 2; ++k) {
    if (chosen_policies.insert(snaps[k].policy).second) chosen.push_back(k);
  }
  for (std::size_t k = 0; k < snaps.size() && chosen.size() < 2; ++k) {
    if (std::find(chosen.begin(), chosen.end(), k) == chosen.end()) chosen.push_back(k);
  }
  std::sort(chosen.begin(), chosen.end());

  for (std::size_t c = 0; c < chosen.size(); ++c) {
    const std::size_t k = chosen[c];
    Keys nodes;
    std::vector<svg::MapNode> map_nodes;
    for (std::size_t r = 0; r < occ.rows; ++r) {
      if (snap_of_row[r] != k) continue;
      const std::size_t n = nodes.add(node[r]);
      if (n == map_nodes.size()) map_nodes.push_back(svg::MapNode{model[r], {}});
      auto& cells = map_nodes[n].used_milli;
      const auto g = static_cast<std::size_t>(gpu[r]);
      if (cells.size() <= g) cells.resize(g + 1, 0);
      cells[g] = static_cast<int>(std::lround(used[r]));
    }
    std::stable_sort(
        map_nodes.begin(), map_nodes.end(),
        [](const svg::MapNode& a, const svg::MapNode& b) { return a.group < b.group; });
    std::size_t gpus = 0, full = 0, partial = 0, free = 0;
    for (const svg::MapNode& n : map_nodes) {
      for (int u : n.used_milli) {
        ++gpus;
        if (u >= 1000) {
          ++full;
        } else if (u > 0) {
          ++partial;
        } else {
          ++free;
        }
      }
    }
    const Snapshot& s = snaps[k];
    svg::OccupancyMap map;
    const std::string id = fmt::format("chart-occupancy-{}", c + 1);
    map.id = id + "-svg";
    map.title = fmt::format(
        "GPU occupancy: {}, seed {}, when arrived GPU requests reached {} % of "
        "capacity",
        s.policy, s.seed, format_number(s.arrived, s.arrived == std::floor(s.arrived) ? 0 : 1));
    map.nodes = std::move(map_nodes);
    const std::string more =
        snaps.size() > chosen.size()
            ? fmt::format(" ({} of the {} snapshots in occupancy.csv are shown.)", chosen.size(),
                          snaps.size())
            : std::string();
    page.chart(
        id, svg::render_occupancy_map(map),
        fmt::format(
            "A picture of every GPU in the cluster at one moment of the run of policy "
            "<b>{}</b> (seed {}): each thin row is one node ({} nodes), each small cell in a row "
            "one of the node's GPUs ({} GPUs). A cell's shade is the share of that GPU allocated "
            "to pods, from white (free) to dark blue (fully used). Nodes are grouped by GPU "
            "model, named above each group and marked by the coloured strip on the left; read "
            "each column top to bottom, then the next column. Here {} GPUs are fully used, {} "
            "partly used and {} free. Partly used GPUs next to free ones are the fragments: "
            "capacity that is free but may be too small for the next pod.{}",
            escape(s.policy), escape(s.seed), map.nodes.size(), gpus, full, partial, free, more));
  }
}

// ---------------------------------------------------------------------------------------------
// simulate, replay mode: timeline.csv and summary.csv.

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

// "at 50 % load, gpu power pwr, sleep after 1800 s" for a setting key.
std::string describe_setting(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  for (std::size_t end = key.find('\x1f'); end != std::string::npos;
       pos = end + 1, end = key.find('\x1f', pos)) {
    parts.push_back(key.substr(pos, end - pos));
  }
  parts.resize(3);
  std::string out =
      parts[0].empty() ? "at the trace's own rate" : fmt::format("at {} % offered load", parts[0]);
  if (!parts[1].empty()) out += fmt::format(", GPU power rule {}", parts[1]);
  if (!parts[2].empty()) {
    out += parts[2] == "-1" ? ", nodes always on"
                            : fmt::format(", nodes sleep after {} s idle", parts[2]);
  }
  return out;
}

void add_replay_timeline(Page& page, const Table& tl) {
  const auto& policy = tl.text("policy");
  const auto& seed = tl.text("seed");
  const auto& time = tl.num("time_s");
  // Runs at several loads or settings: the time series of the first setting only.
  const std::string setting = tl.rows > 0 ? replay_setting(tl, 0, "load_pct") : "";
  bool several = false;
  for (std::size_t r = 0; r < tl.rows && !several; ++r) {
    several = replay_setting(tl, r, "load_pct") != setting;
  }
  const std::string setting_text =
      several ? fmt::format(" Shown {}; summary.csv has every setting.", describe_setting(setting))
              : std::string();
  constexpr std::size_t kMetrics = 5;
  const std::array<const std::vector<double>*, kMetrics> metric = {
      &tl.num("running_pods"), &tl.num("queued_pods"), &tl.num("allocated_gpus"),
      &tl.num("power_watts"), &tl.num("energy_joules")};
  const std::array<double, kMetrics> scale = {1, 1, 1, 1e-3, 1.0 / 3.6e6};
  struct Run {
    std::vector<double> t;
    std::array<std::vector<double>, kMetrics> v;
  };
  Keys policies;
  std::vector<Keys> seeds;
  std::vector<std::vector<Run>> runs;
  double t_max = 0;
  for (std::size_t r = 0; r < tl.rows; ++r) {
    if (several && replay_setting(tl, r, "load_pct") != setting) continue;
    const std::size_t p = policies.add(policy[r]);
    if (p == runs.size()) runs.emplace_back(), seeds.emplace_back();
    const std::size_t s = seeds[p].add(seed[r]);
    if (s == runs[p].size()) runs[p].emplace_back();
    Run& run = runs[p][s];
    run.t.push_back(time[r] / kDay);
    for (std::size_t m = 0; m < kMetrics; ++m) run.v[m].push_back((*metric[m])[r] * scale[m]);
    t_max = std::max(t_max, time[r] / kDay);
  }
  std::size_t max_seeds = 0;
  for (const auto& s : seeds) max_seeds = std::max(max_seeds, s.size());

  // Per policy and metric: one seed as it is; several seeds sampled on a common time grid
  // (the value in force at each grid time), as the mean with a min..max band.
  constexpr std::size_t kGrid = 1000;
  const auto series_of = [&](std::size_t p, std::size_t m) {
    svg::Series s;
    s.name = policies.names()[p];
    s.color = page.colors.color(s.name);
    const auto& rs = runs[p];
    if (rs.size() == 1) {
      for (std::size_t i = 0; i < rs[0].t.size(); ++i) {
        s.points.push_back(svg::Point{rs[0].t[i], rs[0].v[m][i]});
      }
      return s;
    }
    std::vector<std::size_t> cursor(rs.size(), 0);
    for (std::size_t g = 0; g <= kGrid; ++g) {
      const double t = t_max * static_cast<double>(g) / static_cast<double>(kGrid);
      std::vector<double> values;
      for (std::size_t k = 0; k < rs.size(); ++k) {
        const Run& run = rs[k];
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
  };
  const std::string seeds_text =
      (max_seeds > 1
           ? " With several seeds per policy, each line is the mean over the seeds of the value "
             "in force at each moment, and the shaded band spans the lowest to the highest seed."
           : std::string()) +
      setting_text;
  const auto band_legend = [&](svg::LineChart& chart) {
    if (max_seeds > 1) {
      chart.extra_legend.push_back(
          svg::LegendEntry{"band: min–max over seeds", "#777777", false, true});
    }
  };

  {
    svg::LineChart chart;
    chart.id = "chart-replay-pods-svg";
    chart.title = "Running and queued pods over time";
    chart.x_label = "Time (days)";
    chart.y_label = "Pods";
    for (std::size_t p = 0; p < policies.size(); ++p) {
      chart.series.push_back(series_of(p, 0));
      svg::Series queued = series_of(p, 1);
      queued.dashed = true;
      queued.in_legend = false;
      queued.name += " (queued)";
      chart.series.push_back(std::move(queued));
    }
    chart.extra_legend.push_back(svg::LegendEntry{"solid: running", "#444444", false, false});
    chart.extra_legend.push_back(svg::LegendEntry{"dashed: queued", "#444444", true, false});
    band_legend(chart);
    page.chart("chart-replay-pods", svg::render_line_chart(chart),
               "Pods running (solid lines) and pods waiting in the queue because they fit "
               "nowhere yet (dashed lines), over the replayed time, one colour per policy. A "
               "policy that leaves less capacity stranded keeps the queue shorter." +
                   seeds_text);
  }
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
       "The energy the cluster has used since the start of the replay; the last point of a line "
       "is the run's total energy. Lower is better."},
  };
  for (const auto& spec : specs) {
    svg::LineChart chart;
    chart.id = std::string(spec.id) + "-svg";
    chart.title = spec.title;
    chart.x_label = "Time (days)";
    chart.y_label = spec.y_label;
    for (std::size_t p = 0; p < policies.size(); ++p)
      chart.series.push_back(series_of(p, spec.metric));
    band_legend(chart);
    page.chart(spec.id, svg::render_line_chart(chart), spec.caption + seeds_text);
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
                : "a GPU with any allocation draws its max power (PWR paper)"));
  }
}

void add_replay_summary(Page& page, const Table& summary) {
  const auto& policy = summary.text("policy");
  const auto& queue = summary.text("queue");
  const bool loaded = summary.has("target_load_pct") && summary.has("gpu_power");
  // Runs are grouped by policy, queue and setting (load, GPU rule, sleep); seeds averaged.
  Keys groups;
  std::vector<std::vector<std::size_t>> rows_of;
  std::vector<std::array<std::string, 3>> names;  // policy, queue, setting key
  std::set<std::string> loads;
  for (std::size_t r = 0; r < summary.rows; ++r) {
    const std::string setting = loaded ? replay_setting(summary, r, "target_load_pct") : "";
    const std::size_t g = groups.add(policy[r] + "\x1f" + queue[r] + "\x1f" + setting);
    if (g == rows_of.size()) {
      rows_of.emplace_back();
      names.push_back({policy[r], queue[r], setting});
    }
    rows_of[g].push_back(r);
    if (loaded) loads.insert(setting.substr(0, setting.find('\x1f')));
  }
  if (loaded && loads.size() > 1 && summary.has("offered_load_pct")) {
    add_energy_against_load(page, summary);
  }
  struct Col {
    std::string column, header;
    double scale;
    int decimals;
    int better;
  };
  std::vector<Col> cols;
  if (loaded) {
    cols = {
        {"offered_load_pct", "Load (%)", 1, 1, 0},
        {"gpu_alloc_pct", "GPU alloc (%)", 1, 1, 0},
        {"energy_kwh", "Energy (MWh)", 1e-3, 1, -1},
        {"energy_over_floor", "Energy / floor", 1, 3, -1},
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
  std::erase_if(cols, [&](const Col& c) { return !summary.has(c.column); });
  HtmlTable t;
  t.headers = {"Policy", "Queue"};
  if (loaded) t.headers.insert(t.headers.end(), {"GPU power", "Nodes sleep"});
  t.headers.push_back("Runs");
  const std::size_t first_metric = t.headers.size() - 1;
  for (const Col& c : cols) t.headers.push_back(c.header);
  std::vector<std::vector<double>> means(cols.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    HtmlTable::Row row;
    row.name = names[g][0];
    row.color = page.colors.color(row.name);
    row.cells.push_back(names[g][1]);
    const std::size_t r0 = rows_of[g].front();
    if (loaded) {
      row.cells.push_back(summary.text("gpu_power")[r0]);
      const double sleep = summary.num("power_down_idle_s")[r0];
      row.cells.push_back(std::isfinite(sleep) && sleep >= 0 ? fmt::format("after {:g} s", sleep)
                                                             : "no");
    }
    row.cells.push_back(fmt::format("{}", rows_of[g].size()));
    for (std::size_t c = 0; c < cols.size(); ++c) {
      std::vector<double> values;
      for (std::size_t r : rows_of[g]) values.push_back(summary.num(cols[c].column)[r]);
      const double mean = stat_of(values).mean * cols[c].scale;
      means[c].push_back(mean);
      row.cells.push_back(format_value(mean, cols[c].decimals));
    }
    t.rows.push_back(std::move(row));
  }
  // Best values only mean something among runs at one load.
  if (loads.size() <= 1) {
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].better != 0) t.mark_best(c + first_metric, means[c], cols[c].better > 0);
    }
  }
  page.table(
      "table-replay-summary", t.render(),
      loaded ? "Means over the runs (seeds) of each policy and setting, from summary.csv, over "
               "the measured days (the warm-up excluded). Load is the offered GPU load; energy "
               "is facility energy; the floor is what an ideal energy-proportional cluster "
               "would draw for the same work (each running pod its share of its GPUs' and CPU's "
               "maximum power, nothing idle); nodes awake counts nodes drawing power. Waits "
               "run from a pod's arrival to its start, a node's wake-up included; pods that "
               "never started were still queued at the end."
             : "Means over the runs (seeds) of each policy and queue discipline, from "
               "summary.csv. Waits are from a pod's arrival to its start; pods that never "
               "started were still queued at the end. The best value of each column is in bold.");
}

// ---------------------------------------------------------------------------------------------
// greensched multi: summary.csv and timeline.csv.

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
               "to the left is better: the line is the trade-off an operator picks a slack on.");
  }
}

void add_multi_summary(Page& page, const Table& summary) {
  const auto& agent = summary.text("agent");
  // Rows differ by agent, and by load and slack when several were run.
  const auto varies = [&](const char* c) {
    if (!summary.has(c)) return false;
    std::set<double> v;
    for (double x : summary.num(c)) v.insert(std::isfinite(x) ? x : -1);
    return v.size() > 1;
  };
  const bool by_load = varies("target_load_pct");
  const bool by_slack = varies("slack_h");
  const bool by_controller = summary.has("controller") && [&] {
    const auto& c = summary.text("controller");
    return std::set<std::string>(c.begin(), c.end()).size() > 1;
  }();
  const auto label = [&](std::size_t r) {
    std::string l = agent[r];
    if (by_controller) l += " / " + summary.text("controller")[r];
    if (by_load) l += fmt::format(" @ {:g} %", summary.num("target_load_pct")[r]);
    if (by_slack) l += fmt::format(", slack {:g} h", summary.num("slack_h")[r]);
    return l;
  };
  if (by_slack && summary.has("p99_delay_s_be")) add_carbon_delay_frontier(page, summary);
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
                 measured);
  page.chart("chart-multi-energy", svg::render_bar_chart(energy),
             "Total energy the fleet used under each agent, including moving data between sites. "
             "An agent can save carbon without saving energy, by running work where and when "
             "the grid is cleaner." +
                 measured);
  page.body += "</div>\n";

  struct Col {
    std::string column, header;
    int decimals;
    int better;
  };
  // Two tables, so that each fits its card: outcomes, then movement and load.
  const std::vector<Col> outcome = {
      {"target_load_pct", "Load (%)", 0, 0},
      {"slack_h", "Slack (h)", -1, 0},
      {"energy_kwh", "Energy (kWh)", 0, -1},
      {"carbon_kg", "Carbon (kg)", 0, -1},
      {"", "Carbon vs local", 1, -1},
      {"mean_delay_s_ls", "LS wait, mean (s)", 1, -1},
      {"p99_delay_s_ls", "LS wait, p99 (s)", 0, -1},
      {"mean_delay_s_be", "BE wait, mean (s)", 0, -1},
      {"p99_delay_s_be", "BE wait, p99 (s)", 0, -1},
      {"ls_slo_violations", "LS SLO violations", -1, -1},
      {"jobs_never_started", "Never started", -1, -1},
  };
  const std::vector<Col> movement = {
      {"target_load_pct", "Load (%)", 0, 0},
      {"slack_h", "Slack (h)", -1, 0},
      {"offered_load_pct", "Offered load (%)", 1, 0},
      {"gpu_alloc_pct", "GPU alloc (%)", 1, 0},
      {"jobs", "Jobs", -1, 0},
      {"jobs_deferred", "Deferred", -1, 0},
      {"jobs_moved", "Jobs moved", -1, 0},
      {"gb_moved", "GB moved", 0, 0},
      {"transfer_kwh", "Transfer (kWh)", 1, 0},
  };
  const auto in_header = [&](const std::string& c) {
    return std::find(summary.header.begin(), summary.header.end(), c) != summary.header.end();
  };
  // Columns neither table knows are shown as they are (except the run time and the window).
  std::vector<std::size_t> extra;
  for (std::size_t i = 0; i < summary.header.size(); ++i) {
    const std::string& h = summary.header[i];
    if (h == "agent" || h == "wall_seconds" || h == "window_s") continue;
    const auto named = [&](const Col& c) { return c.column == h; };
    if (std::none_of(outcome.begin(), outcome.end(), named) &&
        std::none_of(movement.begin(), movement.end(), named)) {
      extra.push_back(i);
    }
  }
  const auto render = [&](const std::vector<Col>& known, bool with_extra) {
    std::vector<Col> cols;
    for (const Col& c : known) {
      if (c.column.empty() || in_header(c.column)) cols.push_back(c);
    }
    HtmlTable t;
    t.headers = {"Agent"};
    for (const Col& c : cols) t.headers.push_back(c.header);
    if (with_extra) {
      for (std::size_t i : extra) t.headers.push_back(summary.header[i]);
    }
    std::vector<std::vector<double>> values(cols.size());
    for (std::size_t r = 0; r < summary.rows; ++r) {
      HtmlTable::Row row;
      row.name = agent[r];
      row.color = page.colors.color(agent[r]);
      for (std::size_t c = 0; c < cols.size(); ++c) {
        double v = kNaN;
        if (cols[c].column.empty()) {
          const double base = local_carbon(summary, r);
          v = base > 0 ? (summary.num("carbon_kg")[r] / base - 1) * 100 : kNaN;
          row.cells.push_back(std::isfinite(v) ? fmt::format("{:+.1f} %", v) : "–");
        } else {
          v = summary.num(cols[c].column)[r];
          row.cells.push_back(std::isfinite(v) ? format_value(v, cols[c].decimals) : "–");
        }
        values[c].push_back(v);
      }
      if (with_extra) {
        for (std::size_t i : extra) row.cells.push_back(summary.cells[r][i]);
      }
      t.rows.push_back(std::move(row));
    }
    if (!by_load && !by_slack) {
      for (std::size_t c = 0; c < cols.size(); ++c) {
        if (cols[c].better != 0) t.mark_best(c, values[c], cols[c].better > 0);
      }
    }
    return t.render();
  };
  page.table("table-multi-summary", render(outcome, false),
             "One row per dispatch agent (and load and slack, where several were run), from "
             "summary.csv. “Carbon vs local” compares with the local agent at the same load and "
             "slack (the first row where there is none). Load is the offered GPU load of the "
             "whole fleet; energy and carbon are those of the measured days. Waits run from a "
             "job's submission to its start: LS are latency-sensitive jobs, BE best-effort jobs "
             "that may be deferred up to the slack; an LS SLO violation is an LS job that "
             "started later than its bound. Where one load and slack were run, the best value "
             "of each column is in bold.");
  page.table("table-multi-movement", render(movement, true),
             "The same runs: offered load and time-weighted GPU allocation of the fleet, jobs "
             "deferred by the agent, and jobs moved away from their home site with the data and "
             "network energy that took.");
}

void add_multi_timeline(Page& page, const Table& tl) {
  // Runs at several loads or slacks: the time series of the first one only.
  const auto setting_of = [&](std::size_t r) {
    std::string key;
    for (const char* c : {"load_pct", "slack_h"}) key += (tl.has(c) ? tl.text(c)[r] : "") + "\x1f";
    return key;
  };
  const std::string first_setting = tl.rows > 0 ? setting_of(0) : "";
  bool several = false;
  for (std::size_t r = 0; r < tl.rows && !several; ++r) several = setting_of(r) != first_setting;
  const std::string setting_text =
      several && tl.has("load_pct") && tl.has("slack_h")
          ? fmt::format(" Shown at {} % fleet load with {} h slack; summary.csv has every run.",
                        tl.text("load_pct")[0], tl.text("slack_h")[0])
          : std::string();
  const auto& agent = tl.text("agent");
  const auto& site = tl.text("site");
  const auto& time = tl.num("time_s");
  const auto& carbon = tl.num("carbon_kg");
  const auto& intensity = tl.num("carbon_intensity");
  const auto& queued = tl.num("queued_jobs");
  const auto& waiting = tl.num("waiting_jobs");
  if (tl.rows == 0) return;
  const std::string& first_agent = agent[0];

  Keys sites;
  std::vector<svg::Series> site_series;
  Keys agents;
  std::vector<svg::Series> carbon_series, queue_series;
  for (std::size_t r = 0; r < tl.rows; ++r) {
    if (several && setting_of(r) != first_setting) continue;
    const double t = time[r] / kDay;
    if (site[r] == "fleet") {
      const std::size_t a = agents.add(agent[r]);
      if (a == carbon_series.size()) {
        svg::Series s;
        s.name = agent[r];
        s.color = page.colors.color(s.name);
        carbon_series.push_back(s);
        queue_series.push_back(s);
      }
      carbon_series[a].points.push_back(svg::Point{t, carbon[r]});
      queue_series[a].points.push_back(svg::Point{t, queued[r] + waiting[r]});
    } else if (agent[r] == first_agent) {
      const std::size_t s = sites.add(site[r]);
      if (s == site_series.size()) {
        svg::Series series;
        series.name = site[r];
        series.color = page.colors.color("site:" + site[r]);
        site_series.push_back(series);
      }
      site_series[s].points.push_back(svg::Point{t, intensity[r]});
    }
  }
  if (!site_series.empty()) {
    svg::LineChart chart;
    chart.id = "chart-multi-intensity-svg";
    chart.title = "Grid carbon intensity per site";
    chart.x_label = "Time (days)";
    chart.y_label = "Carbon intensity (g CO₂/kWh)";
    chart.series = std::move(site_series);
    page.chart("chart-multi-intensity", svg::render_line_chart(chart),
               "How much carbon each site's electricity grid emits per kWh over time, one line "
               "per site. This is the grid's, the same whichever agent runs; work placed or "
               "deferred into the low parts of these lines emits less.");
  }
  if (!carbon_series.empty()) {
    svg::LineChart chart;
    chart.id = "chart-multi-carbon-time-svg";
    chart.title = "Cumulative carbon of the fleet over time";
    chart.x_label = "Time (days)";
    chart.y_label = "Carbon since the start (kg CO₂)";
    chart.series = std::move(carbon_series);
    page.chart("chart-multi-carbon-time", svg::render_line_chart(chart),
               "Carbon emitted by the whole fleet since the start, one line per agent; the last "
               "point is the total. A flatter line is better; where lines part, one agent ran "
               "work on cleaner grids or at cleaner hours." +
                   setting_text);
    svg::LineChart q;
    q.id = "chart-multi-queue-svg";
    q.title = "Jobs waiting in the fleet over time";
    q.x_label = "Time (days)";
    q.y_label = "Jobs waiting (queued + deferred)";
    q.series = std::move(queue_series);
    page.chart("chart-multi-queue", svg::render_line_chart(q),
               "Jobs submitted but not yet running, in the whole fleet, one line per agent: jobs "
               "queued at a site because they do not fit yet, plus jobs the agent deliberately "
               "deferred to a later, cleaner hour. Deferring best-effort jobs saves carbon at the "
               "cost of waiting." +
                   setting_text);
  }
}

// ---------------------------------------------------------------------------------------------
// Decision records: the last N failed pods.

// True when the line may hold `"chosen_node": null` (checked properly after parsing).
bool may_be_failed(std::string_view line) {
  for (std::size_t pos = line.find("\"chosen_node\""); pos != std::string_view::npos;
       pos = line.find("\"chosen_node\"", pos + 1)) {
    std::size_t i = pos + 13;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size() || line[i] != ':') continue;
    ++i;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (line.substr(i, 4) == "null") return true;
  }
  return false;
}

Status add_failed_pods(Page& page, const std::string& path, int limit) {
  auto content = trace::read_file(path);
  if (!content.ok()) return Error{content.error()};
  const std::string& text = content.value();
  struct Failed {
    std::size_t line;
    nlohmann::json record;
  };
  std::deque<Failed> last;
  std::size_t records = 0;
  std::size_t failed = 0;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    ++records;
    if (!may_be_failed(line)) continue;
    auto parsed = explain::parse_decision_record(line, fmt::format("{}:{}", path, line_no));
    if (!parsed.ok()) return parsed.status().error();
    nlohmann::json& record = parsed.value();
    if (!record.contains("chosen_node") || !record["chosen_node"].is_null()) continue;
    ++failed;
    last.push_back(Failed{line_no, std::move(record)});
    if (last.size() > static_cast<std::size_t>(std::max(limit, 0))) last.pop_front();
  }
  page.section("sec-failed", "Why pods failed",
               fmt::format("From the decision records in <code>{}</code>: {} of {} are pods that "
                           "could not be placed on any node. {}",
                           escape(path), failed, plural(records, "record", "records"),
                           last.empty()       ? std::string()
                           : last.size() == 1 ? std::string("The last one is explained below.")
                                              : fmt::format("The last {} are explained below, in "
                                                            "the order they happened.",
                                                            last.size())));
  std::string body = "<div class=\"failed-pods\" id=\"failed-pods\">\n";
  for (const Failed& f : last) {
    const nlohmann::json& r = f.record;
    std::vector<std::string> facts;
    if (r.contains("run") && r["run"].is_object()) {
      const auto& run = r["run"];
      if (run.contains("policy") && run["policy"].is_string()) {
        facts.push_back("policy " + run["policy"].get<std::string>());
      }
      if (run.contains("seed")) facts.push_back("seed " + run["seed"].dump());
    } else if (r.contains("policy") && r["policy"].is_string()) {
      facts.push_back("policy " + r["policy"].get<std::string>());
    }
    if (r.contains("step") && r["step"].is_number()) facts.push_back("step " + r["step"].dump());
    facts.push_back(fmt::format("line {}", f.line));
    const std::string pod =
        r.contains("pod") && r["pod"].is_string() ? r["pod"].get<std::string>() : "pod";
    const std::string explanation = explain::explain_text(r);
    std::string joined;
    for (const std::string& fact : facts) joined += (joined.empty() ? "" : ", ") + fact;
    body += fmt::format(
        "<article class=\"failed-pod\"><h3>{} <small>({})</small></h3>\n<pre>{}"
        "</pre></article>\n",
        escape(pod), escape(joined), escape(explanation));
  }
  body += "</div>\n";
  page.figures.push_back("failed-pods");
  page.body += body;
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------

const char* const kStyle = R"(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f5f7; color: #1f2328;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header, main, footer { max-width: 1240px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 24px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 0 0 6px; }
h3 { font-size: 15px; margin: 14px 0 4px; }
h3 small { font-weight: normal; color: #57606a; }
p.meta { color: #57606a; margin: 0 0 8px; }
nav ul { display: flex; flex-wrap: wrap; gap: 6px 18px; list-style: none; padding: 0; margin: 8px 0; }
nav a { color: #0b5cad; text-decoration: none; }
nav a:hover { text-decoration: underline; }
section { background: #fff; border: 1px solid #dfe2e6; border-radius: 8px; padding: 18px 22px;
  margin: 18px 0; }
p.intro { margin: 0 0 8px; max-width: 92ch; }
figure { margin: 22px 0 10px; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #4b535c; font-size: 13px; max-width: 100ch; margin-top: 4px; }
figure.table figcaption { margin: 0 0 8px; }
.row { display: flex; flex-wrap: wrap; gap: 0 16px; }
.row figure { flex: 1 1 440px; min-width: 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13px; }
th, td { padding: 5px 8px; text-align: right; border-bottom: 1px solid #eceef1; white-space: nowrap; }
th { background: #f6f8fa; font-weight: 600; border-bottom: 1px solid #d0d7de;
  white-space: normal; max-width: 9em; vertical-align: bottom; line-height: 1.25; }
th:first-child, td.name { text-align: left; }
td.best { font-weight: 700; }
tbody tr:hover { background: #f6f8fa; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
  margin-right: 7px; vertical-align: -1px; }
pre { white-space: pre-wrap; background: #f6f8fa; border: 1px solid #eceef1; border-radius: 6px;
  padding: 10px 12px; font-size: 12.5px; line-height: 1.45; margin: 4px 0 12px; }
code { font-size: 12.5px; }
footer { color: #6e7781; font-size: 12px; padding-bottom: 30px; }
)";

// Sets data-report-check="ok" on <body> when every chart drew something; a headless browser
// test reads it back from the DOM.
const char* const kScript = R"(
(function () {
  var figures = document.querySelectorAll("figure.chart");
  var ok = true;
  for (var i = 0; i < figures.length; i++) {
    var svg = figures[i].querySelector("svg");
    if (!svg || !svg.querySelector("path, rect")) ok = false;
  }
  document.body.setAttribute("data-report-check", ok ? "ok" : "empty-chart");
})();
)";

}  // namespace

Result<HtmlReport> build_html_report(const HtmlReportOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(options.in_dir, ec)) {
    return Error{fmt::format("{}: not a directory", options.in_dir)};
  }
  const auto path_of = [&](const char* name) { return (fs::path(options.in_dir) / name).string(); };
  const auto exists = [&](const std::string& path) { return fs::is_regular_file(path, ec); };
  HtmlReport report;
  Page page;

  const std::string curves_path = path_of("curves.csv");
  const std::string summary_path = path_of("summary.csv");
  const std::string occupancy_path = path_of("occupancy.csv");
  const std::string timeline_path = path_of("timeline.csv");
  std::string record_path = options.record;
  if (record_path.empty() && exists(path_of("decisions.jsonl"))) {
    record_path = path_of("decisions.jsonl");
  }

  // Which kind of summary.csv and timeline.csv this directory holds.
  std::string summary_kind;  // inflation, replay, multi, or "" (absent)
  std::optional<Table> summary;
  if (exists(summary_path)) {
    const std::vector<std::string> header = header_of(summary_path);
    const bool has_queue = std::find(header.begin(), header.end(), "queue") != header.end();
    std::vector<Column> cols;
    if (!header.empty() && header[0] == "agent") {
      summary_kind = "multi";
      cols = {text_col("agent"), num_col("energy_kwh"), num_col("carbon_kg"),
              text_col("controller", false)};
      for (const char* c : {"mean_delay_s_ls", "mean_delay_s_be", "p99_delay_s_be",
                            "ls_slo_violations", "jobs_moved", "gb_moved", "gpu_alloc_pct",
                            "jobs_never_started", "jobs", "jobs_deferred", "transfer_kwh",
                            "target_load_pct", "offered_load_pct", "slack_h", "p99_delay_s_ls"}) {
        cols.push_back(num_col(c, true, false));
      }
    } else if (has_queue) {
      summary_kind = "replay";
      cols = {text_col("policy"), text_col("seed"), text_col("queue")};
      for (const char* c :
           {"pods_total", "pods_started", "pods_never_started", "pods_requeued",
            "mean_queue_delay_s", "p99_queue_delay_s", "energy_kwh", "makespan_s",
            "power_down_idle_s", "target_load_pct", "offered_load_pct", "energy_floor_kwh",
            "energy_over_floor", "kwh_per_gpu_hour", "gpu_alloc_pct", "mean_nodes_awake",
            "ls_p99_delay_s", "be_p99_delay_s"}) {
        cols.push_back(num_col(c, true, false));
      }
      cols.push_back(text_col("gpu_power", false));
    } else {
      summary_kind = "inflation";
      cols = {text_col("policy"), text_col("seed"), num_col("pods_failed"),
              num_col("alloc_gpu_pct_at_100", true)};
      for (const char* c : {"alloc_gpu_pct_at_90", "alloc_gpu_pct_at_130", "frag_gpu_milli_at_100",
                            "power_watts_at_100"}) {
        cols.push_back(num_col(c, true, false));
      }
    }
    auto t = read_table(summary_path, cols, summary_kind == "multi");
    if (!t.ok()) return Error{t.error()};
    summary = std::move(t.value());
    report.inputs.push_back(summary_path);
  }

  std::optional<Table> curves;
  if (exists(curves_path)) {
    auto t =
        read_table(curves_path, {text_col("policy"), text_col("seed"), num_col("arrived_gpu_pct"),
                                 num_col("alloc_gpu_pct", true), num_col("frag_gpu_milli", true),
                                 num_col("power_watts", true, false)});
    if (!t.ok()) return Error{t.error()};
    curves = std::move(t.value());
    report.inputs.push_back(curves_path);
  }
  std::optional<Table> occupancy;
  if (exists(occupancy_path)) {
    auto t = read_table(occupancy_path,
                        {text_col("policy"), text_col("seed"), num_col("arrived_gpu_pct"),
                         text_col("node"), text_col("model"), bounded_col("gpu", 0, 1023, true),
                         bounded_col("used_milli", 0, 1000, false)});
    if (!t.ok()) return Error{t.error()};
    occupancy = std::move(t.value());
    report.inputs.push_back(occupancy_path);
  }
  std::optional<Table> timeline;
  std::string timeline_kind;
  if (exists(timeline_path)) {
    std::vector<Column> cols;
    const std::vector<std::string> header = header_of(timeline_path);
    if (!header.empty() && header[0] == "agent") {
      timeline_kind = "multi";
      cols = {text_col("agent"),       num_col("time_s"),           text_col("site"),
              num_col("carbon_kg"),    num_col("carbon_intensity"), num_col("queued_jobs"),
              num_col("waiting_jobs"), text_col("load_pct", false), text_col("slack_h", false)};
    } else {
      timeline_kind = "replay";
      cols = {text_col("policy"),
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
    auto t = read_table(timeline_path, cols);
    if (!t.ok()) return Error{t.error()};
    timeline = std::move(t.value());
    report.inputs.push_back(timeline_path);
  }

  // Sections, in a fixed order.
  if (curves || summary_kind == "inflation") {
    page.section("sec-inflation", "Cluster filling up (inflation runs)",
                 "Each run feeds pods to the cluster until the arrived GPU requests reach a "
                 "multiple of its GPU capacity, and records how full, how fragmented and how "
                 "power-hungry the cluster is along the way. One colour per policy, the same in "
                 "every chart.");
    if (curves) add_inflation_curves(page, *curves);
    if (summary_kind == "inflation") add_inflation_summary(page, *summary);
  }
  if (occupancy) {
    page.section("sec-occupancy", "GPU occupancy maps",
                 "Snapshots of every GPU of the cluster at one moment of a run, from "
                 "occupancy.csv.");
    add_occupancy(page, *occupancy);
  }
  if (timeline_kind == "replay" || summary_kind == "replay") {
    page.section("sec-replay", "Time replay",
                 "Pods arrive at their trace times, run for their trace lifetimes and wait in a "
                 "queue when they fit nowhere. Time runs along the horizontal axis in days.");
    if (timeline_kind == "replay") add_replay_timeline(page, *timeline);
    if (summary_kind == "replay") add_replay_summary(page, *summary);
  }
  if (timeline_kind == "multi" || summary_kind == "multi") {
    page.section("sec-multi", "Multi-cluster dispatch",
                 "Jobs are submitted to sites in several regions; a dispatch agent decides where "
                 "and when each one runs. One colour per agent, the same in every chart.");
    if (summary_kind == "multi") add_multi_summary(page, *summary);
    if (timeline_kind == "multi") add_multi_timeline(page, *timeline);
  }
  if (exists(path_of("energy_timeline.csv"))) {
    const std::string energy_path = path_of("energy_timeline.csv");
    auto figures =
        energy_figures(energy_path, summary_kind == "multi" ? summary_path : "", page.colors);
    if (!figures.ok()) return Error{figures.error()};
    if (!figures.value().empty()) {
      page.section("sec-energy", "Site energy",
                   "Each site serves its hourly demand from on-site solar and wind, its "
                   "battery and the grid; a site energy controller decides the battery, after "
                   "dispatch, on the demand the replay produced.");
      for (const EnergyFigure& f : figures.value()) page.chart(f.id, f.svg, f.caption_html);
    }
    report.inputs.push_back(energy_path);
  }
  if (!record_path.empty() && options.failed > 0) {
    if (Status s = add_failed_pods(page, record_path, options.failed); !s.ok()) {
      return Error{s.message()};
    }
    report.inputs.push_back(record_path);
  }
  if (page.toc.empty()) {
    return Error{fmt::format(
        "{}: no greensched results found (looked for curves.csv, summary.csv, occupancy.csv, "
        "timeline.csv, decisions.jsonl)",
        options.in_dir)};
  }
  page.body += "</section>\n";

  std::string inputs;
  for (const std::string& p : report.inputs) {
    inputs += (inputs.empty() ? "" : ", ") +
              fmt::format("<code>{}</code>", escape(fs::path(p).filename().string()));
  }
  std::string toc;
  for (const auto& [id, heading] : page.toc) {
    toc += fmt::format("<li><a href=\"#{}\">{}</a></li>", escape(id), escape(heading));
  }
  std::string& html = report.html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // Nothing may be fetched: the page is complete as it is.
  html +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n";
  html +=
      fmt::format("<meta name=\"generator\" content=\"greensched report\">\n<title>{}</title>\n",
                  escape(options.title));
  html += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  html += fmt::format(
      "<header>\n<h1>{}</h1>\n<p class=\"meta\">Made by <code>greensched report</code> from "
      "<code>{}</code>: {}.</p>\n<nav><ul>{}</ul></nav>\n</header>\n<main>\n",
      escape(options.title), escape(options.in_dir), inputs, toc);
  html += page.body;
  html +=
      "</main>\n<footer>greensched — charts are inline SVG; the page loads nothing from the "
      "network.</footer>\n";
  html += fmt::format("<script>{}</script>\n</body>\n</html>\n", kScript);
  report.figures = std::move(page.figures);
  return report;
}

}  // namespace greensched::report
