// The HTML report and its SVG chart builder: results directories made by hand with tiny CSVs,
// rendered, and checked for the charts, axis titles, legends, escaping, no network resources,
// file:line errors on malformed input, and byte-identical output; the CSV table reader.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>

#include <fmt/format.h>

#include "greensched/explain/explanation.hpp"
#include "greensched/report/compare.hpp"
#include "greensched/report/csv_table.hpp"
#include "greensched/report/decision_chart.hpp"
#include "greensched/report/html_report.hpp"
#include "greensched/report/page.hpp"
#include "greensched/report/svg_chart.hpp"
#include "greensched/trace/csv.hpp"
#include "scratch_dir.hpp"

namespace greensched::report {
namespace {

namespace fs = std::filesystem;

using testing::ScratchDir;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(part); pos != std::string::npos;
       pos = text.find(part, pos + part.size())) {
    ++n;
  }
  return n;
}

// The page loads nothing: no URLs, no external scripts, styles, images or fonts. (The SVG
// namespace of an inline decision chart names no resource: it is left out of the check.)
void expect_no_network(std::string html) {
  const std::string svg_namespace = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (std::size_t at = html.find(svg_namespace); at != std::string::npos;
       at = html.find(svg_namespace, at)) {
    html.erase(at, svg_namespace.size());
  }
  EXPECT_FALSE(has(html, "http:"));
  EXPECT_FALSE(has(html, "https:"));
  EXPECT_FALSE(has(html, "src="));
  EXPECT_FALSE(has(html, "<link"));
  EXPECT_FALSE(has(html, "@import"));
  EXPECT_FALSE(has(html, "url(/"));
  EXPECT_FALSE(has(html, "//cdn"));
}

// Two policies (one with a name that needs escaping) over two seeds, bins 0..2, one empty cell.
const char* const kCurves =
    "policy,seed,arrived_gpu_pct,alloc_gpu_pct,frag_gpu_milli,events,power_watts\n"
    "fgd,1,0,0.0,1000.0,3,1000.0\n"
    "fgd,1,1,1.0,1500.0,2,2000.0\n"
    "fgd,1,2,2.0,2000.0,2,3000.0\n"
    "fgd,2,0,0.0,1000.0,3,1000.0\n"
    "fgd,2,1,,,0,\n"
    "fgd,2,2,1.8,2500.0,2,3100.0\n"
    "a<b>&c,1,0,0.0,900.0,3,900.0\n"
    "a<b>&c,1,1,0.9,1200.0,2,1900.0\n"
    "a<b>&c,1,2,1.7,2600.0,2,2900.0\n";

const char* const kSummary =
    "policy,seed,pods_arrived,pods_scheduled,pods_failed,alloc_gpu_pct_at_100,"
    "alloc_gpu_pct_at_90,alloc_gpu_pct_at_130,frag_gpu_milli_at_100,final_alloc_gpu_pct,"
    "power_watts_at_100,tune,wall_seconds\n"
    "fgd,1,10,9,1,95.0,90.0,95.5,300000.0,95.6,1400000.0,1.3,0.1\n"
    "fgd,2,10,8,2,95.5,90.0,95.7,290000.0,95.8,1410000.0,1.3,0.1\n"
    "a<b>&c,1,10,7,3,90.0,88.0,90.5,500000.0,90.6,1300000.0,1.3,0.1\n";

std::string occupancy_csv() {
  std::string s = "policy,seed,arrived_gpu_pct,node,model,gpu,used_milli\n";
  const char* rows[] = {"n1,V100,0,1000", "n1,V100,1,500", "n2,T4,0,0", "n3,V100,0,250",
                        "n3,V100,1,0"};
  for (const char* policy : {"fgd", "a<b>&c", "third"}) {
    for (const char* r : rows) s += fmt::format("{},1,100,{}\n", policy, r);
  }
  return s;
}

Result<HtmlReport> build(const std::string& dir, int failed = 10, std::string record = "") {
  HtmlReportOptions o;
  o.in_dir = dir;
  o.title = "Test <report> & co";
  o.failed = failed;
  o.record = std::move(record);
  return build_html_report(o);
}

// ---------------------------------------------------------------------------------------------
// CSV tables.

TEST(ReportTable, QuotedFields) {
  ScratchDir dir;
  const std::string path = dir.write("t.csv",
                                     "agent,site,energy_kwh\n"
                                     "\"green, oracle\",\"say \"\"hi\"\"\",1.5\n"
                                     "\"two\nlines\",\"\",2\n"
                                     "plain,a\"b,3\n");
  auto t = read_table(path, {text_col("agent"), text_col("site"), num_col("energy_kwh")});
  ASSERT_TRUE(t.ok()) << t.error();
  ASSERT_EQ(t.value().rows, 3u);
  EXPECT_EQ(t.value().text("agent"),
            (std::vector<std::string>{"green, oracle", "two\nlines", "plain"}));
  EXPECT_EQ(t.value().text("site"), (std::vector<std::string>{"say \"hi\"", "", "a\"b"}));
  EXPECT_EQ(t.value().num("energy_kwh"), (std::vector<double>{1.5, 2, 3}));
}

// Other readers of trace::CsvReader keep quotes as ordinary characters.
TEST(ReportTable, QuotesAreOrdinaryUnlessAllowed) {
  const std::string text = "a,b\n\"x,y\",z\n";
  trace::CsvReader plain(text, "t.csv");
  ASSERT_TRUE(plain.read_header().ok());
  ASSERT_TRUE(plain.next());
  EXPECT_EQ(plain.fields().size(), 3u);
  trace::CsvReader quoted(text, "t.csv");
  quoted.allow_quotes();
  ASSERT_TRUE(quoted.read_header().ok());
  ASSERT_TRUE(quoted.next());
  ASSERT_EQ(quoted.fields().size(), 2u);
  EXPECT_EQ(quoted.fields()[0], "x,y");
  EXPECT_TRUE(quoted.row_status().ok());
}

