// Decision charts (report/decision_chart) on small hand-written records of each kind: the bars'
// labels and values, the marked choices, escaping, the same bytes for the same record, and a
// chart of what a record has (or none, with the reason) when it lacks what a chart needs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/report/decision_chart.hpp"

namespace greensched::report::chart_test {
namespace {

using nlohmann::json;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

// The value of attribute `name` in the first tag after `from` in `svg`.
std::string attribute_after(const std::string& svg, const std::string& from,
                            const std::string& name) {
  const std::size_t at = svg.find(from);
  if (at == std::string::npos) return "";
  const std::string key = " " + name + "=\"";
  const std::size_t start = svg.find(key, at);
  if (start == std::string::npos) return "";
  const std::size_t begin = start + key.size();
  return svg.substr(begin, svg.find('"', begin) - begin);
}

// The <g> of the bar or segment whose <title> is `title`, up to its end.
std::string group_of(const std::string& svg, const std::string& title) {
  const std::size_t at = svg.find("<title>" + title + "</title>");
  if (at == std::string::npos) return "";
  return svg.substr(at, svg.find("</g>", at) - at);
}

// C had 0.8 of GPU 0 in use and GPU 1 free; the pod takes 0.3 of GPU 1. BestFit scored C 100,
// A 81 (the runner-up), B 0.
json placed_record() {
  return json::parse(R"({
    "pod": "p", "step": 3, "policy": "bestfit",
    "request": {"cpu_milli": 2000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 300},
    "nodes_total": 3, "feasible_nodes": 3, "reason_counts": {},
    "candidates": [{"node": "C", "score": 100}, {"node": "A", "score": 81},
                   {"node": "B", "score": 0}],
    "chosen_node": "C", "chosen_gpus": [1], "chosen_gpus_before": [800, 0],
    "score": 100, "runner_up": "A", "runner_up_score": 81, "margin": 19, "tie_broken": false
  })");
}

// Of 6 nodes: 3 T4 (1 short of CPU, 2 of GPU share), 2 V100 short of CPU, 1 without a GPU.
json failed_record() {
  return json::parse(R"({
    "pod": "q", "step": 5, "policy": "fgd",
    "request": {"cpu_milli": 8000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 800},
    "nodes_total": 6, "feasible_nodes": 0, "chosen_node": null, "chosen_gpus": [],
    "reason_counts": {"insufficient cpu": 3, "insufficient GPU share on any single GPU": 2,
                      "node has no GPU": 1},
    "reason_counts_by_type": {
      "T4": {"insufficient cpu": 1, "insufficient GPU share on any single GPU": 2},
      "V100": {"insufficient cpu": 2},
      "no GPU": {"node has no GPU": 1}}
  })");
}

// Submitted at 2 h into the trace at home site "a", sent to "b" with its start put off 2 h
// (to 4 h, where b's forecast is lowest, 20), 4 h of slack; it started at 5 h.
json dispatch_record() {
  return json::parse(R"({
    "kind": "dispatch", "agent": "carbon-forecast", "pod": "job-1", "qos": "BE",
    "request": {"cpu_milli": 1000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 1000},
    "home_site": "a", "site": "b", "submit_s": 7200, "deferred_s": 7200, "slack_s": 14400,
    "start_s": 18000, "step": 0,
    "forecast": {"step_s": 3600, "from_s": 7200,
                 "sites": {"a": [300, 310, 320, 330, 340, 350], "b": [90, 60, 20, 40, 80, 100]}},
    "actual": {"step_s": 3600, "from_s": 7200,
               "sites": {"a": [305, 300, 330, 320, 345, 340], "b": [95, 70, 35, 30, 85, 90]}},
    "alternatives": [{"site": "b", "start_offset_s": 7200, "forecast_ci": 20, "expected_g": 300},
                     {"site": "a", "start_offset_s": 0, "forecast_ci": 300, "expected_g": 4500}]
  })");
}

