// The report's CSV tables: the columns a section needs, read by trace::CsvReader with quoted
// fields allowed, numbers parsed as double and checked, errors as "file:line: reason".
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::report {

struct Column {
  std::string name;
  bool number = true;
  bool required = true;
  bool allow_empty = false;  // numbers: an empty cell reads as NaN (no value)
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool integer = false;
};

Column text_col(std::string name, bool required = true);
Column num_col(std::string name, bool allow_empty = false, bool required = true);
Column bounded_col(std::string name, double min, double max, bool integer);

// The requested columns of a file; an absent optional column reads as NaN or "" in each row.
struct Table {
  std::string path;
  std::vector<std::string> header;
  std::size_t rows = 0;
  std::set<std::string> present;  // requested columns found in the header
  std::map<std::string, std::vector<double>> nums;
  std::map<std::string, std::vector<std::string>> texts;
  std::vector<std::vector<std::string>> cells;  // every field as text, when asked for

  const std::vector<double>& num(const std::string& c) const { return nums.at(c); }
  const std::vector<std::string>& text(const std::string& c) const { return texts.at(c); }
  bool has(const std::string& c) const { return present.count(c) > 0; }
};

// What to read of a file, chosen from its header (the header tells the file's kind).
struct TableSpec {
  std::vector<Column> columns;
  bool keep_cells = false;  // keep every field as text (Table::cells)
};
using ChooseColumns = std::function<TableSpec(const std::vector<std::string>& header)>;

Result<Table> read_table(const std::string& path, const ChooseColumns& choose);
Result<Table> read_table(const std::string& path, const std::vector<Column>& columns);

}  // namespace greensched::report
