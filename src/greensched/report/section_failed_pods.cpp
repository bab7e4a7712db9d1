// Decision records (JSON Lines): the last N pods that could not be placed, each explained by
// explain::explain_text beside its chart (report/decision_chart). Records are read and counted
// as failed by explain's own rules.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/text_file.hpp"
#include "greensched/explain/checked_narration.hpp"
#include "greensched/explain/explanation.hpp"
#include "greensched/report/decision_chart.hpp"
#include "greensched/report/png.hpp"
#include "greensched/report/section.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::report {
namespace {

using svg::escape;

// False only when the line gives "chosen_node" a string value: a placed pod, not worth
// parsing. Every other line is parsed and judged by explain::is_failed_placement.
bool may_be_failed(std::string_view line) {
  for (std::size_t pos = line.find("\"chosen_node\""); pos != std::string_view::npos;
       pos = line.find("\"chosen_node\"", pos + 1)) {
    std::size_t i = pos + 13;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size() || line[i] != ':') continue;
    ++i;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i < line.size() && line[i] == '"') return false;
  }
  return true;
}

struct Failed {
  std::size_t line;
  nlohmann::json record;
};

// The records of a file: how many, how many failed, and the first `limit` failed ones (as
// `explain --failed N` picks them).
struct FailedPods {
  std::size_t records = 0;
  std::size_t failed = 0;
  std::vector<Failed> first;
};

Result<FailedPods> scan_records(const std::string& path, int limit) {
  auto content = read_file(path);
  if (!content.ok()) return Error{content.error()};
  const std::string& text = content.value();
  FailedPods out;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    ++out.records;
    if (!may_be_failed(line)) continue;
    auto parsed = explain::parse_decision_record(line, fmt::format("{}:{}", path, line_no));
    if (!parsed.ok()) return Error{parsed.error()};
    if (!explain::is_failed_placement(parsed.value())) continue;
    ++out.failed;
    if (out.first.size() < static_cast<std::size_t>(std::max(limit, 0))) {
      out.first.push_back(Failed{line_no, std::move(parsed.value())});
    }
  }
  return out;
}

// "policy fgd, seed 1, step 4, line 7": where a failed pod's record comes from.
std::string record_origin(const Failed& f) {
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
  std::string joined;
  for (const std::string& fact : facts) joined += (joined.empty() ? "" : ", ") + fact;
  return joined;
}

}  // namespace

std::string narration_html(const explain::CheckedNarration& told,
                           const explain::NarratorInfo& info) {
  const std::string& model = info.model;
  return fmt::format(
      "<p class=\"narration\">{} <small>(narrated by {}, checked against {} facts)</small></p>",
      escape(told.verdict->text),
      escape(model.rfind('/', 0) == 0 ? model.substr(model.rfind('/') + 1) : model),
      told.verdict->used.size());
}

std::string told_decision_html(std::string_view css_class, const std::string& name,
                               const std::string& origin, const std::string& text,
                               const nlohmann::json& record, const nlohmann::json& facts,
                               const explain::NarratorConfig& narrator,
                               const explain::NarratorInfo& narrator_info,
                               std::vector<std::string>* notes) {
  // Its chart beside the words: the SVG `explain --chart FILE.svg` writes.
  const std::string chart = decision_chart_svg(record);
  // The narration, as `explain --narrator-url` gives it: the same facts, the same guard.
  std::string narration;
  if (!narrator.url.empty()) {
    std::string png;
    if (narrator_info.vision && !chart.empty()) {
      if (auto drawn = svg_to_png(chart); drawn.ok()) png = std::move(drawn.value());
    }
    const explain::CheckedNarration told = explain::narrate_checked(
        narrator, narrator_info, facts, explain::explain_text(record), png);
    if (notes != nullptr) {
      for (const std::string& note : told.notes) notes->push_back(name + ": " + note);
    }
    if (told.accepted()) narration = narration_html(told, narrator_info);
  }
  return fmt::format(
      "<article class=\"{}\"><h3>{} <small>({})</small></h3>\n<div class=\"why\">"
      "<pre>{}</pre>{}{}</div></article>\n",
      css_class, escape(name), escape(origin), escape(text), narration,
      chart.empty() ? std::string() : "<div class=\"decision-chart\">" + chart + "</div>");
}

Status add_failed_pods_section(Page& page, const std::string& path, int limit,
                               const explain::NarratorConfig& narrator,
                               const explain::NarratorInfo& narrator_info,
                               std::vector<std::string>* notes, const NarrationProgress& progress) {
  auto scanned = scan_records(path, limit);
  if (!scanned.ok()) return scanned.status();
  const FailedPods& s = scanned.value();
  page.section("sec-failed", "Why pods failed",
               fmt::format("From the decision records in <code>{}</code>: {} of {} are pods that "
                           "could not be placed on any node. {}",
                           escape(path), s.failed, plural(s.records, "record", "records"),
                           s.first.empty() ? std::string()
                           : s.first.size() == 1
                               ? std::string("The first one is explained below (as "
                                             "<code>greensched explain --failed 1</code> does).")
                               : fmt::format("The first {} are explained below, in the order "
                                             "they happened (as <code>greensched explain "
                                             "--failed {}</code> does).",
                                             s.first.size(), s.first.size())));
  std::string body = "<div class=\"failed-pods\" id=\"failed-pods\">\n";
  // A suggestion already made for an earlier pod is said once: later pods point back to it.
  // The facts say which sentences suggest what (explain_facts' "suggestions").
  std::map<std::string, std::string> suggested;  // kind + its diagnosis -> the pod it was for
  for (const Failed& f : s.first) {
    const nlohmann::json& r = f.record;
    const std::string pod =
        r.contains("pod") && r["pod"].is_string() ? r["pod"].get<std::string>() : "pod";
    const nlohmann::json facts = explain::explain_facts(r);
    std::vector<std::string> sentences = facts["sentences"].get<std::vector<std::string>>();
    bool earlier = false;  // a suggestion said before this one, for this pod
    for (const nlohmann::json& g : facts.value("suggestions", nlohmann::json::array())) {
      const std::string kind = g["kind"].get<std::string>();
      const std::size_t at = g["sentence"].get<std::size_t>();
      const std::string key = kind + g["of"].dump();
      if (auto it = suggested.find(key); it != suggested.end() && at < sentences.size()) {
        sentences[at] =
            fmt::format("{} (as for {} above).",
                        kind == "move" ? (earlier ? "Or the same move" : "The same move")
                                       : "The same smallest change",
                        it->second);
      } else {
        suggested.emplace(key, pod);
      }
      earlier = true;
    }
    std::string text;
    for (const std::string& sentence : sentences) text += sentence + "\n";
    body += told_decision_html("failed-pod", pod, record_origin(f), text, r, facts, narrator,
                               narrator_info, notes);
    if (progress && !narrator.url.empty()) {
      progress(static_cast<std::size_t>(&f - s.first.data()) + 1, s.first.size(), "failed pods");
    }
  }
  body += "</div>\n";
  page.figures.push_back("failed-pods");
  page.body += body;
  return Status::Ok();
}

}  // namespace greensched::report
