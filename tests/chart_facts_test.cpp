// A chart's facts for a narrated caption (report/chart_facts.hpp): per series its first and
// last, lowest and highest values with where they lie, at three significant figures, one
// sentence each; bars by label; a caption's HTML as text.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "greensched/explain/explanation.hpp"
#include "greensched/report/chart_facts.hpp"

namespace greensched::report {
namespace {

TEST(ChartFacts, LineSeriesByTheirNamedValues) {
  svg::LineChart chart;
  chart.title = "GPU allocation";
  chart.x_label = "arrived (%)";
  chart.y_label = "allocated (%)";
  svg::Series fgd;
  fgd.name = "fgd";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  fgd.points = {{0, 0}, {50, 49.8}, {60, nan}, {90, 95.2412}, {100, 94.1}};
  chart.series.push_back(fgd);
  svg::Series empty;
  empty.name = "none";
  empty.points = {{1, nan}};
  chart.series.push_back(empty);
  const nlohmann::json facts = chart_facts(chart);
  EXPECT_EQ(facts["chart"], "GPU allocation");
  ASSERT_EQ(facts["series"].size(), 1u);  // a series without a value says nothing
  const nlohmann::json& s = facts["series"][0];
  EXPECT_EQ(s["first"], 0.0);
  EXPECT_EQ(s["last"], 94.1);
  EXPECT_EQ(s["last_x"], 100.0);
  EXPECT_EQ(s["highest"], 95.2);  // three significant figures
  EXPECT_EQ(s["highest_x"], 90.0);
  EXPECT_EQ(facts["sentences"][0],
            "fgd: 0 at 0 to 94.1 at 100; lowest 0 at 0, highest 95.2 at 90.");
}

TEST(ChartFacts, BarsAndCaptionText) {
  svg::BarChart chart;
  chart.title = "Carbon";
  chart.bars = {{"green", 1234.56, ""}, {"local", 0.04321, ""}};
  const nlohmann::json facts = chart_facts(chart);
  EXPECT_EQ(facts["sentences"], nlohmann::json({"green: 1235.", "local: 0.043."}));
  EXPECT_EQ(html_text("Policy <b>fgd</b> &amp; <code>bestfit</code>:\n  5 &lt; 6 &#39;x&#39;"),
            "Policy fgd & bestfit: 5 < 6 'x'");
}

// A failed pod's facts say which sentences suggest what, so that a reader of several can say
// a repeated suggestion once (the report does).
TEST(ChartFacts, FailedPodFactsMarkTheirSuggestions) {
  const nlohmann::json r = nlohmann::json::parse(R"({
    "pod": "p", "request": {"cpu_milli": 2000, "memory_mib": 1024, "num_gpu": 0, "gpu_milli": 0},
    "chosen_node": null, "nodes_total": 1, "reason_counts": {"insufficient cpu": 1},
    "diagnosis": {"searched": true, "move": {"pod": "z0", "node": "Z", "frees_cpu_milli": 7000,
                                             "frees_gpu_milli": 0, "frees_memory_mib": 0}}})");
  const nlohmann::json facts = explain::explain_facts(r);
  ASSERT_EQ(facts["suggestions"].size(), 1u);
  const nlohmann::json& g = facts["suggestions"][0];
  EXPECT_EQ(g["kind"], "move");
  EXPECT_EQ(facts["sentences"][g["sentence"].get<std::size_t>()],
            "Moving pod z0 (7 vCPU, no GPU) off Z would make room there.");
  EXPECT_EQ(g["of"]["pod"], "z0");
}

}  // namespace
}  // namespace greensched::report