TEST(ReportTable, ColumnsChosenFromTheHeaderAndOptionalOnesFilled) {
  ScratchDir dir;
  const std::string path = dir.write("t.csv", "\"agent\",x\nlocal,1\ngreen,\n");
  std::vector<std::string> seen;
  auto t = read_table(path, [&](const std::vector<std::string>& header) {
    seen = header;
    return TableSpec{
        {text_col("agent"), num_col("x", true), num_col("y", false, false), text_col("z", false)},
        true};
  });
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(seen, (std::vector<std::string>{"agent", "x"}));
  EXPECT_TRUE(t.value().has("x"));
  EXPECT_FALSE(t.value().has("y"));
  EXPECT_TRUE(std::isnan(t.value().num("x")[1]));
  EXPECT_TRUE(std::isnan(t.value().num("y")[0]));
  EXPECT_EQ(t.value().text("z"), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(t.value().cells[1], (std::vector<std::string>{"green", ""}));
}

TEST(ReportTable, BadRowsGiveFileAndLine) {
  ScratchDir dir;
  const auto error = [&](const std::string& text) {
    const std::string path = dir.write("bad.csv", text);
    auto t = read_table(path, {text_col("a"), bounded_col("n", 0, 10, true)});
    return t.ok() ? std::string("ok") : t.error().substr(path.size() - 7);
  };
  EXPECT_EQ(error("a,n\nx,1\ny,2,3\n"), "bad.csv:3: 3 fields, but the header has 2 columns");
  EXPECT_EQ(error("a,n\n\"x,1\n"), "bad.csv:2: a quoted field is not closed");
  EXPECT_EQ(error("a,n\n\"x\"y,1\n"), "bad.csv:2: text after a closing quote");
  EXPECT_EQ(error("a,m\nx,1\n"), "bad.csv:1: missing column 'n'");
  EXPECT_EQ(error("a,n\nx,one\n"), "bad.csv:2: column 'n': 'one' is not a number");
  EXPECT_EQ(error("a,n\nx,\n"), "bad.csv:2: column 'n': empty value");
  EXPECT_EQ(error("a,n\nx,11\n"), "bad.csv:2: column 'n': 11 is outside 0..10");
  EXPECT_EQ(error("a,n\nx,1.5\n"), "bad.csv:2: column 'n': 1.5 is not a whole number");
  // A record over several lines is named by the line it starts on.
  EXPECT_EQ(error("a,n\n\"x\ny\",1\n\"z\",nan\n"), "bad.csv:4: column 'n': 'nan' is not a number");
  EXPECT_EQ(error(""), "bad.csv: empty file (no header line)");
}

// ---------------------------------------------------------------------------------------------
// SVG builder.

TEST(SvgChart, EscapesText) {
  EXPECT_EQ(svg::escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(svg::escape("plain"), "plain");
}

TEST(SvgChart, FormatsNumbers) {
  EXPECT_EQ(svg::format_number(1234567.891, 1), "1,234,567.9");
  EXPECT_EQ(svg::format_number(-1234, 0), "-1,234");
  EXPECT_EQ(svg::format_number(-0.04, 1), "0.0");
  EXPECT_EQ(svg::format_number(999, 0), "999");
  EXPECT_EQ(svg::coord(12.0), "12");
  EXPECT_EQ(svg::coord(-0.01), "0");
  EXPECT_EQ(svg::coord(3.25), "3.2");  // round half to even is fine: fixed, deterministic
}

TEST(SvgChart, NiceTicks) {
  const svg::Ticks a = svg::nice_ticks(0, 97, 5, true);
  EXPECT_DOUBLE_EQ(a.step, 20);
  EXPECT_DOUBLE_EQ(a.lo, 0);
  EXPECT_DOUBLE_EQ(a.hi, 100);
  ASSERT_EQ(a.values.size(), 6u);
  EXPECT_EQ(a.decimals, 0);
  const svg::Ticks b = svg::nice_ticks(0, 1.3, 6, true);
  EXPECT_DOUBLE_EQ(b.step, 0.25);
  EXPECT_EQ(b.decimals, 2);
  const svg::Ticks c = svg::nice_ticks(80, 130, 8, false);
  EXPECT_GE(c.values.front(), 80);
  EXPECT_LE(c.values.back(), 130);
  const svg::Ticks flat = svg::nice_ticks(5, 5, 5, true);  // a flat series still gets an axis
  EXPECT_LT(flat.lo, 5);
  EXPECT_GT(flat.hi, 5);
}

TEST(SvgChart, DownsampleKeepsPeaksAndGaps) {
  std::vector<svg::Point> pts;
  for (int i = 0; i < 10000; ++i) pts.push_back(svg::Point{i * 1.0, std::sin(i * 0.01)});
  pts[5000].y = 7.0;   // a spike
  pts[7000].y = -7.0;  // a dip
  pts[8000].y = std::numeric_limits<double>::quiet_NaN();
  const auto out = svg::downsample_minmax(pts, 2000);
  EXPECT_LE(out.size(), 2100u);
  EXPECT_GE(out.size(), 1000u);
  bool spike = false, dip = false, gap = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].y == 7.0) spike = true;
    if (out[i].y == -7.0) dip = true;
    if (std::isnan(out[i].y)) gap = true;
    if (i > 0) {
      EXPECT_LE(out[i - 1].x, out[i].x);
    }
  }
  EXPECT_TRUE(spike);
  EXPECT_TRUE(dip);
  EXPECT_TRUE(gap);
  EXPECT_EQ(svg::downsample_minmax(std::vector<svg::Point>(10), 2000).size(), 10u);
}

TEST(SvgChart, ColoursAreStablePerName) {
  svg::ColorMap a, b;
  const std::string fgd = a.color("fgd");
  b.color("random");
  b.color("something-else");
  EXPECT_EQ(b.color("fgd"), fgd);  // well-known names keep their colour whatever comes first
  svg::ColorMap c;
  std::set<std::string> colours;
  for (int i = 0; i < 10; ++i) colours.insert(c.color(fmt::format("p{}", i)));
  EXPECT_EQ(colours.size(), 10u);
  EXPECT_EQ(c.color("p3"), c.color("p3"));
}