TEST(DecisionChart, PlacedPodShowsTheGpusBeforeAndAfterAndTheScores) {
  const std::string svg = decision_chart_svg(placed_record());
  ASSERT_FALSE(svg.empty()) << decision_chart_missing(placed_record());
  EXPECT_EQ(decision_chart_missing(placed_record()), "");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  // GPU 0: 0.8 used before, 0.2 free after; GPU 1: this pod's 0.3, then 0.7 free.
  EXPECT_TRUE(has(svg, "<title>GPU 0, used before: 0.80</title>")) << svg;
  EXPECT_TRUE(has(svg, "<title>GPU 0, free after: 0.20</title>"));
  EXPECT_FALSE(has(svg, "<title>GPU 0, this pod"));
  EXPECT_FALSE(has(svg, "<title>GPU 1, used before"));
  EXPECT_TRUE(has(svg, "<title>GPU 1, this pod: 0.30</title>"));
  EXPECT_TRUE(has(svg, "<title>GPU 1, free after: 0.70</title>"));
  EXPECT_TRUE(has(svg, "GPUs of C before and after pod p"));
  // The scores, best first, the chosen node and the runner-up named and coloured apart.
  const std::size_t c = svg.find("<title>C (chosen): 100</title>");
  const std::size_t a = svg.find("<title>A (runner-up): 81</title>");
  const std::size_t b = svg.find("<title>B: 0</title>");
  ASSERT_NE(c, std::string::npos);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_LT(c, a);
  EXPECT_LT(a, b);
  const auto bar_fill = [&](const std::string& title) {
    return attribute_after(group_of(svg, title), "<rect", "fill");
  };
  const std::string chosen_fill = bar_fill("C (chosen): 100");
  EXPECT_NE(chosen_fill, "");
  EXPECT_NE(chosen_fill, bar_fill("A (runner-up): 81"));
  EXPECT_NE(chosen_fill, bar_fill("B: 0"));
  EXPECT_NE(bar_fill("A (runner-up): 81"), bar_fill("B: 0"));
  EXPECT_TRUE(has(svg, "Candidates&#39; scores (bestfit)"));
}

TEST(DecisionChart, ChosenNodeAndRunnerUpShownWhenTheCandidatesLeaveThemOut) {
  json r = placed_record();
  r["candidates"] = json::array({json{{"node", "B"}, {"score", 0}}});
  r.erase("chosen_gpus_before");  // an older record: the scores alone
  const std::string svg = decision_chart_svg(r);
  EXPECT_TRUE(has(svg, "<title>C (chosen): 100</title>")) << svg;
  EXPECT_TRUE(has(svg, "<title>A (runner-up): 81</title>"));
  EXPECT_TRUE(has(svg, "<title>B: 0</title>"));
  EXPECT_FALSE(has(svg, "GPUs of C"));
}

TEST(DecisionChart, FailedPodShowsReasonsByGpuType) {
  const std::string svg = decision_chart_svg(failed_record());
  ASSERT_FALSE(svg.empty());
  EXPECT_TRUE(has(svg, "<title>T4, insufficient cpu: 1</title>")) << svg;
  EXPECT_TRUE(has(svg, "<title>T4, insufficient GPU share on any single GPU: 2</title>"));
  EXPECT_TRUE(has(svg, "<title>V100, insufficient cpu: 2</title>"));
  EXPECT_TRUE(has(svg, "<title>no GPU, node has no GPU: 1</title>"));
  EXPECT_FALSE(has(svg, "<title>V100, node has no GPU"));
  // Each type's total at the end of its row: 3 T4, 2 V100, 1 without a GPU.
  for (const char* total : {">3</text>", ">2</text>", ">1</text>"}) {
    EXPECT_TRUE(has(svg, std::string("font-size=\"11\"") + total)) << total;
  }
  EXPECT_EQ(count(svg, "<text class=\"total\""), 3u);
  // A reason keeps its colour in every row.
  EXPECT_EQ(attribute_after(svg, "<title>T4, insufficient cpu: 1</title>", "fill"),
            attribute_after(svg, "<title>V100, insufficient cpu: 2</title>", "fill"));
  EXPECT_TRUE(has(svg, "Nodes that refused pod q, by GPU type and reason"));
}

TEST(DecisionChart, FailedPodWithoutTypesShowsReasonsAlone) {
  json r = failed_record();
  r.erase("reason_counts_by_type");
  const std::string svg = decision_chart_svg(r);
  EXPECT_TRUE(has(svg, "<title>insufficient cpu: 3</title>")) << svg;
  EXPECT_TRUE(has(svg, "<title>insufficient GPU share on any single GPU: 2</title>"));
  EXPECT_TRUE(has(svg, "<title>node has no GPU: 1</title>"));
  EXPECT_TRUE(has(svg, "Nodes that refused pod q, by reason"));
}

