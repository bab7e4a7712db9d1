// Minimal CSV reading for the trace formats we support: comma-separated, a header line naming
// the columns; quoted fields only where a reader allows them. Keeps line numbers so that every
// error can say file:line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::trace {

class CsvReader {
 public:
  // `source` names the input in error messages (usually the path).
  CsvReader(std::string_view text, std::string source);

  // Quoted fields as RFC 4180 writes them: "a, b", "say ""hi""", a line break inside the
  // quotes. Off by default, where a quote is an ordinary character. Call before read_header.
  void allow_quotes() { quotes_ = true; }

  // Reads the header line. Fails on an empty input.
  Status read_header();
  // Index of a column in the header, or nullopt.
  std::optional<std::size_t> column(std::string_view name) const;
  const std::vector<std::string>& header() const { return header_; }

  // Advances to the next non-empty line (record); false at the end. Fields are views into the
  // text, or into the reader for a quoted field, valid until the next call.
  bool next();
  const std::vector<std::string_view>& fields() const { return fields_; }
  // The line the current record starts on.
  std::size_t line_number() const { return line_ - extra_lines_; }
  // The current record's quoting error ("source:line: reason"), if any.
  Status row_status() const;

  // "source:line: message"
  Error error(std::string_view message) const;
  const std::string& source() const { return source_; }

 private:
  bool raw_line(std::string_view& line);
  bool next_line(std::string_view& line);
  void split_record(std::string_view line);
  void split_quoted(std::string_view line);

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
  std::size_t extra_lines_ = 0;  // lines a quoted record ran on past its first
  bool quotes_ = false;
  std::string quoted_;          // the fields of a record with quotes, unquoted, back to back
  std::string_view row_error_;  // empty: the record is well formed
  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;
};

// Strict integer parse of the whole field (no spaces, no fraction).
std::optional<int64_t> parse_int(std::string_view field);

}  // namespace greensched::trace
