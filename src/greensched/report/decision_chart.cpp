// One decision record's chart (see decision_chart.hpp), drawn with the report's SVG builder.
// The record is read defensively (any member may be absent or of another type): each chart
// draws what the record has and says what it lacks.
#include "greensched/report/decision_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/report/svg_chart.hpp"

namespace greensched::report {
namespace {

using nlohmann::json;

// The most bars, rows, segments and lines a chart draws: a record with more is cut, so a
// malformed one cannot make a huge image.
constexpr std::size_t kMaxGpus = 64;
constexpr std::size_t kMaxBars = 16;
constexpr std::size_t kMaxReasons = 10;
constexpr std::size_t kMaxSites = 16;

const std::string kChosenColor = "#59a14f";    // green
const std::string kRunnerUpColor = "#f28e2b";  // orange
const std::string kOtherColor = "#9aa0a6";     // grey

// A number of the record, if it is one within +-kMaxValue (beyond that, axis arithmetic would
// overflow: such a value is drawn as absent).
constexpr double kMaxValue = 1e15;
std::optional<double> number_at(const json* v) {
  if (v == nullptr || !v->is_number()) return std::nullopt;
  const double d = v->get<double>();
  if (!std::isfinite(d) || std::fabs(d) > kMaxValue) return std::nullopt;
  return d;
}

std::optional<double> number_of(const json& object, const char* key) {
  return number_at(json_member(object, key));
}

std::string text_of(const json& object, const char* key, const std::string& fallback = "") {
  const json* v = json_member(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

// A time after the origin as a person says it: "+0 h", "+39 s", "+12 min", "+2 h", "+1.5 h".
std::string hours_label(double seconds) {
  const char* sign = seconds < 0 ? "-" : "+";
  const double a = std::fabs(seconds);
  if (a >= 0.5 && a < 59.5) return fmt::format("{}{:.0f} s", sign, a);
  if (a >= 59.5 && a < 3570) return fmt::format("{}{:.0f} min", sign, a / 60);
  std::string h = fmt::format("{:.1f}", a / 3600);
  if (h.size() > 2 && h.compare(h.size() - 2, 2, ".0") == 0) h.resize(h.size() - 2);
  return (h == "0" ? "+" : sign) + h + " h";
}

// 64-bit FNV-1a: the record's fingerprint in the chart's ids, so that two records' charts on
// one page never share an id.
uint64_t record_fingerprint(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// "decision-<pod, as id characters>-<fingerprint>".
std::string chart_id(const json& record) {
  std::string pod = text_of(record, "pod", "record");
  std::string id = "decision-";
  for (char c : pod.substr(0, 40)) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_';
    id += plain ? c : '-';
  }
  const std::string dumped = record.dump(-1, ' ', false, json::error_handler_t::replace);
  return id + fmt::format("-{:08x}", record_fingerprint(dumped) & 0xFFFFFFFFULL);
}

// A chart's width: at least `width`, and enough for its title on one line (bold text in the
// fonts browsers and librsvg pick is up to a third wider than text_width's estimate).
int width_for(const std::string& title, int width) {
  return std::max(width, static_cast<int>(std::ceil(svg::text_width(title, 15) * 1.35)) + 24);
}

struct Drawn {
  std::vector<std::string> charts;
  std::string missing;  // why nothing was drawn
};

// --- placed pod -------------------------------------------------------------------------

// Per GPU of the chosen node: used before, this pod's share, free after (GPU shares). The
// placed pod's two charts are drawn at one width (placed_charts).
std::optional<svg::StackedBarChart> gpus_chart(const json& r, const std::string& id) {
  const json* before = json_member(r, "chosen_gpus_before");
  if (before == nullptr || !before->is_array() || before->empty()) return std::nullopt;
  std::set<int64_t> taken;
  if (const json* gpus = json_member(r, "chosen_gpus"); gpus != nullptr && gpus->is_array()) {
    for (const json& g : *gpus) {
      if (g.is_number_integer()) taken.insert(g.get<int64_t>());
    }
  }
  double share = 0;
  if (const json* request = json_member(r, "request")) {
    share = std::clamp(number_of(*request, "gpu_milli").value_or(0), 0.0, 1000.0);
  }
  svg::StackedBarChart c;
  c.id = id;
  c.title = fmt::format("GPUs of {} before and after pod {}", text_of(r, "chosen_node", "?"),
                        text_of(r, "pod", "?"));
  c.width = width_for(c.title, c.width);
  c.value_label = "share of the GPU (1 = one whole GPU)";
  c.decimals = 2;
  c.max = 1;
  c.segments = {
      {"used before", "#4e79a7"}, {"this pod", kRunnerUpColor}, {"free after", "#e4e4e4"}};
  for (std::size_t g = 0; g < before->size() && g < kMaxGpus; ++g) {
    const double used = std::clamp(number_at(&(*before)[g]).value_or(0), 0.0, 1000.0);
    const double pod = taken.count(static_cast<int64_t>(g)) ? std::min(share, 1000 - used) : 0;
    const double free = std::max(0.0, 1000 - used - pod);
    c.rows.push_back({fmt::format("GPU {}", g), {used / 1000, pod / 1000, free / 1000}});
  }
  return c;
}

// The recorded candidates' scores, best first, the chosen node and the runner-up marked.
std::optional<svg::BarChart> scores_chart(const json& r, const std::string& id) {
  const std::string chosen = text_of(r, "chosen_node");
  const std::string runner_up = text_of(r, "runner_up");
  std::vector<std::pair<std::string, double>> scores;
  const auto listed = [&](const std::string& node) {
    return std::any_of(scores.begin(), scores.end(),
                       [&](const auto& s) { return s.first == node; });
  };
  if (const json* cands = json_member(r, "candidates"); cands != nullptr && cands->is_array()) {
    for (const json& cand : *cands) {
      const std::string node = text_of(cand, "node");
      const std::optional<double> score = number_of(cand, "score");
      if (node.empty() || !score || listed(node)) continue;
      scores.emplace_back(node, *score);
    }
  }
  // The chosen node and the runner-up even when the candidates leave them out.
  if (std::optional<double> s = number_of(r, "score"); s && !chosen.empty() && !listed(chosen)) {
    scores.insert(scores.begin(), std::make_pair(chosen, *s));
  }
  if (std::optional<double> s = number_of(r, "runner_up_score");
      s && !runner_up.empty() && !listed(runner_up)) {
    scores.emplace_back(runner_up, *s);
  }
  if (scores.empty()) return std::nullopt;
  if (scores.size() > kMaxBars) scores.resize(kMaxBars);
  svg::BarChart c;
  c.id = id;
  const std::string policy = text_of(r, "policy");
  c.title = policy.empty() ? std::string("Candidates' scores")
                           : fmt::format("Candidates' scores ({})", policy);
  c.value_label = "score (the highest is chosen)";
  c.width = width_for(c.title, c.width);
  for (const auto& [node, score] : scores) {
    const bool is_chosen = node == chosen;
    const bool is_runner_up = !is_chosen && node == runner_up;
    c.bars.push_back(svg::Bar{node + (is_chosen      ? " (chosen)"
                                      : is_runner_up ? " (runner-up)"
                                                     : ""),
                              score,
                              is_chosen      ? kChosenColor
                              : is_runner_up ? kRunnerUpColor
                                             : kOtherColor});
  }
  return c;
}

Drawn placed_charts(const json& r, const std::string& id) {
  Drawn d;
  std::optional<svg::StackedBarChart> gpus = gpus_chart(r, id + "-gpus");
  std::optional<svg::BarChart> scores = scores_chart(r, id + "-scores");
  if (gpus && scores) gpus->width = scores->width = std::max(gpus->width, scores->width);
  if (gpus) d.charts.push_back(svg::render_stacked_bar_chart(*gpus));
  if (scores) d.charts.push_back(svg::render_bar_chart(*scores));
  if (d.charts.empty()) {
    d.missing = "a placed pod's record without chosen_gpus_before or candidates' scores";
  }
  return d;
}

// --- failed pod -------------------------------------------------------------------------

Drawn failed_charts(const json& r, const std::string& id) {
  Drawn d;
  const std::string pod = text_of(r, "pod", "?");
  const json* by_type = json_member(r, "reason_counts_by_type");
  if (by_type != nullptr && by_type->is_object() && !by_type->empty()) {
    std::set<std::string> reasons;
    for (const auto& [type, counts] : by_type->items()) {
      if (!counts.is_object()) continue;
      for (const auto& [reason, n] : counts.items()) {
        if (number_at(&n)) reasons.insert(reason);
      }
    }
    svg::StackedBarChart c;
    c.id = id + "-reasons";
    c.title = fmt::format("Nodes that refused pod {}, by GPU type and reason", pod);
    c.width = width_for(c.title, c.width);
    c.value_label = "nodes that refused it";
    c.show_total = true;
    for (const std::string& reason : reasons) {
      if (c.segments.size() == kMaxReasons) break;
      c.segments.push_back({reason, svg::palette()[c.segments.size() % svg::palette().size()]});
    }
    for (const auto& [type, counts] : by_type->items()) {
      if (!counts.is_object() || c.rows.size() == kMaxBars) continue;
      svg::StackedRow row{type, {}};
      for (const svg::Segment& s : c.segments) {
        row.values.push_back(number_at(json_member(counts, s.label)).value_or(0));
      }
      c.rows.push_back(std::move(row));
    }
    if (!c.rows.empty() && !c.segments.empty()) {
      d.charts.push_back(svg::render_stacked_bar_chart(c));
      return d;
    }
  }
  const json* counts = json_member(r, "reason_counts");
  if (counts != nullptr && counts->is_object()) {
    svg::BarChart c;
    c.id = id + "-reasons";
    c.title = fmt::format("Nodes that refused pod {}, by reason", pod);
    c.width = width_for(c.title, c.width);
    c.value_label = "nodes that refused it";
    for (const auto& [reason, n] : counts->items()) {
      if (c.bars.size() == kMaxBars) break;
      if (std::optional<double> v = number_at(&n)) c.bars.push_back({reason, *v, "#e15759"});
    }
    if (!c.bars.empty()) {
      d.charts.push_back(svg::render_bar_chart(c));
      return d;
    }
  }
  d.missing = "a failed pod's record without reason_counts_by_type or reason_counts";
  return d;
}

// --- dispatch ---------------------------------------------------------------------------

// The intensity series of each site in `block` ({"step_s", "from_s", "sites": {site: [ci]}}),
// x in hours after `origin` (seconds); NaN where a value is not a number.
struct SiteSeries {
  std::string site;
  std::vector<svg::Point> points;
};
std::vector<SiteSeries> intensity_series(const json* block, std::optional<double> origin) {
  std::vector<SiteSeries> out;
  if (block == nullptr || !block->is_object()) return out;
  const std::optional<double> step = number_of(*block, "step_s");
  const std::optional<double> from = number_of(*block, "from_s");
  const json* sites = json_member(*block, "sites");
  if (!step || *step <= 0 || !from || sites == nullptr || !sites->is_object()) return out;
  const double zero = origin.value_or(*from);
  for (const auto& [site, values] : sites->items()) {
    if (!values.is_array() || out.size() == kMaxSites) continue;
    SiteSeries s{site, {}};
    s.points.reserve(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double x = (*from + static_cast<double>(i) * *step - zero) / 3600.0;
      s.points.push_back({x, number_at(&values[i]).value_or(std::nan(""))});
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The value of `block`'s series for `site` at time `t` (seconds), if it has one.
std::optional<double> intensity_at(const json* block, const std::string& site, double t) {
  if (block == nullptr || !block->is_object()) return std::nullopt;
  const std::optional<double> step = number_of(*block, "step_s");
  const std::optional<double> from = number_of(*block, "from_s");
  const json* sites = json_member(*block, "sites");
  if (!step || *step <= 0 || !from || sites == nullptr) return std::nullopt;
  const json* values = json_member(*sites, site);
  if (values == nullptr || !values->is_array() || t < *from) return std::nullopt;
  const double k = std::floor((t - *from) / *step);
  if (!(k < static_cast<double>(values->size()))) return std::nullopt;
  return number_at(&(*values)[static_cast<std::size_t>(k)]);
}

std::optional<std::string> forecast_chart(const json& r, const std::string& id) {
  const json* forecast = json_member(r, "forecast");
  const json* actual = json_member(r, "actual");
  const std::optional<double> submit = number_of(r, "submit_s");
  std::optional<double> origin = submit;
  if (!origin && forecast != nullptr && forecast->is_object()) {
    origin = number_of(*forecast, "from_s");
  }
  const std::vector<SiteSeries> planned = intensity_series(forecast, origin);
  if (planned.empty()) return std::nullopt;
  const std::string chosen = text_of(r, "site");
  const std::string home = text_of(r, "home_site");
  svg::ColorMap colors;
  svg::LineChart c;
  c.id = id;
  c.width = 620;
  c.plot_height = 220;
  const json* start = r.is_object() && r.contains("start_s") ? &r["start_s"] : nullptr;
  c.title = fmt::format("Job {}: forecast carbon intensity per site{}", text_of(r, "pod", "?"),
                        start != nullptr && start->is_null() ? " (not started)" : "");
  c.width = width_for(c.title, c.width);
  c.x_label = submit ? "hours after submission" : "hours";
  c.y_label = "gCO2eq/kWh";
  for (const SiteSeries& s : planned) {
    std::string name = s.site;
    if (s.site == chosen && s.site == home) {
      name += " (home, chosen)";
    } else if (s.site == chosen) {
      name += " (chosen)";
    } else if (s.site == home) {
      name += " (home)";
    }
    svg::Series series;
    series.name = name;
    series.color = colors.color(s.site);
    series.points = s.points;
    c.series.push_back(std::move(series));
  }
  for (const SiteSeries& s : intensity_series(actual, origin)) {
    svg::Series series;
    series.name = s.site + " actual";
    series.color = colors.color(s.site);
    series.points = s.points;
    series.dashed = true;
    series.in_legend = false;
    c.series.push_back(std::move(series));
  }
  if (c.series.size() > planned.size()) {
    c.extra_legend.push_back({"dashed: actual intensity", "#444", true, false});
  }
  const double zero = origin.value_or(0);
  const std::string chosen_color = chosen.empty() ? std::string("#222") : colors.color(chosen);
  if (std::optional<double> deferred = number_of(r, "deferred_s"); deferred && submit) {
    const double t = *submit + *deferred;
    c.markers.push_back({(t - zero) / 3600, intensity_at(forecast, chosen, t),
                         "chosen start " + hours_label(t - zero), chosen_color, false});
  }
  if (std::optional<double> started = number_of(r, "start_s")) {
    c.markers.push_back({(*started - zero) / 3600, intensity_at(actual, chosen, *started),
                         "actual start " + hours_label(*started - zero), "#222", true});
  }
  if (std::optional<double> slack = number_of(r, "slack_s"); slack && submit && *slack > 0) {
    c.markers.push_back(
        {*slack / 3600, std::nullopt, "latest start " + hours_label(*slack), "#7f7f7f", true});
  }
  return svg::render_line_chart(c);
}

Drawn dispatch_charts(const json& r, const std::string& id) {
  Drawn d;
  if (auto chart = forecast_chart(r, id + "-carbon")) {
    d.charts.push_back(std::move(*chart));
    return d;
  }
  const std::string chosen = text_of(r, "site");
  const std::string job = text_of(r, "pod", "?");
  // Each option's expected grams; where the agent estimated none, its forecast intensity.
  const json* alternatives = json_member(r, "alternatives");
  for (const char* key : {"expected_g", "forecast_ci"}) {
    if (alternatives == nullptr || !alternatives->is_array()) break;
    const bool grams = std::string_view(key) == "expected_g";
    svg::BarChart c;
    c.id = id + "-alternatives";
    c.title = fmt::format("Job {}: {} of each option", job,
                          grams ? "expected carbon" : "forecast carbon intensity");
    c.value_label = grams ? "expected carbon, g CO2eq" : "forecast over the job, gCO2eq/kWh";
    c.width = width_for(c.title, c.width);
    for (const json& a : *alternatives) {
      const std::optional<double> v = number_of(a, key);
      const std::string site = text_of(a, "site");
      if (!v || site.empty() || c.bars.size() == kMaxBars) continue;
      std::string label = site;
      if (std::optional<double> offset = number_of(a, "start_offset_s")) {
        label += ", start " + hours_label(*offset);
      }
      c.bars.push_back({label + (site == chosen ? " (chosen)" : ""), *v,
                        site == chosen ? kChosenColor : kOtherColor});
    }
    if (!c.bars.empty()) {
      d.charts.push_back(svg::render_bar_chart(c));
      return d;
    }
  }
  const json* now = json_member(r, "carbon_now");
  if (now != nullptr && now->is_object()) {
    svg::BarChart c;
    c.id = id + "-carbon-now";
    c.title = fmt::format("Job {}: carbon intensity at submission", job);
    c.value_label = "gCO2eq/kWh";
    c.width = width_for(c.title, c.width);
    for (const auto& [site, ci] : now->items()) {
      const std::optional<double> v = number_at(&ci);
      if (!v || c.bars.size() == kMaxBars) continue;
      c.bars.push_back({site + (site == chosen ? " (chosen)" : ""), *v,
                        site == chosen ? kChosenColor : kOtherColor});
    }
    if (!c.bars.empty()) {
      d.charts.push_back(svg::render_bar_chart(c));
      return d;
    }
  }
  d.missing = "a dispatch record without forecast, alternatives' figures or carbon_now";
  return d;
}

Drawn draw_record(const json& record) {
  if (!record.is_object()) return Drawn{{}, "not a JSON object"};
  const std::string id = chart_id(record);
  if (text_of(record, "kind") == "dispatch") return dispatch_charts(record, id);
  if (text_of(record, "kind") == "drain") {
    return Drawn{{}, "a drained node's record (its moves are told in words)"};
  }
  const json* node = json_member(record, "chosen_node");
  return node != nullptr && node->is_string() ? placed_charts(record, id)
                                              : failed_charts(record, id);
}

}  // namespace

std::string decision_chart_svg(const json& record) {
  const Drawn d = draw_record(record);
  if (d.charts.empty()) return {};
  const std::string pod = text_of(record, "pod", "?");
  return svg::stack_charts(chart_id(record), fmt::format("Decision chart: {}", pod), d.charts);
}

std::string decision_chart_missing(const json& record) {
  return draw_record(record).missing;
}

}  // namespace greensched::report