TEST(DecisionChart, DispatchShowsEachSitesForecastAndTheChosenStart) {
  json r = dispatch_record();
  r.erase("actual");
  r["start_s"] = nullptr;
  const std::string svg = decision_chart_svg(r);
  ASSERT_FALSE(svg.empty());
  EXPECT_TRUE(has(svg, "<title>b (chosen)</title>")) << svg;
  EXPECT_TRUE(has(svg, "<title>a (home)</title>"));
  EXPECT_TRUE(has(svg, "(not started)"));
  EXPECT_FALSE(has(svg, "actual"));
  // The chosen start: 2 h after submission, on the x tick labelled 2, with a dot on b's line.
  const std::string marker = group_of(svg, "chosen start +2 h");
  ASSERT_FALSE(marker.empty());
  const std::size_t tick = svg.find("text-anchor=\"middle\">2</text>");
  ASSERT_NE(tick, std::string::npos);
  const std::string tick_tag = svg.substr(svg.rfind("<text", tick));
  EXPECT_EQ(attribute_after(tick_tag, "<text", "x"), attribute_after(marker, "<line", "x1"));
  // The dot: at b's forecast then, 20, a fifth of the way from the y tick 0 to the tick 100.
  const auto y_of_tick = [&](const std::string& label) {
    const std::size_t at = svg.find("text-anchor=\"end\">" + label + "</text>");
    return std::stod(attribute_after(svg.substr(svg.rfind("<text", at)), "<text", "y"));
  };
  const double y0 = y_of_tick("0");
  const double y100 = y_of_tick("100");
  EXPECT_NEAR(std::stod(attribute_after(marker, "<circle", "cy")), y0 + (y100 - y0) * 0.2, 0.1);
  EXPECT_FALSE(group_of(svg, "latest start +4 h").empty());
  // Hours after submission: the first forecast point is at 0.
  EXPECT_TRUE(has(svg, "hours after submission"));
  // A short deferral in seconds or minutes.
  r["deferred_s"] = 39;
  EXPECT_FALSE(group_of(decision_chart_svg(r), "chosen start +39 s").empty());
  r["deferred_s"] = 720;
  EXPECT_FALSE(group_of(decision_chart_svg(r), "chosen start +12 min").empty());
}

TEST(DecisionChart, DispatchShowsWhatHappenedWhereTheRecordHasIt) {
  const std::string svg = decision_chart_svg(dispatch_record());
  EXPECT_TRUE(has(svg, "<title>a actual</title>")) << svg;
  EXPECT_TRUE(has(svg, "<title>b actual</title>"));
  EXPECT_TRUE(has(group_of(svg, "b actual"), "stroke-dasharray"));
  EXPECT_FALSE(has(group_of(svg, "b (chosen)"), "stroke-dasharray"));
  EXPECT_TRUE(has(svg, "dashed: actual intensity"));
  const std::string started = group_of(svg, "actual start +3 h");
  ASSERT_FALSE(started.empty());
  EXPECT_TRUE(has(started, "stroke-dasharray"));
  EXPECT_FALSE(has(svg, "(not started)"));
  // Each site's forecast and actual lines share its colour.
  EXPECT_EQ(attribute_after(group_of(svg, "b (chosen)"), "<path", "stroke"),
            attribute_after(group_of(svg, "b actual"), "<path", "stroke"));
}

TEST(DecisionChart, DispatchWithoutAForecastShowsTheOptions) {
  json r = dispatch_record();
  r.erase("forecast");
  r.erase("actual");
  const std::string svg = decision_chart_svg(r);
  EXPECT_TRUE(has(svg, "<title>b, start +2 h (chosen): 300</title>")) << svg;
  EXPECT_TRUE(has(svg, "<title>a, start +0 h: 4,500</title>"));
  EXPECT_TRUE(has(svg, "expected carbon, g CO2eq"));
  // Options without expected grams: their forecast intensity.
  for (json& a : r["alternatives"]) a.erase("expected_g");
  const std::string intensity = decision_chart_svg(r);
  EXPECT_TRUE(has(intensity, "<title>b, start +2 h (chosen): 20</title>")) << intensity;
  EXPECT_TRUE(has(intensity, "<title>a, start +0 h: 300</title>"));
  EXPECT_TRUE(has(intensity, "forecast over the job, gCO2eq/kWh"));
  r.erase("alternatives");
  r["carbon_now"] = json{{"a", 300}, {"b", 90}};
  const std::string now = decision_chart_svg(r);
  EXPECT_TRUE(has(now, "<title>b (chosen): 90</title>")) << now;
  EXPECT_TRUE(has(now, "<title>a: 300</title>"));
}

