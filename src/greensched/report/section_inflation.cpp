// simulate, inflation mode: curves.csv (allocation, fragmentation and power as the cluster
// fills, mean and min..max band over seeds) and summary.csv (a table of means per policy).
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "greensched/report/chart_facts.hpp"
#include "greensched/report/section.hpp"
#include "greensched/report/stat.hpp"

namespace greensched::report {
namespace {

using svg::escape;

// curves.csv grouped by policy: the seeds seen and, per arrival point, each metric's values.
struct Curves {
  static constexpr std::size_t kMetrics = 3;  // alloc_gpu_pct, frag_gpu_milli, power_watts
  struct Agg {
    std::set<std::string> seeds;
    std::map<double, std::array<std::vector<double>, kMetrics>> bins;
  };
  Keys policies;
  std::vector<Agg> aggs;
  std::size_t min_seeds = SIZE_MAX;
  std::size_t max_seeds = 0;
  double x_max = 0;
};

Curves group_curves(const Table& curves) {
  const auto& policy = curves.text("policy");
  const auto& seed = curves.text("seed");
  const auto& x = curves.num("arrived_gpu_pct");
  const std::array<const std::vector<double>*, Curves::kMetrics> metric = {
      &curves.num("alloc_gpu_pct"), &curves.num("frag_gpu_milli"), &curves.num("power_watts")};
  Curves c;
  for (std::size_t r = 0; r < curves.rows; ++r) {
    const std::size_t p = c.policies.add(policy[r]);
    if (p == c.aggs.size()) c.aggs.emplace_back();
    c.aggs[p].seeds.insert(seed[r]);
    auto& bin = c.aggs[p].bins[x[r]];
    for (std::size_t m = 0; m < metric.size(); ++m) bin[m].push_back((*metric[m])[r]);
  }
  for (const Curves::Agg& a : c.aggs) {
    c.max_seeds = std::max(c.max_seeds, a.seeds.size());
    c.min_seeds = std::min(c.min_seeds, a.seeds.size());
    if (!a.bins.empty()) c.x_max = std::max(c.x_max, a.bins.rbegin()->first);
  }
  return c;
}

struct CurveSpec {
  std::string id, title, y_label;
  std::size_t metric;
  double scale;
  std::string caption;
};

std::vector<CurveSpec> curve_specs(const std::string& band_text) {
  return {
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
}

svg::LineChart curve_chart(Page& page, const Curves& c, const CurveSpec& spec, bool bands) {
  svg::LineChart chart;
  chart.id = spec.id + "-svg";
  chart.title = spec.title;
  chart.x_label = "Arrived GPU requests (% of cluster GPU capacity)";
  chart.y_label = spec.y_label;
  for (std::size_t p = 0; p < c.policies.size(); ++p) {
    svg::Series s;
    s.name = c.policies.names()[p];
    s.color = page.colors.color(s.name);
    for (const auto& [bin, values] : c.aggs[p].bins) {
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
  return chart;
}

void add_inflation_curves(Page& page, const Table& curves) {
  const Curves c = group_curves(curves);
  const std::string seeds_text = c.min_seeds == c.max_seeds
                                     ? plural(c.max_seeds, "seed", "seeds")
                                     : fmt::format("{} to {} seeds", c.min_seeds, c.max_seeds);
  const bool bands = c.max_seeds > 1;
  const std::string band_text =
      bands ? fmt::format(
                  " Each line is the mean over {} of the policy; the shaded band around "
                  "it spans the lowest to the highest seed.",
                  escape(seeds_text))
            : fmt::format(" One run ({}) per policy.", escape(seeds_text));
  for (const CurveSpec& spec : curve_specs(band_text)) {
    svg::LineChart chart = curve_chart(page, c, spec, bands);
    page.chart(spec.id, svg::render_line_chart(chart), spec.caption, chart_facts(chart));
    if (spec.metric == 0 && c.x_max >= 95) {
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
                 "policy keeps in use and the other leaves stranded.",
                 chart_facts(chart));
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
  const std::vector<MeanColumn> cols = {
      {"alloc_gpu_pct_at_90", "GPU alloc\u00a0% at\u00a090\u00a0%", 1, 2, +1},
      {"alloc_gpu_pct_at_100", "GPU alloc\u00a0% at\u00a0100\u00a0%", 1, 2, +1},
      {"alloc_gpu_pct_at_130", "GPU alloc\u00a0% at\u00a0130\u00a0%", 1, 2, +1},
      {"frag_gpu_milli_at_100", "Fragmented GPUs at\u00a0100\u00a0%", 1e-3, 1, -1},
      {"power_watts_at_100", "Power at\u00a0100\u00a0% (kW)", 1e-3, 1, 0},
      {"pods_failed", "Failed pods", 1, -1, -1},
  };
  HtmlTable t;
  t.headers = {"Policy", "Runs"};
  for (const MeanColumn& c : cols) t.headers.push_back(c.header);
  std::vector<std::vector<double>> means(cols.size());
  for (std::size_t p = 0; p < policies.size(); ++p) {
    HtmlTable::Row row;
    row.name = policies.names()[p];
    row.color = page.colors.color(row.name);
    row.cells.push_back(fmt::format("{}", rows_of[p].size()));
    add_means(row, summary, cols, rows_of[p], means);
    t.rows.push_back(std::move(row));
  }
  mark_best_means(t, cols, means, 1);
  page.table("table-summary", t.render(),
             "Means over the runs (seeds) of each policy, from summary.csv. “GPU alloc % at X %” "
             "is the share of the cluster's GPUs allocated when the arrived GPU requests reach "
             "X % of capacity; fragmentation and power are taken at 100 %. Failed pods are pods "
             "that fitted on no node by the end of the run. The best value of each column is in "
             "bold.");
}

}  // namespace

std::vector<Column> inflation_curve_columns() {
  return {text_col("policy"),
          text_col("seed"),
          num_col("arrived_gpu_pct"),
          num_col("alloc_gpu_pct", true),
          num_col("frag_gpu_milli", true),
          num_col("power_watts", true, false)};
}

std::vector<Column> inflation_summary_columns() {
  std::vector<Column> cols = {text_col("policy"), text_col("seed"), num_col("pods_failed"),
                              num_col("alloc_gpu_pct_at_100", true)};
  for (const char* c : {"alloc_gpu_pct_at_90", "alloc_gpu_pct_at_130", "frag_gpu_milli_at_100",
                        "power_watts_at_100"}) {
    cols.push_back(num_col(c, true, false));
  }
  return cols;
}

void add_inflation_section(Page& page, const Table* curves, const Table* summary) {
  page.section("sec-inflation", "Cluster filling up (inflation runs)",
               "Each run feeds pods to the cluster until the arrived GPU requests reach a "
               "multiple of its GPU capacity, and records how full, how fragmented and how "
               "power-hungry the cluster is along the way. One colour per policy, the same in "
               "every chart.");
  if (curves != nullptr) add_inflation_curves(page, *curves);
  if (summary != nullptr) add_inflation_summary(page, *summary);
}

}  // namespace greensched::report