TEST(SvgChart, LineChartHasAxesLegendAndGaps) {
  svg::LineChart chart;
  chart.id = "c1";
  chart.title = "T <1>";
  chart.x_label = "X (units)";
  chart.y_label = "Y (% & more)";
  svg::Series s;
  s.name = "p<&>";
  s.color = "#123456";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.points = {{0, 1}, {1, 2}, {2, nan}, {3, 4}, {4, 5}};
  s.band_lo = {{0, 0.5}, {1, 1.5}, {3, 3.5}, {4, 4.5}};
  s.band_hi = {{0, 1.5}, {1, 2.5}, {3, 4.5}, {4, 5.5}};
  chart.series.push_back(s);
  const std::string out = svg::render_line_chart(chart);
  EXPECT_TRUE(has(out, "<svg id=\"c1\""));
  EXPECT_TRUE(has(out, ">T &lt;1&gt;</text>"));
  EXPECT_TRUE(has(out, ">X (units)</text>"));
  EXPECT_TRUE(has(out, ">Y (% &amp; more)</text>"));
  EXPECT_TRUE(has(out, ">p&lt;&amp;&gt;</text>"));  // legend entry
  EXPECT_TRUE(has(out, "class=\"band\""));
  EXPECT_TRUE(has(out, "class=\"grid\""));
  // The gap splits the line into two subpaths.
  const std::size_t begin = out.find("<g class=\"series\">");
  ASSERT_NE(begin, std::string::npos);
  const std::size_t d = out.find(" d=\"", begin);
  const std::size_t end = out.find('"', d + 4);
  EXPECT_EQ(count(out.substr(d, end - d), "M"), 2u);
  EXPECT_FALSE(has(out, "p<&>"));
}

TEST(SvgChart, BarChart) {
  svg::BarChart chart;
  chart.id = "bars";
  chart.title = "Carbon";
  chart.value_label = "Carbon (kg)";
  chart.bars = {{"local", 9902.6, "#777"}, {"green <x>", 6201.9, "#5a5"}};
  const std::string out = svg::render_bar_chart(chart);
  EXPECT_TRUE(has(out, ">local</text>"));
  EXPECT_TRUE(has(out, ">green &lt;x&gt;</text>"));
  EXPECT_TRUE(has(out, ">9,903</text>"));
  EXPECT_TRUE(has(out, ">Carbon (kg)</text>"));
  EXPECT_EQ(count(out, "<rect"), 2u);
}

TEST(SvgChart, OccupancyMapOfAThousandNodesFits) {
  svg::OccupancyMap map;
  map.id = "occ";
  map.title = "GPU occupancy at 100 %";
  for (int i = 0; i < 1213; ++i) {
    svg::MapNode n;
    n.group = i < 600 ? "G2" : (i < 1000 ? "T4" : "V100M16");
    const int gpus = i < 600 ? 8 : (i < 1000 ? 1 : 4);
    for (int g = 0; g < gpus; ++g) n.used_milli.push_back((i * 7 + g * 300) % 1001);
    map.nodes.push_back(std::move(n));
  }
  const std::string out = svg::render_occupancy_map(map);
  // Width and height stay on a page; every group is labelled in the legend.
  const std::size_t h = out.find("height=\"");
  ASSERT_NE(h, std::string::npos);
  const double height = std::stod(out.substr(h + 8));
  EXPECT_LT(height, 900);
  EXPECT_TRUE(has(out, "G2 (600)"));
  EXPECT_TRUE(has(out, "T4 (400)"));
  EXPECT_TRUE(has(out, "V100M16 (213)"));
  for (int level = 1; level <= 5; ++level) {
    EXPECT_TRUE(has(out, fmt::format("class=\"shade-{}\"", level)));
  }
  EXPECT_LT(out.size(), 400u * 1024);
  EXPECT_EQ(svg::occupancy_level(0), 0);
  EXPECT_EQ(svg::occupancy_level(1), 1);
  EXPECT_EQ(svg::occupancy_level(500), 2);
  EXPECT_EQ(svg::occupancy_level(999), 4);
  EXPECT_EQ(svg::occupancy_level(1000), 5);
}

// ---------------------------------------------------------------------------------------------
// The page.

// The page defines the abbreviations it uses, and only those: LS and p99 used in a table
// header, BE in no word, and LS inside ALSO or CALS is no use of LS.
TEST(ReportHtml, DefinesTheTermsItUses) {
  Page page;
  page.section("sec-x", "X", "Waits of ALSO-ran pods.");
  page.body += "<table><tr><th>LS p99 wait (s)</th></tr></table>\n";
  const std::string html = render_document(page, "t", "in", {});
  EXPECT_TRUE(has(html, "<h2>Terms used on this page</h2>"));
  EXPECT_TRUE(has(html, "<dt>LS</dt><dd>latency-sensitive"));
  EXPECT_TRUE(has(html, "<dt>p99</dt>"));
  EXPECT_FALSE(has(html, "<dt>BE</dt>"));
  Page plain;
  plain.section("sec-y", "Y", "CALS and ALSO are words, not terms.");
  EXPECT_FALSE(has(render_document(plain, "t", "in", {}), "Terms used on this page"));
}

TEST(ReportHtml, InflationRunChartsAxesLegendsAndTable) {
  ScratchDir dir;
  dir.write("curves.csv", kCurves);
  dir.write("summary.csv", kSummary);
  dir.write("occupancy.csv", occupancy_csv());
  auto report = build(dir.path());
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  for (const char* id : {"chart-alloc", "chart-frag", "chart-power", "table-summary",
                         "chart-occupancy-1", "chart-occupancy-2", "chart-occupancy-3"}) {
    EXPECT_TRUE(has(html, fmt::format("id=\"{}\"", id))) << id;
  }
  EXPECT_FALSE(has(html, "chart-occupancy-4"));  // a map per policy, no policy hidden
  EXPECT_TRUE(has(html, "policy <b>third</b>"));
  EXPECT_FALSE(has(html, "snapshots in occupancy.csv are shown"));
  EXPECT_TRUE(has(html, "<figure class=\"chart\" id=\"chart-alloc\">"));
  EXPECT_TRUE(has(html, ">Arrived GPU requests (% of cluster GPU capacity)</text>"));
  EXPECT_TRUE(has(html, ">GPU allocation (% of cluster GPUs)</text>"));
  EXPECT_TRUE(has(html, ">Fragmented GPUs (GPUs)</text>"));
  EXPECT_TRUE(has(html, ">Cluster power (kW)</text>"));
  // Legend entries for each policy in each chart, the odd name escaped everywhere.
  EXPECT_EQ(count(html, ">fgd</text>"), 3u);
  EXPECT_EQ(count(html, ">a&lt;b&gt;&amp;c</text>"), 3u);
  EXPECT_FALSE(has(html, "a<b>&c"));
  EXPECT_TRUE(has(html, "band: min–max over seeds"));
  EXPECT_TRUE(has(html, "<figcaption>"));
  // Title escaped.
  EXPECT_TRUE(has(html, "<title>Test &lt;report&gt; &amp; co</title>"));
  // Summary means: fgd alloc@100 = 95.25, failed 1.5; the other 90.00, failed 3.
  EXPECT_TRUE(has(html, ">95.25</td>"));
  EXPECT_TRUE(has(html, ">1.5</td>"));
  EXPECT_TRUE(has(html, ">3</td>"));
  // Power at 100 % in kW: (1400 + 1410) / 2.
  EXPECT_TRUE(has(html, ">1,405.0</td>"));
  // Occupancy map: the moment in the title, the model groups in the legend.
  EXPECT_TRUE(has(html, "when arrived GPU requests reached 100 % of capacity"));
  EXPECT_TRUE(has(html, "V100 (2)"));
  EXPECT_TRUE(has(html, "T4 (1)"));
  EXPECT_FALSE(has(html, "sec-multi"));
  EXPECT_FALSE(has(html, "sec-replay"));
  expect_no_network(html);
  EXPECT_EQ(report.value().figures.front(), "chart-alloc");
}

