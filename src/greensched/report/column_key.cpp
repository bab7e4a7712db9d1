// The key under a terminal table (column_key.hpp).
#include "greensched/report/column_key.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace greensched::report {

std::string column_key(std::string_view file, std::span<const ColumnKey> columns) {
  std::size_t header_width = 0;
  std::size_t csv_width = 0;
  for (const ColumnKey& c : columns) {
    header_width = std::max(header_width, c.header.size());
    csv_width = std::max(csv_width, c.csv.size());
  }
  std::string out = fmt::format("columns ({} column; -: derived, not in {}):\n", file, file);
  for (const ColumnKey& c : columns) {
    out +=
        fmt::format("  {:<{}}  {:<{}}  {}\n", c.header, header_width, c.csv, csv_width, c.meaning);
  }
  return out;
}

}  // namespace greensched::report