TEST(DecisionChart, EveryLabelIsEscaped) {
  const std::string evil = "<b>&\"x'";
  const std::string escaped = "&lt;b&gt;&amp;&quot;x&#39;";
  json placed = placed_record();
  placed["pod"] = evil;
  placed["chosen_node"] = evil;
  placed["policy"] = evil;
  placed["candidates"][0]["node"] = evil;
  json failed = failed_record();
  failed["pod"] = evil;
  failed["reason_counts_by_type"][evil] = json{{evil, 4}};
  json dispatch = dispatch_record();
  dispatch["pod"] = evil;
  dispatch["site"] = evil;
  dispatch["forecast"]["sites"][evil] = json::array({1, 2, 3});
  for (const json& r : {placed, failed, dispatch}) {
    const std::string svg = decision_chart_svg(r);
    ASSERT_FALSE(svg.empty());
    EXPECT_FALSE(has(svg, evil)) << svg;
    EXPECT_FALSE(has(svg, "<b>"));
    EXPECT_TRUE(has(svg, escaped)) << svg;
  }
}

TEST(DecisionChart, SameRecordSameBytesAndIdsApart) {
  for (const json& r : {placed_record(), failed_record(), dispatch_record()}) {
    EXPECT_EQ(decision_chart_svg(r), decision_chart_svg(json::parse(r.dump())));
  }
  // Two decisions about one pod get charts with different ids (one page may show both).
  json later = placed_record();
  later["step"] = 9;
  const std::string first = decision_chart_svg(placed_record());
  const std::string second = decision_chart_svg(later);
  EXPECT_NE(attribute_after(first, "<svg", "id"), attribute_after(second, "<svg", "id"));
  EXPECT_EQ(attribute_after(first, "<svg", "id").rfind("decision-p-", 0), 0u);
}

TEST(DecisionChart, RecordsWithoutWhatAChartNeedsNeverThrow) {
  // Nothing to draw: an empty chart and the reason.
  for (const char* text :
       {R"([1, 2])", R"("text")", R"({"pod": "p"})", R"({"pod": "p", "chosen_node": "n"})",
        R"({"kind": "dispatch", "pod": "j"})", R"({"pod": 7, "reason_counts": []})",
        R"({"chosen_node": "n", "chosen_gpus_before": "x", "candidates": 3})",
        R"({"chosen_node": "n", "chosen_gpus_before": [], "candidates": [{"node": 1}]})",
        R"({"kind": "dispatch", "forecast": {"step_s": 0, "from_s": 0, "sites": {"a": [1]}}})",
        R"({"kind": "dispatch", "forecast": {"step_s": 60, "sites": []}, "alternatives": {}})",
        R"({"reason_counts_by_type": {"T4": 5}, "reason_counts": {"x": "y"}})"}) {
    const json r = json::parse(text);
    std::string svg;
    EXPECT_NO_THROW(svg = decision_chart_svg(r)) << text;
    EXPECT_EQ(svg, "") << text;
    EXPECT_NE(decision_chart_missing(r), "") << text;
  }
  // Odd values in what there is: a chart of it all the same.
  for (
      const char* text :
      {R"({"chosen_node": "n", "chosen_gpus": ["x", -1, 99], "chosen_gpus_before": [5000, -3, "x", null],
            "request": {"gpu_milli": "lots"}})",
       R"({"chosen_node": "n", "candidates": [{"node": "a", "score": -1e14}, {"node": "b", "score": 1e300},
            {"node": "c", "score": 1e14}]})",
       R"({"reason_counts_by_type": {"T4": {"cpu": -2, "mem": "x"}, "V100": [1]}})",
       R"({"kind": "dispatch", "submit_s": "x", "deferred_s": 1e308, "start_s": -5,
            "forecast": {"step_s": 1e-300, "from_s": -1e14, "sites": {"a": [null, "x", 1e14, -1e14, 1e308]}},
            "actual": {"step_s": 3600, "from_s": 0, "sites": {"a": 3}}})"}) {
    const json r = json::parse(text);
    std::string svg;
    EXPECT_NO_THROW(svg = decision_chart_svg(r)) << text;
    EXPECT_NE(svg, "") << text;
    EXPECT_EQ(decision_chart_missing(r), "") << text;
  }
  // A huge record is cut to a bounded chart.
  json many = placed_record();
  many["chosen_gpus_before"] = json::array();
  for (int g = 0; g < 100000; ++g) many["chosen_gpus_before"].push_back(g % 1000);
  EXPECT_LT(decision_chart_svg(many).size(), 200000u);
}

}  // namespace
}  // namespace greensched::report::chart_test
