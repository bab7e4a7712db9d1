// What a conversion produced and what it did to every input row: each table (nodes, pods,
// jobs) counts its rows as kept as read, kept with inferred values (saying what was inferred)
// or dropped (saying why), each note at "file:line". Printed as text or JSON by
// `greensched convert`; the converted CSVs are written with write_converted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::convert {

// One input file's text; `path` names it in messages.
struct SourceText {
  std::string path;
  std::string text;
};

struct RowNote {
  std::string file;
  std::size_t line = 0;
  std::string what;
  std::string where() const;  // "file:line"
};

struct TableSummary {
  std::string what;      // "nodes" or "pods"
  std::string source;    // the input file
  std::string output;    // the CSV written (set by write_converted)
  int64_t rows = 0;      // = kept + inferred + dropped + skipped
  int64_t kept = 0;      // written as read
  int64_t inferred = 0;  // written with something inferred
  int64_t dropped = 0;
  int64_t skipped = 0;  // rows that are not records by design (Slurm's job steps): no error
  std::vector<RowNote> inferences;  // one per inferred row
  std::vector<RowNote> drops;       // one per dropped row

  // Counts a written row; `inferred` says what was inferred (empty: nothing).
  void keep(std::size_t line, const std::vector<std::string>& inferred_what);
  void drop(std::size_t line, std::string reason);
  // Counts a row left out by design; `skip_reason` says what such rows are.
  void skip(std::string reason);
  std::string skip_reason;
  // Orders the notes by line.
  void sort_notes();
};

struct ConvertSummary {
  std::string source;  // "kubectl" or "sacct"
  std::vector<TableSummary> tables;
  std::vector<std::string> notes;  // what holds for every row (time origin, time zone, ...)
};

struct ConvertOutput {
  std::string nodes_csv;  // openb node list; empty when no nodes were converted
  std::string pods_csv;   // openb pod list; empty when no pods were converted
  ConvertSummary summary;
};

// Creates `dir` and writes nodes.csv and/or pods.csv into it; records the paths in the summary.
Status write_converted(ConvertOutput& output, const std::string& dir);

// The text lists at most kTextNotesPerList inferences and drops per table; the JSON all.
inline constexpr std::size_t kTextNotesPerList = 20;
std::string summary_text(const ConvertSummary& summary);
nlohmann::json summary_json(const ConvertSummary& summary);

// Line (1-based) of byte offset `offset` in `text`.
std::size_t line_of(std::string_view text, std::size_t offset);

}  // namespace greensched::convert
