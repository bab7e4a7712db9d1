// Decision records (JSON Lines) of fleet dispatch (multi --record, a dispatch journal): the
// first N decisions that sent a job away from home or deferred it, each told as
// `greensched explain --pod JOB --policy AGENT` tells it, beside its chart, with its checked
// narration where a narrator is given. Jobs that stayed home and started at once are counted,
// not told: they are the local scheduler's decisions.
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

namespace greensched::report {
namespace {

using svg::escape;

struct Told {
  std::size_t line;
  nlohmann::json record;
};

struct FleetDecisions {
  std::size_t decisions = 0;  // dispatch records
  std::size_t acted = 0;      // of them, a job moved or deferred
  std::vector<Told> first;
};

// Moved away from home, deferred beyond its data's move, or sent again at its latest start.
bool acted(const nlohmann::json& r) {
  const auto number = [&r](const char* key) {
    return r.contains(key) && r[key].is_number() ? r[key].get<double>() : 0.0;
  };
  return r["site"] != r["home_site"] || number("deferred_s") > number("transfer_s") ||
         r.contains("redispatch");
}

Result<FleetDecisions> scan(const std::string& path, int limit) {
  auto content = read_file(path);
  if (!content.ok()) return Error{content.error()};
  const std::string& text = content.value();
  FleetDecisions out;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    // Only a dispatch record names its kind so; placements are the failed pods' section's.
    if (line.find("\"dispatch\"") == std::string_view::npos) continue;
    auto parsed = explain::parse_decision_record(line, fmt::format("{}:{}", path, line_no));
    if (!parsed.ok()) return Error{parsed.error()};
    const nlohmann::json& r = parsed.value();
    if (r.value("kind", std::string()) != "dispatch") continue;
    ++out.decisions;
    if (!acted(r)) continue;
    ++out.acted;
    if (out.first.size() < static_cast<std::size_t>(std::max(limit, 0))) {
      out.first.push_back(Told{line_no, std::move(parsed.value())});
    }
  }
  return out;
}

// "agent green, seed 42, line 7".
std::string origin(const Told& t) {
  const nlohmann::json& r = t.record;
  std::string out;
  if (r.contains("run") && r["run"].is_object()) {
    const auto& run = r["run"];
    if (run.contains("agent") && run["agent"].is_string()) {
      out = "agent " + run["agent"].get<std::string>();
    }
    if (run.contains("seed")) out += (out.empty() ? "" : ", ") + ("seed " + run["seed"].dump());
  } else if (r.contains("agent") && r["agent"].is_string()) {
    out = "agent " + r["agent"].get<std::string>();
  }
  return out + (out.empty() ? "" : ", ") + fmt::format("line {}", t.line);
}

}  // namespace

Status add_fleet_decisions_section(Page& page, const std::string& path, int limit,
                                   const explain::NarratorConfig& narrator,
                                   const explain::NarratorInfo& narrator_info,
                                   std::vector<std::string>* notes,
                                   const NarrationProgress& progress) {
  auto scanned = scan(path, limit);
  if (!scanned.ok()) return scanned.status();
  const FleetDecisions& s = scanned.value();
  if (s.decisions == 0) return Status::Ok();
  page.section(
      "sec-fleet-decisions", "Why jobs went where they did",
      fmt::format("From the decision records in <code>{}</code>: {} sent a job away from home "
                  "or deferred it, of {}. {}",
                  escape(path), s.acted, plural(s.decisions, "fleet decision", "fleet decisions"),
                  s.first.empty()
                      ? std::string()
                      : fmt::format("The first {} are told below, as <code>greensched explain "
                                    "--pod JOB --policy AGENT</code> tells them.",
                                    s.first.size())));
  std::string body = "<div class=\"fleet-decisions\" id=\"fleet-decisions\">\n";
  for (const Told& t : s.first) {
    const nlohmann::json& r = t.record;
    const std::string job = r["pod"].get<std::string>();
    body += told_decision_html("fleet-decision", job, origin(t), explain::explain_text(r), r,
                               explain::explain_facts(r), narrator, narrator_info, notes);
    if (progress && !narrator.url.empty()) {
      progress(static_cast<std::size_t>(&t - s.first.data()) + 1, s.first.size(),
               "fleet decisions");
    }
  }
  body += "</div>\n";
  page.figures.push_back("fleet-decisions");
  page.body += body;
  return Status::Ok();
}

}  // namespace greensched::report
