// The key printed under every table on the terminal: each column's header, the column of the
// CSV file the command writes that holds it ("-" where the table derives it, saying from
// what), and what it means. One line a column, three fields two spaces apart, so that a
// reader, and tests/table_columns_test.py, can match a table to its CSV and docs/FORMATS.md.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace greensched::report {

struct ColumnKey {
  std::string_view header;   // as the table prints it
  std::string_view csv;      // the CSV column, or "-"
  std::string_view meaning;  // units, and how the table shows it where the CSV differs
};

// "columns (FILE; -: derived):" and a line per column.
std::string column_key(std::string_view file, std::span<const ColumnKey> columns);

}  // namespace greensched::report