TEST(ReportHtml, OnlySectionsForFilesPresent) {
  ScratchDir dir;
  dir.write("curves.csv", kCurves);
  auto report = build(dir.path());
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  EXPECT_TRUE(has(html, "id=\"chart-alloc\""));
  EXPECT_FALSE(has(html, "table-summary"));
  EXPECT_FALSE(has(html, "chart-occupancy"));
  EXPECT_FALSE(has(html, "sec-failed"));
}

TEST(ReportHtml, ReplayRun) {
  ScratchDir dir;
  std::string tl =
      "policy,seed,time_s,running_pods,queued_pods,allocated_gpus,power_watts,"
      "energy_joules\n";
  for (const char* policy : {"fgd", "bestfit"}) {
    for (int seed : {1, 2}) {
      for (int i = 0; i <= 20; ++i) {
        tl += fmt::format("{},{},{},{},{},{},{},{}\n", policy, seed, i * 8640.0, i % 5, i % 3,
                          i * 0.5, 1000.0 + i * seed, i * 3.6e6);
      }
    }
  }
  dir.write("timeline.csv", tl);
  dir.write("summary.csv",
            "policy,seed,queue,pods_total,pods_started,pods_never_started,pods_requeued,"
            "mean_queue_delay_s,p99_queue_delay_s,energy_kwh,makespan_s,wall_seconds\n"
            "fgd,1,fifo,10,10,0,0,1.5,3.0,20.0,172800.0,0.1\n"
            "fgd,2,fifo,10,9,1,0,2.5,4.0,22.0,172800.0,0.1\n"
            "bestfit,1,backfill,10,10,0,1,0.5,1.0,21.0,86400.0,0.1\n");
  auto report = build(dir.path());
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  for (const char* id : {"chart-replay-pods", "chart-replay-gpus", "chart-replay-power",
                         "chart-replay-energy", "table-replay-summary"}) {
    EXPECT_TRUE(has(html, fmt::format("id=\"{}\"", id))) << id;
  }
  EXPECT_TRUE(has(html, ">Time (days)</text>"));
  EXPECT_TRUE(has(html, ">Energy since the start (kWh)</text>"));
  EXPECT_TRUE(has(html, ">Cluster power (kW)</text>"));
  EXPECT_TRUE(has(html, ">solid: running</text>"));
  EXPECT_TRUE(has(html, ">dashed: queued</text>"));
  EXPECT_TRUE(has(html, ">bestfit</text>"));
  EXPECT_TRUE(has(html, ">backfill</td>"));
  EXPECT_TRUE(has(html, ">9.5</td>"));   // mean pods started of fgd
  EXPECT_TRUE(has(html, ">21.0</td>"));  // mean energy of fgd
  EXPECT_FALSE(has(html, "chart-alloc"));
  expect_no_network(html);
}

TEST(ReportHtml, LongTimelinesAreDownsampled) {
  ScratchDir dir;
  std::string tl =
      "policy,seed,time_s,running_pods,queued_pods,allocated_gpus,power_watts,"
      "energy_joules\n";
  for (int64_t i = 0; i < 50000; ++i) {
    tl += fmt::format("fgd,1,{},{},{},{},{},{}\n", i * 60, (i * 7919) % 1000, (i * 104729) % 50,
                      (i * 31) % 400, 100000 + (i * 17) % 5000, i * 1000000);
  }
  dir.write("timeline.csv", tl);
  auto report = build(dir.path());
  ASSERT_TRUE(report.ok()) << report.error();
  // 5 series of 50000 points: without downsampling well over 2 MB.
  EXPECT_LT(report.value().html.size(), 600u * 1024);
}

TEST(ReportHtml, MultiRun) {
  ScratchDir dir;
  dir.write("summary.csv",
            "agent,energy_kwh,carbon_kg,mean_delay_s_ls,mean_delay_s_be,p99_delay_s_be,"
            "ls_slo_violations,jobs_moved,gb_moved,gpu_alloc_pct,jobs_never_started,jobs,"
            "jobs_deferred,transfer_kwh,wall_seconds,extra_col\n"
            "local,1000.0,400.0,2.0,3.0,59.0,0,0,0.0,0.27,0,100,0,0.0,0.1,x<1>\n"
            "green,900.0,300.0,5.0,1000.0,4000.0,0,10,36.5,0.27,0,100,20,2.5,0.5,y\n");
  std::string tl =
      "agent,time_s,site,power_watts,energy_kwh,carbon_kg,carbon_intensity,"
      "running_jobs,queued_jobs,waiting_jobs,allocated_gpus,gpu_alloc_pct,"
      "online_nodes\n";
  for (const char* agent : {"local", "green"}) {
    for (int i = 0; i < 10; ++i) {
      for (const char* site : {"north<wind>", "south", "fleet"}) {
        tl += fmt::format("{},{},{},1000.0,{},{},{},1,{},{},1.0,0.5,3\n", agent, i * 3600, site,
                          i * 1.0, i * 0.4, 100 + i * 10, i % 3, i % 2);
      }
    }
  }
  dir.write("timeline.csv", tl);
  auto report = build(dir.path());
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  for (const char* id : {"chart-multi-carbon", "chart-multi-energy", "table-multi-summary",
                         "chart-multi-intensity", "chart-multi-carbon-time", "chart-multi-queue"}) {
    EXPECT_TRUE(has(html, fmt::format("id=\"{}\"", id))) << id;
  }
  EXPECT_TRUE(has(html, ">Carbon (kg CO₂)</text>"));
  EXPECT_TRUE(has(html, ">Energy (kWh)</text>"));
  EXPECT_TRUE(has(html, ">Carbon intensity (g CO₂/kWh)</text>"));
  EXPECT_TRUE(has(html, ">Jobs waiting (queued + deferred)</text>"));
  EXPECT_TRUE(has(html, ">north&lt;wind&gt;</text>"));  // site legend, escaped
  EXPECT_TRUE(has(html, ">south</text>"));
  EXPECT_FALSE(has(html, ">fleet</text>"));    // the fleet total is not a site
  EXPECT_TRUE(has(html, ">-25.0 %</td>"));     // green's carbon vs local
  EXPECT_TRUE(has(html, ">x&lt;1&gt;</td>"));  // an unknown column shown as it is, escaped
  EXPECT_FALSE(has(html, "wall_seconds"));
  // Bars and lines of an agent share its colour.
  svg::ColorMap colours;
  const std::string green = colours.color("green");
  EXPECT_GE(count(html, fmt::format("fill=\"{}\"", green)), 2u);
  EXPECT_GE(count(html, fmt::format("stroke=\"{}\"", green)), 2u);
  expect_no_network(html);
}

