#include "greensched/trace/csv.hpp"

#include <charconv>

#include <fmt/format.h>

namespace greensched::trace {

CsvReader::CsvReader(std::string_view text, std::string source)
    : text_(text), source_(std::move(source)) {}

bool CsvReader::next_line(std::string_view& line) {
  while (pos_ < text_.size()) {
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
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

Status CsvReader::read_header() {
  std::string_view line;
  if (!next_line(line)) return Error{fmt::format("{}: empty file (no header line)", source_)};
  if (line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
  split(line, fields_);
  header_.assign(fields_.begin(), fields_.end());
  return Status::Ok();
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
  split(line, fields_);
  return true;
}

Error CsvReader::error(std::string_view message) const {
  return Error{fmt::format("{}:{}: {}", source_, line_, message)};
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
