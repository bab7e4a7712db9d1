#include "greensched/report/html_report.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "greensched/explain/checked_narration.hpp"
#include "greensched/report/section.hpp"

namespace greensched::report {
namespace {

namespace fs = std::filesystem;

// What a results directory holds: its tables, read, and the kind of summary and timeline.
struct Inputs {
  std::string summary_kind;  // inflation, replay, multi, or "" (absent)
  std::string timeline_kind;
  std::optional<Table> summary, curves, occupancy, timeline, bound;
  std::vector<std::string> paths;  // the files read, in reading order
  std::vector<std::string> notes;  // the narrator's
};

// summary.csv of simulate (inflation or replay, which has `queue`) or multi (first `agent`).
TableSpec summary_spec(const std::vector<std::string>& header, std::string& kind) {
  if (!header.empty() && header[0] == "agent") {
    kind = "multi";
    return TableSpec{multi_summary_columns(), true};
  }
  if (std::find(header.begin(), header.end(), "queue") != header.end()) {
    kind = "replay";
    return TableSpec{replay_summary_columns()};
  }
  kind = "inflation";
  return TableSpec{inflation_summary_columns()};
}

// timeline.csv of simulate's replay mode or of multi (first column `agent`).
TableSpec timeline_spec(const std::vector<std::string>& header, std::string& kind) {
  kind = !header.empty() && header[0] == "agent" ? "multi" : "replay";
  return TableSpec{kind == "multi" ? multi_timeline_columns() : replay_timeline_columns()};
}

// Reads `name` of the directory into `table` when it is there.
Status read_if_present(const std::string& dir, const char* name, const ChooseColumns& choose,
                       std::optional<Table>& table, std::vector<std::string>& paths) {
  const std::string path = (fs::path(dir) / name).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status::Ok();
  auto t = read_table(path, choose);
  if (!t.ok()) return Error{t.error()};
  table = std::move(t.value());
  paths.push_back(path);
  return Status::Ok();
}

Result<Inputs> read_inputs(const std::string& dir) {
  Inputs in;
  const auto fixed = [](std::vector<Column> columns) {
    return [columns](const std::vector<std::string>&) { return TableSpec{columns}; };
  };
  const auto summary = [&](const std::vector<std::string>& h) {
    return summary_spec(h, in.summary_kind);
  };
  const auto timeline = [&](const std::vector<std::string>& h) {
    return timeline_spec(h, in.timeline_kind);
  };
  const struct {
    const char* name;
    ChooseColumns choose;
    std::optional<Table>* table;
  } files[] = {{"summary.csv", summary, &in.summary},
               {"curves.csv", fixed(inflation_curve_columns()), &in.curves},
               {"occupancy.csv", fixed(occupancy_columns()), &in.occupancy},
               {"timeline.csv", timeline, &in.timeline},
               {"bound.csv", fixed(multi_bound_columns()), &in.bound}};
  for (const auto& f : files) {
    if (Status s = read_if_present(dir, f.name, f.choose, *f.table, in.paths); !s.ok()) {
      return s.error();
    }
  }
  return in;
}

// Sections in a fixed order, for the files present.
Status add_sections(Page& page, const HtmlReportOptions& options, Inputs& in) {
  const auto of_kind = [](const std::optional<Table>& t, const std::string& kind,
                          const char* wanted) { return kind == wanted ? &*t : nullptr; };
  const Table* curves = in.curves ? &*in.curves : nullptr;
  if (curves != nullptr || in.summary_kind == "inflation") {
    add_inflation_section(page, curves, of_kind(in.summary, in.summary_kind, "inflation"));
  }
  if (in.occupancy) add_occupancy_section(page, *in.occupancy);
  if (in.timeline_kind == "replay" || in.summary_kind == "replay") {
    add_replay_section(page, of_kind(in.timeline, in.timeline_kind, "replay"),
                       of_kind(in.summary, in.summary_kind, "replay"));
  }
  if (in.summary_kind == "multi") {
    add_multi_headline(page, &*in.summary, in.bound ? &*in.bound : nullptr);
  }
  if (in.timeline_kind == "multi" || in.summary_kind == "multi") {
    add_multi_section(page, of_kind(in.summary, in.summary_kind, "multi"),
                      of_kind(in.timeline, in.timeline_kind, "multi"));
  }
  const auto path_of = [&](const char* name) { return (fs::path(options.in_dir) / name).string(); };
  std::error_code ec;
  if (const std::string energy = path_of("energy_timeline.csv"); fs::is_regular_file(energy, ec)) {
    const std::string summary = in.summary_kind == "multi" ? path_of("summary.csv") : "";
    if (Status s = add_energy_section(page, energy, summary); !s.ok()) return s;
    in.paths.push_back(energy);
  }
  std::string record = options.record;
  if (record.empty() && fs::is_regular_file(path_of("decisions.jsonl"), ec)) {
    record = path_of("decisions.jsonl");
  }
  if (!record.empty() && options.failed > 0) {
    if (Status s = add_failed_pods_section(page, record, options.failed, options.narrator,
                                           options.narrator_info, &in.notes, options.progress);
        !s.ok()) {
      return s;
    }
  }
  if (!record.empty() && options.decisions > 0) {
    if (Status s = add_fleet_decisions_section(page, record, options.decisions, options.narrator,
                                               options.narrator_info, &in.notes, options.progress);
        !s.ok()) {
      return s;
    }
  }
  if (!record.empty() && (options.failed > 0 || options.decisions > 0)) {
    in.paths.push_back(record);
  }
  return Status::Ok();
}

}  // namespace

Result<HtmlReport> build_html_report(const HtmlReportOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(options.in_dir, ec)) {
    return Error{fmt::format("{}: not a directory", options.in_dir)};
  }
  auto inputs = read_inputs(options.in_dir);
  if (!inputs.ok()) return Error{inputs.error()};
  Page page;
  if (!options.narrator.url.empty()) {
    // Each chart with its facts gets a checked caption under the written one.
    std::vector<std::string>& notes = inputs.value().notes;
    page.narrate_caption = [&options, &notes](const nlohmann::json& facts) {
      std::string text;
      for (const nlohmann::json& s : facts["sentences"]) text += s.get<std::string>() + "\n";
      const explain::CheckedNarration told =
          explain::narrate_checked(options.narrator, options.narrator_info, facts, text);
      const std::string chart = facts.value("chart", std::string("chart"));
      for (const std::string& note : told.notes) notes.push_back(chart + ": " + note);
      return told.accepted() ? narration_html(told, options.narrator_info) : std::string();
    };
  }
  if (Status s = add_sections(page, options, inputs.value()); !s.ok()) return s.error();
  if (page.toc.empty()) {
    return Error{fmt::format(
        "{}: no greensched results found (looked for curves.csv, summary.csv, occupancy.csv, "
        "timeline.csv, decisions.jsonl)",
        options.in_dir)};
  }
  HtmlReport report;
  report.inputs = std::move(inputs.value().paths);
  report.notes = std::move(inputs.value().notes);
  report.html = render_document(page, options.title, options.in_dir, report.inputs);
  report.figures = std::move(page.figures);
  return report;
}

}  // namespace greensched::report