// Pods that fail for the same reason get the same suggestion: it is made once, for the first,
// and the others point back to it.
TEST(ReportHtml, ARepeatedSuggestionIsSaidOnce) {
  ScratchDir dir;
  dir.write("curves.csv", kCurves);
  const auto failed = [](const std::string& pod, int step) {
    return fmt::format(
        "{{\"pod\":\"{}\",\"step\":{},\"nodes_total\":2,\"chosen_node\":null,"
        "\"request\":{{\"cpu_milli\":4000,\"memory_mib\":1024,\"num_gpu\":0,\"gpu_milli\":0}},"
        "\"reason_counts\":{{\"insufficient cpu\":2}},"
        "\"diagnosis\":{{\"split_gpu_nodes\":0,\"split_gpu_examples\":[],"
        "\"shrink\":{{\"dimension\":\"cpu_milli\",\"node\":\"n1\",\"from\":4000,\"to\":3000,"
        "\"cut_pct\":25}},\"move\":{{\"pod\":\"big\",\"node\":\"n1\",\"frees_cpu_milli\":8000,"
        "\"frees_gpu_milli\":0,\"frees_memory_mib\":0}}}}}}\n",
        pod, step);
  };
  dir.write("decisions.jsonl", failed("a", 1) + failed("b", 2) + failed("c", 3));
  auto report = build(dir.path(), 3);
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  EXPECT_EQ(count(html, "Smallest change: it would fit on n1"), 1u) << html;
  EXPECT_EQ(count(html, "Or moving pod big"), 1u);
  EXPECT_EQ(count(html, "The same smallest change (as for a above)."), 2u);
  EXPECT_EQ(count(html, "Or the same move (as for a above)."), 2u);
}

