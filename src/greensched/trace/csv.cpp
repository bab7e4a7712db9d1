#include "greensched/trace/csv.hpp"

#include <charconv>

#include <fmt/format.h>

namespace greensched::trace {

CsvReader::CsvReader(std::string_view text, std::string source)
    : text_(text), source_(std::move(source)) {}

// The next line, empty or not, without its line break.
bool CsvReader::raw_line(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  std::size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  line = text_.substr(pos_, end - pos_);
  pos_ = end + 1;
  ++line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

bool CsvReader::next_line(std::string_view& line) {
  extra_lines_ = 0;
  while (raw_line(line)) {
    if (!line.empty()) return true;
  }
  return false;
}

static void split(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

void CsvReader::split_record(std::string_view line) {
  row_error_ = {};
  if (quotes_ && line.find('"') != std::string_view::npos) {
    split_quoted(line);
  } else {
    split(line, fields_);
  }
}

// A quote opens a quoted field only at the start of a field; inside one, "" is a quote and a
// line break continues the field on the next line.
void CsvReader::split_quoted(std::string_view line) {
  quoted_.clear();
  std::vector<std::size_t> ends;  // where each field ends in quoted_
  bool in_quotes = false;
  bool field_start = true;
  bool closed = false;  // the field's closing quote was seen
  for (std::size_t i = 0;; ++i) {
    if (i == line.size()) {
      if (!in_quotes) break;
      if (!raw_line(line)) {
        row_error_ = "a quoted field is not closed";
        break;
      }
      ++extra_lines_;
      quoted_ += '\n';
      i = static_cast<std::size_t>(-1);
      continue;
    }
    const char c = line[i];
    if (in_quotes) {
      if (c != '"') {
        quoted_ += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        quoted_ += '"';
        ++i;
      } else {
        in_quotes = false;
        closed = true;
      }
    } else if (c == ',') {
      ends.push_back(quoted_.size());
      field_start = true;
      closed = false;
    } else if (c == '"' && field_start) {
      in_quotes = true;
      field_start = false;
    } else {
      if (closed && row_error_.empty()) row_error_ = "text after a closing quote";
      quoted_ += c;
      field_start = false;
    }
  }
  ends.push_back(quoted_.size());
  fields_.clear();
  std::size_t begin = 0;
  for (std::size_t end : ends) {
    fields_.push_back(std::string_view(quoted_).substr(begin, end - begin));
    begin = end;
  }
}

Status CsvReader::read_header() {
  std::string_view line;
  if (!next_line(line)) return Error{fmt::format("{}: empty file (no header line)", source_)};
  if (line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
  split_record(line);
  header_.assign(fields_.begin(), fields_.end());
  return row_status();
}

std::optional<std::size_t> CsvReader::column(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

bool CsvReader::next() {
  std::string_view line;
  if (!next_line(line)) return false;
  split_record(line);
  return true;
}

Status CsvReader::row_status() const {
  if (row_error_.empty()) return Status::Ok();
  return error(row_error_);
}

Error CsvReader::error(std::string_view message) const {
  return Error{fmt::format("{}:{}: {}", source_, line_number(), message)};
}

std::optional<int64_t> parse_int(std::string_view field) {
  int64_t value = 0;
  const char* first = field.data();
  const char* last = field.data() + field.size();
  if (field.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return value;
}

}  // namespace greensched::trace
