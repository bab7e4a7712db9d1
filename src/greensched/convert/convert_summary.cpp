// Counting, printing and writing what a conversion did; see convert_summary.hpp.
#include "greensched/convert/convert_summary.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "greensched/core/text_file.hpp"

namespace greensched::convert {

std::string RowNote::where() const {
  return fmt::format("{}:{}", file, line);
}

void TableSummary::keep(std::size_t line, const std::vector<std::string>& inferred_what) {
  ++rows;
  if (inferred_what.empty()) {
    ++kept;
    return;
  }
  ++inferred;
  inferences.push_back(RowNote{source, line, fmt::format("{}", fmt::join(inferred_what, "; "))});
}

void TableSummary::drop(std::size_t line, std::string reason) {
  ++rows;
  ++dropped;
  drops.push_back(RowNote{source, line, std::move(reason)});
}

void TableSummary::skip(std::string reason) {
  ++rows;
  ++skipped;
  skip_reason = std::move(reason);
}

void TableSummary::sort_notes() {
  const auto by_line = [](const RowNote& a, const RowNote& b) { return a.line < b.line; };
  std::stable_sort(inferences.begin(), inferences.end(), by_line);
  std::stable_sort(drops.begin(), drops.end(), by_line);
}

Status write_converted(ConvertOutput& output, const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  for (TableSummary& t : output.summary.tables) {
    const std::string& text = t.what == "nodes" ? output.nodes_csv : output.pods_csv;
    if (text.empty()) continue;
    const std::string name = t.what + ".csv";
    t.output = (std::filesystem::path(dir) / name).string();
    files.emplace_back(name, text);
  }
  return write_text_files(dir, files);
}

std::string summary_text(const ConvertSummary& summary) {
  std::string out;
  for (const TableSummary& t : summary.tables) {
    out += fmt::format(
        "{} from {}: {} row(s): {} kept, {} kept with inferred values, {} dropped{}{}\n", t.what,
        t.source, t.rows, t.kept, t.inferred, t.dropped,
        t.skipped > 0 ? fmt::format(", {} skipped ({})", t.skipped, t.skip_reason) : std::string(),
        t.output.empty() ? "" : fmt::format(" -> {}", t.output));
    const auto list = [&out](const std::vector<RowNote>& notes, std::string_view label) {
      for (std::size_t i = 0; i < notes.size() && i < kTextNotesPerList; ++i) {
        out += fmt::format("  {} {}: {}\n", label, notes[i].where(), notes[i].what);
      }
      if (notes.size() > kTextNotesPerList) {
        out += fmt::format("  {} ... and {} more (--json lists them all)\n", label,
                           notes.size() - kTextNotesPerList);
      }
    };
    list(t.inferences, "inferred");
    list(t.drops, "dropped ");
  }
  for (const std::string& note : summary.notes) out += fmt::format("note: {}\n", note);
  return out;
}

nlohmann::json summary_json(const ConvertSummary& summary) {
  nlohmann::json tables = nlohmann::json::array();
  const auto notes = [](const std::vector<RowNote>& list, const char* key) {
    nlohmann::json a = nlohmann::json::array();
    for (const RowNote& n : list) a.push_back({{"at", n.where()}, {key, n.what}});
    return a;
  };
  for (const TableSummary& t : summary.tables) {
    tables.push_back({{"what", t.what},
                      {"input", t.source},
                      {"output", t.output},
                      {"rows", t.rows},
                      {"kept", t.kept},
                      {"inferred", t.inferred},
                      {"dropped", t.dropped},
                      {"skipped", t.skipped},
                      {"inferences", notes(t.inferences, "inferred")},
                      {"drops", notes(t.drops, "reason")}});
  }
  return {{"source", summary.source}, {"tables", tables}, {"notes", summary.notes}};
}

std::size_t line_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
}

}  // namespace greensched::convert