// The first N failed pods, as `explain --failed N` picks them.
TEST(ReportHtml, ExplainsTheFirstFailedPods) {
  ScratchDir dir;
  dir.write("curves.csv", kCurves);
  const auto failed = [](const std::string& pod, int step) {
    return fmt::format(
        "{{\"run\":{{\"policy\":\"fgd\",\"seed\":1}},\"pod\":\"{}\",\"step\":{},"
        "\"request\":{{\"cpu_milli\":1000,\"memory_mib\":1024,\"num_gpu\":1,\"gpu_milli\":500}},"
        "\"nodes_total\":2,\"reason_counts\":{{\"insufficient GPU\":2}},\"chosen_node\": null}}\n",
        pod, step);
  };
  std::string records = failed("first-failed", 1);
  records += "{\"pod\":\"placed\",\"chosen_node\":\"n1\",\"step\":2}\n";
  records += failed("pod<script>alert(1)</script>", 3);
  records += failed("last-failed", 4);
  dir.write("decisions.jsonl", records);

  auto report = build(dir.path(), 2);
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  EXPECT_TRUE(has(html, "id=\"sec-failed\""));
  EXPECT_TRUE(has(html, "3 of 4 records"));
  EXPECT_TRUE(has(html, "first-failed"));  // only the first 2
  EXPECT_FALSE(has(html, "last-failed"));
  EXPECT_TRUE(has(html, "as <code>greensched explain --failed 2</code> does"));
  EXPECT_TRUE(has(html, "pod&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_FALSE(has(html, "<script>alert"));
  EXPECT_TRUE(has(html, "could not be placed"));  // explain_text's words
  EXPECT_TRUE(has(html, "policy fgd, seed 1, step 3"));
  EXPECT_EQ(count(html, "<article class=\"failed-pod\">"), 2u);

  // --record names another file; --failed 0 leaves the section out.
  ScratchDir other("-record");
  const std::string path = other.write("records.jsonl", failed("elsewhere", 9));
  auto from_record = build(dir.path(), 10, path);
  ASSERT_TRUE(from_record.ok()) << from_record.error();
  EXPECT_TRUE(has(from_record.value().html, "elsewhere"));
  EXPECT_FALSE(has(from_record.value().html, "last-failed"));
  auto none = build(dir.path(), 0);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(has(none.value().html, "sec-failed"));
}

// Each explained pod's chart stands beside its words: the SVG `explain --chart FILE.svg` writes.
TEST(ReportHtml, FailedPodsChartBesideTheirWords) {
  ScratchDir dir;
  dir.write("curves.csv", kCurves);
  const std::string line =
      "{\"pod\":\"q<1>\",\"step\":4,\"nodes_total\":3,\"chosen_node\":null,"
      "\"request\":{\"cpu_milli\":8000,\"memory_mib\":1024,\"num_gpu\":1,\"gpu_milli\":500},"
      "\"reason_counts\":{\"insufficient cpu\":3},"
      "\"reason_counts_by_type\":{\"T4\":{\"insufficient cpu\":2},\"V100\":{\"insufficient "
      "cpu\":1}}}";
  dir.write("decisions.jsonl", line + "\n");
  auto report = build(dir.path());
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  auto record = explain::parse_decision_record(line, "test");
  ASSERT_TRUE(record.ok()) << record.error();
  const std::string chart = decision_chart_svg(record.value());
  ASSERT_FALSE(chart.empty());
  EXPECT_EQ(count(html, chart), 1u);
  EXPECT_TRUE(has(html, "<div class=\"why\"><pre>Pod q&lt;1&gt;"));
  EXPECT_TRUE(has(html, "</pre><div class=\"decision-chart\">" + chart + "</div></div>"));
  EXPECT_TRUE(has(chart, "<title>T4, insufficient cpu: 2</title>"));
  expect_no_network(html);
}

// The report counts a pod as failed by explain's rule: a placement record whose chosen_node is
// absent or null; a dispatch record never is.
TEST(ReportHtml, FailedPodsCountedAsExplainDoes) {
  ScratchDir dir;
  dir.write("curves.csv", kCurves);
  const std::string request =
      "\"request\":{\"cpu_milli\":1000,\"memory_mib\":1024,\"num_gpu\":1,\"gpu_milli\":500}";
  const std::vector<std::string> lines = {
      "{\"pod\":\"null-node\"," + request + ",\"chosen_node\":null}",
      "{\"pod\":\"no-node\"," + request + "}",
      "{\"pod\":\"placed\",\"policy\":\"fgd\"," + request + ",\"chosen_node\":\"n1\"}",
      "{\"kind\":\"dispatch\",\"pod\":\"sent\"," + request + ",\"home_site\":\"a\",\"site\":\"b\"}",
  };
  std::string records;
  std::size_t failed = 0;
  for (const std::string& line : lines) {
    records += line + "\n";
    auto r = explain::parse_decision_record(line, "test");
    ASSERT_TRUE(r.ok()) << r.error();
    failed += explain::is_failed_placement(r.value());
  }
  EXPECT_EQ(failed, 2u);
  dir.write("decisions.jsonl", records);
  auto report = build(dir.path());
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  EXPECT_TRUE(has(html, "2 of 4 records")) << html.substr(html.find("sec-failed"), 400);
  EXPECT_TRUE(has(html, "null-node"));
  EXPECT_TRUE(has(html, "no-node"));
  EXPECT_EQ(count(html, "<article class=\"failed-pod\">"), 2u);
}

TEST(ReportHtml, MalformedInputsGiveFileAndLine) {
  {
    ScratchDir dir;
    dir.write("curves.csv",
              "policy,seed,arrived_gpu_pct,alloc_gpu_pct,frag_gpu_milli,events,power_watts\n"
              "fgd,1,0,0.5,1000,3,1000\n"
              "fgd,1,1,abc,1000,3,1000\n");
    auto r = build(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(has(r.error(), "curves.csv:3:")) << r.error();
    EXPECT_TRUE(has(r.error(), "alloc_gpu_pct")) << r.error();
    EXPECT_TRUE(has(r.error(), "not a number")) << r.error();
  }
  {
    ScratchDir dir;
    dir.write("curves.csv", "policy,seed,alloc_gpu_pct\nfgd,1,0.5\n");
    auto r = build(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(has(r.error(), "curves.csv:1: missing column 'arrived_gpu_pct'")) << r.error();
  }
  {
    ScratchDir dir;
    dir.write("summary.csv", std::string(kSummary) + "fgd,3,10\n");
    auto r = build(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(has(r.error(), "summary.csv:5:")) << r.error();
    EXPECT_TRUE(has(r.error(), "3 fields")) << r.error();
  }
  {
    ScratchDir dir;
    dir.write("occupancy.csv",
              "policy,seed,arrived_gpu_pct,node,model,gpu,used_milli\nfgd,1,100,n1,T4,0,1500\n");
    auto r = build(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(has(r.error(), "occupancy.csv:2:")) << r.error();
    EXPECT_TRUE(has(r.error(), "used_milli")) << r.error();
  }
  {
    ScratchDir dir;
    dir.write("timeline.csv",
              "agent,time_s,site,power_watts,energy_kwh,carbon_kg,carbon_intensity,running_jobs,"
              "queued_jobs,waiting_jobs,allocated_gpus,gpu_alloc_pct,online_nodes\n"
              "local,0,a,1,0,0,100,0,0,0,0,0,1\n"
              "local,3600,a,1,0,0,,0,0,0,0,0,1\n");
    auto r = build(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(has(r.error(), "timeline.csv:3: column 'carbon_intensity': empty")) << r.error();
  }
  {
    ScratchDir dir;
    dir.write("curves.csv", kCurves);
    dir.write("decisions.jsonl",
              "{\"pod\":\"a\",\"chosen_node\":\"n\"}\n{\"chosen_node\": null,\n");
    auto r = build(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(has(r.error(), "decisions.jsonl:2:")) << r.error();
  }
}

TEST(ReportHtml, EmptyOrMissingDirectoryIsAnError) {
  ScratchDir dir;
  auto empty = build(dir.path());
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(has(empty.error(), "no greensched results")) << empty.error();
  auto missing = build(dir.path() + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(has(missing.error(), "not a directory")) << missing.error();
}

TEST(ReportHtml, SameInputsGiveIdenticalPages) {
  ScratchDir dir;
  dir.write("curves.csv", kCurves);
  dir.write("summary.csv", kSummary);
  dir.write("occupancy.csv", occupancy_csv());
  auto a = build(dir.path());
  auto b = build(dir.path());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().html, b.value().html);
  EXPECT_TRUE(has(a.value().html, "</html>\n"));
}

// ---------------------------------------------------------------------------------------------
// greensched compare.

const char* const kSimHeader =
    "policy,seed,pods_arrived,pods_scheduled,pods_failed,alloc_gpu_pct_at_100,"
    "alloc_gpu_pct_at_90,alloc_gpu_pct_at_130,frag_gpu_milli_at_100,final_alloc_gpu_pct,"
    "power_watts_at_100,tune,wall_seconds\n";

// Run A: fgd over seeds 1-2 and bestfit; run B (another tune): fgd, and random instead of
// bestfit.
struct ComparePair {
  ScratchDir dir;
  std::string a, b;
  ComparePair() {
    a = dir.path() + "/a";
    b = dir.path() + "/b";
    dir.write("a/summary.csv",
              std::string(kSimHeader) +
                  "fgd,1,10,9,1,95.0,90.0,95.5,300000.0,95.6,1400000.0,1.3,0.1\n"
                  "fgd,2,10,8,2,95.5,90.0,95.7,290000.0,95.8,1410000.0,1.3,0.2\n"
                  "bestfit,1,10,7,3,90.0,88.0,90.5,500000.0,90.6,1300000.0,1.3,0.1\n");
    dir.write("b/summary.csv",
              std::string(kSimHeader) +
                  "fgd,1,10,10,0,96.0,91.0,96.5,200000.0,96.6,1420000.0,1.1,0.1\n"
                  "fgd,2,10,9,1,96.5,91.0,96.7,210000.0,96.8,1430000.0,1.1,0.1\n"
                  "random,1,10,6,4,85.0,80.0,85.5,700000.0,85.6,1200000.0,1.1,0.1\n");
  }
  Result<Comparison> run(std::vector<std::string> metrics = {}, bool per_seed = false) const {
    CompareOptions o;
    o.dirs = {a, b};
    o.metrics = std::move(metrics);
    o.per_seed = per_seed;
    return compare_runs(o);
  }
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

// The table, by hand: means over seeds 1-2 (fgd A: failed (1+2)/2 = 1.5, alloc (95.0+95.5)/2 =
// 95.25; fgd B: 0.5, 96.25), B-A and (B-A)/A in %: -1.0 and -66.67 %, +1.00 and +1.05 %.
TEST(Compare, GoldenTable) {
  ComparePair p;
  auto c = p.run({"pods_failed", "alloc_gpu_pct_at_100"});
  ASSERT_TRUE(c.ok()) << c.error();
  const std::string text = replace_all(replace_all(compare_text(c.value()), p.a, "a/"), p.b, "b/");
  EXPECT_EQ(text,
            "2 simulate runs compared, means over seeds (--per-seed: seed by seed); rows matched "
            "by policy\n"
            "  A  a/  3 rows, seeds 1-2\n"
            "  B  b/  3 rows, seeds 1-2\n"
            "runs differ in tune: A 1.3, B 1.1\n"
            "B-A: a run minus run A; %: that as a percentage of A\n"
            "\n"
            "policy   metric                unit       A      B    B-A     B-A %\n"
            "fgd      pods_failed           count    1.5    0.5   -1.0  -66.67 %\n"
            "fgd      alloc_gpu_pct_at_100  %      95.25  96.25  +1.00   +1.05 %\n"
            "bestfit  pods_failed           count    3.0      -      -         -\n"
            "bestfit  alloc_gpu_pct_at_100  %      90.00      -      -         -\n"
            "random   pods_failed           count      -    4.0      -         -\n"
            "random   alloc_gpu_pct_at_100  %          -  85.00      -         -\n"
            "\n"
            "2 rows not in every run (- where missing)\n");
}

TEST(Compare, EveryMetricByDefaultAndSeedBySeed) {
  ComparePair p;
  auto all = p.run();
  ASSERT_TRUE(all.ok()) << all.error();
  // Settings (tune) and the run time are not metrics; the keys are not either.
  EXPECT_EQ(all.value().metrics,
            (std::vector<std::string>{"pods_arrived", "pods_scheduled", "pods_failed",
                                      "alloc_gpu_pct_at_100", "alloc_gpu_pct_at_90",
                                      "alloc_gpu_pct_at_130", "frag_gpu_milli_at_100",
                                      "final_alloc_gpu_pct", "power_watts_at_100"}));
  EXPECT_EQ(all.value().keys, std::vector<std::string>{"policy"});
  EXPECT_TRUE(all.value().seeds_averaged);
  auto seeds = p.run({"pods_failed"}, true);
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  const Comparison& c = seeds.value();
  EXPECT_EQ(c.keys, (std::vector<std::string>{"policy", "seed"}));
  EXPECT_FALSE(c.seeds_averaged);
  ASSERT_EQ(c.rows.size(), 4u);  // fgd 1, fgd 2, bestfit 1, random 1
  EXPECT_EQ(c.rows[1].key, (std::vector<std::string>{"fgd", "2"}));
  EXPECT_EQ(c.rows[1].values, (std::vector<double>{2.0, 1.0}));
  EXPECT_DOUBLE_EQ(compare_delta(c.rows[1], 1), -1.0);
  EXPECT_DOUBLE_EQ(compare_delta_pct(c.rows[1], 1), -50.0);
  EXPECT_EQ(c.partial_keys, 2u);
  // CSV: one line per key, metric and run; the baseline has no delta.
  const std::string csv = compare_csv(c);
  EXPECT_TRUE(has(csv, "policy,seed,metric,run,dir,value,delta,delta_pct\n")) << csv;
  EXPECT_TRUE(has(csv, fmt::format("fgd,2,pods_failed,A,{},2,,\n", p.a))) << csv;
  EXPECT_TRUE(has(csv, fmt::format("fgd,2,pods_failed,B,{},1,-1,-50\n", p.b))) << csv;
  EXPECT_TRUE(has(csv, fmt::format("random,1,pods_failed,A,{},,,\n", p.a))) << csv;
  const std::string json = compare_json(c);
  EXPECT_TRUE(has(json, "\"delta_pct\": [\n        null,\n        -50.0\n      ]")) << json;
}

// A key column with one value in each run is the run's setting: two replays with different
// queues still pair their rows; a column varying inside a run (the GPU power rule) is a key.
TEST(Compare, KeysThatAreSettingsAreNotMatched) {
  ScratchDir dir;
  const std::string header =
      "policy,seed,queue,pods_total,energy_kwh,gpu_power,power_down_idle_s,target_load_pct\n";
  dir.write("fifo/summary.csv", header +
                                    "fgd,42,fifo,100,10.0,pwr,-1,30.0\n"
                                    "fgd,42,fifo,100,8.0,proportional,-1,30.0\n");
  dir.write("backfill/summary.csv", header +
                                        "fgd,42,backfill,100,12.0,pwr,-1,30.0\n"
                                        "fgd,42,backfill,100,9.0,proportional,-1,30.0\n");
  CompareOptions o;
  o.dirs = {dir.path() + "/fifo", dir.path() + "/backfill"};
  auto c = compare_runs(o);
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c.value().kind, "replay");
  EXPECT_EQ(c.value().keys, (std::vector<std::string>{"policy", "gpu_power"}));
  ASSERT_EQ(c.value().rows.size(), 4u);  // (pwr, proportional) x (pods_total, energy_kwh)
  EXPECT_EQ(c.value().rows[3].key, (std::vector<std::string>{"fgd", "proportional"}));
  EXPECT_EQ(c.value().rows[3].metric, "energy_kwh");
  EXPECT_EQ(c.value().rows[3].values, (std::vector<double>{8.0, 9.0}));
  EXPECT_DOUBLE_EQ(compare_delta_pct(c.value().rows[3], 1), 12.5);
  EXPECT_EQ(c.value().partial_keys, 0u);
  ASSERT_EQ(c.value().settings.size(), 1u);  // the queue; not the idle sleep, the same in both
  EXPECT_EQ(c.value().settings[0].first, "queue");
  EXPECT_EQ(c.value().settings[0].second, (std::vector<std::string>{"fifo", "backfill"}));
}

TEST(Compare, BadInputsAreNamed) {
  ComparePair p;
  const auto error = [](std::vector<std::string> dirs, std::vector<std::string> metrics = {}) {
    CompareOptions o;
    o.dirs = std::move(dirs);
    o.metrics = std::move(metrics);
    auto c = compare_runs(o);
    return c.ok() ? std::string("ok") : c.error();
  };
  p.dir.write("empty/.keep", "");
  EXPECT_EQ(error({p.a, p.dir.path() + "/empty"}),
            p.dir.path() +
                "/empty/summary.csv: no such file (compare reads the summary.csv that "
                "simulate, simulate --mode replay and multi write into their --out "
                "folder)");
  EXPECT_EQ(error({p.a, p.dir.path() + "/nope"}), p.dir.path() + "/nope: not a directory");
  p.dir.write("multi/summary.csv", "agent,energy_kwh,carbon_kg\nlocal,1.0,2.0\n");
  EXPECT_EQ(error({p.a, p.dir.path() + "/multi"}),
            fmt::format("{}/multi/summary.csv: a multi summary, but {}/summary.csv is a "
                        "simulate summary: compare runs of one kind",
                        p.dir.path(), p.a));
  EXPECT_TRUE(has(error({p.a, p.b}, {"alloc"}), "no metric 'alloc' (its metrics: pods_arrived"));
  p.dir.write("bad/summary.csv",
              std::string(kSimHeader) +
                  "fgd,1,10,9,1,95.0,90.0,95.5,300000.0,95.6,1400000.0,1.3,0.1\n"
                  "fgd,2,10,8,x,95.5,90.0,95.7,290000.0,95.8,1410000.0,1.3,0.1\n");
  EXPECT_EQ(error({p.a, p.dir.path() + "/bad"}, {"pods_failed"}),
            p.dir.path() + "/bad/summary.csv:3: pods_failed 'x' is not a number");
  p.dir.write("other/summary.csv", "name,value\nx,1\n");
  EXPECT_TRUE(
      has(error({p.a, p.dir.path() + "/other"}), "/other/summary.csv:1: not a summary.csv"));
  EXPECT_EQ(error({p.a}), "compare needs two or more results folders");
}

TEST(Compare, PageHasAChartPerMetricAndTheTable) {
  ComparePair p;
  auto c = p.run({"pods_failed", "alloc_gpu_pct_at_100"});
  ASSERT_TRUE(c.ok()) << c.error();
  const std::string html = compare_html(c.value(), "Compare <runs>");
  EXPECT_TRUE(has(html, "<title>Compare &lt;runs&gt;</title>"));
  EXPECT_TRUE(has(html, "id=\"chart-compare-0\""));
  EXPECT_TRUE(has(html, "id=\"chart-compare-1\""));
  EXPECT_TRUE(has(html, "id=\"table-compare\""));
  EXPECT_TRUE(has(html, ">fgd · A</text>"));
  EXPECT_TRUE(has(html, ">random · B</text>"));
  EXPECT_FALSE(has(html, ">random · A</text>"));  // no bar for a missing row
  EXPECT_TRUE(has(html, "<td class=\"text\">GPU alloc % at 100 %</td>"));
  EXPECT_TRUE(has(html, "<td>-66.67 %</td>"));
  EXPECT_TRUE(has(html, "content=\"greensched compare\""));
  expect_no_network(html);
  EXPECT_EQ(html, compare_html(c.value(), "Compare <runs>"));
}

// The multi tables name every summary.csv column in words with its unit, and a cost column
// of zeros on a fleet that imported energy says there is no price data.
TEST(ReportHtml, MultiEnergyTableHasHumanHeadersAndSaysNoPriceData) {
  ScratchDir dir;
  dir.write("summary.csv",
            "agent,energy_kwh,carbon_kg,jobs,controller,cost_usd,grid_import_kwh,"
            "onsite_kwh_used,self_consumption_pct,battery_cycles,export_kwh,curtailed_kwh,"
            "generation_kwh,be_preemptions\n"
            "local,1000.0,400.0,100,none,0.00,1000.000,0.000,0.00,0.000,0.000,0.000,0.000,0\n"
            "green,900.0,300.0,100,greedy,0.00,800.000,100.000,50.00,1.500,0.000,0.000,200.000,"
            "3\n");
  auto report = build(dir.path());
  ASSERT_TRUE(report.ok()) << report.error();
  const std::string& html = report.value().html;
  EXPECT_TRUE(has(html, "id=\"table-multi-energy\""));
  for (const char* raw : {"grid_import_kwh", "onsite_kwh_used", "cost_usd", "be_preemptions",
                          "self_consumption_pct", "generation_kwh"}) {
    EXPECT_FALSE(has(html, fmt::format("<th>{}</th>", raw))) << raw;
  }
  for (const char* header : {"Grid import (kWh)", "On-site energy used (kWh)", "Grid cost (USD)",
                             "BE preemptions", "Self-consumption (%)", "Site controller"}) {
    EXPECT_TRUE(has(html, fmt::format("<th>{}</th>", header))) << header;
  }
  EXPECT_EQ(count(html, "<td>no price data</td>"), 2u);
  EXPECT_FALSE(has(html, "<td>0.00</td>"));
  EXPECT_TRUE(has(html, "<td>greedy</td>"));
  EXPECT_TRUE(has(html, "<td>200</td>"));  // generation, kWh
  // With a price, the cost is shown.
  dir.write("summary.csv",
            "agent,energy_kwh,carbon_kg,controller,cost_usd,grid_import_kwh\n"
            "local,1000.0,400.0,none,12.75,1000.000\n");
  auto priced = build(dir.path());
  ASSERT_TRUE(priced.ok()) << priced.error();
  EXPECT_FALSE(has(priced.value().html, "<td>no price data</td>"));
  EXPECT_TRUE(has(priced.value().html, "<td>13</td>"));  // 12.75 USD, in whole dollars
}

}  // namespace
}  // namespace greensched::report
