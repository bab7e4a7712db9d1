// Minimal CSV reading for the trace formats we support: comma-separated, no quoting, a header
// line naming the columns. Keeps line numbers so that every error can say file:line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/core/text_file.hpp"

namespace greensched::trace {

// The readers here load files through core's read_file; callers may name it trace::read_file.
using greensched::read_file;

class CsvReader {
 public:
  // `source` names the input in error messages (usually the path).
  CsvReader(std::string_view text, std::string source);

  // Reads the header line. Fails on an empty input.
  Status read_header();
  // Index of a column in the header, or nullopt.
  std::optional<std::size_t> column(std::string_view name) const;
  const std::vector<std::string>& header() const { return header_; }

  // Advances to the next non-empty line; false at the end. Fields are views into the text.
  bool next();
  const std::vector<std::string_view>& fields() const { return fields_; }
  std::size_t line_number() const { return line_; }

  // "source:line: message"
  Error error(std::string_view message) const;
  const std::string& source() const { return source_; }

 private:
  bool next_line(std::string_view& line);

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;
};

// Strict integer parse of the whole field (no spaces, no fraction).
std::optional<int64_t> parse_int(std::string_view field);

}  // namespace greensched::trace
