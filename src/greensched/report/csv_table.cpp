#include "greensched/report/csv_table.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "greensched/core/text_file.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A requested column found in the header, with where its values go.
struct Bound {
  const Column* column;
  std::size_t index;
  std::vector<double>* nums;
  std::vector<std::string>* texts;
};

Result<std::vector<Bound>> bind_columns(const trace::CsvReader& reader,
                                        const std::vector<Column>& columns, Table& t) {
  std::vector<Bound> bound;
  for (const Column& c : columns) {
    const auto index = reader.column(c.name);
    if (!index) {
      if (c.required) return reader.error(fmt::format("missing column '{}'", c.name));
      continue;
    }
    t.present.insert(c.name);
    if (c.number) {
      bound.push_back(Bound{&c, *index, &t.nums[c.name], nullptr});
    } else {
      bound.push_back(Bound{&c, *index, nullptr, &t.texts[c.name]});
    }
  }
  return bound;
}

// One number cell: empty (NaN where allowed), a finite number within the column's bounds.
Result<double> parse_cell(const trace::CsvReader& reader, const Column& c, std::string_view field) {
  if (field.empty()) {
    if (!c.allow_empty) return reader.error(fmt::format("column '{}': empty value", c.name));
    return kNaN;
  }
  double value = 0;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return reader.error(fmt::format("column '{}': '{}' is not a number", c.name, field));
  }
  if (value < c.min || value > c.max) {
    return reader.error(
        fmt::format("column '{}': {} is outside {}..{}", c.name, field, c.min, c.max));
  }
  if (c.integer && value != std::floor(value)) {
    return reader.error(fmt::format("column '{}': {} is not a whole number", c.name, field));
  }
  return value;
}

Status read_row(const trace::CsvReader& reader, const std::vector<Bound>& bound,
                std::size_t columns) {
  if (Status s = reader.row_status(); !s.ok()) return s;
  const auto& fields = reader.fields();
  if (fields.size() != columns) {
    return reader.error(
        fmt::format("{} fields, but the header has {} columns", fields.size(), columns));
  }
  for (const Bound& b : bound) {
    const std::string_view field = fields[b.index];
    if (!b.column->number) {
      b.texts->emplace_back(field);
      continue;
    }
    auto value = parse_cell(reader, *b.column, field);
    if (!value.ok()) return value.status();
    b.nums->push_back(value.value());
  }
  return Status::Ok();
}

}  // namespace

Column text_col(std::string name, bool required) {
  Column c;
  c.name = std::move(name);
  c.number = false;
  c.required = required;
  return c;
}

Column num_col(std::string name, bool allow_empty, bool required) {
  Column c;
  c.name = std::move(name);
  c.allow_empty = allow_empty;
  c.required = required;
  return c;
}

Column bounded_col(std::string name, double min, double max, bool integer) {
  Column c;
  c.name = std::move(name);
  c.min = min;
  c.max = max;
  c.integer = integer;
  return c;
}

Result<Table> read_table(const std::string& path, const ChooseColumns& choose) {
  auto content = read_file(path);
  if (!content.ok()) return Error{content.error()};
  trace::CsvReader reader(content.value(), path);
  reader.allow_quotes();
  if (Status s = reader.read_header(); !s.ok()) return Error{s.message()};
  Table t;
  t.path = path;
  t.header = reader.header();
  const TableSpec spec = choose(t.header);
  auto bound = bind_columns(reader, spec.columns, t);
  if (!bound.ok()) return Error{bound.error()};
  while (reader.next()) {
    if (Status s = read_row(reader, bound.value(), t.header.size()); !s.ok()) return s.error();
    if (spec.keep_cells) {
      t.cells.emplace_back(reader.fields().begin(), reader.fields().end());
    }
    ++t.rows;
  }
  for (const Column& c : spec.columns) {
    if (t.has(c.name)) continue;
    if (c.number) {
      t.nums[c.name].assign(t.rows, kNaN);
    } else {
      t.texts[c.name].assign(t.rows, std::string());
    }
  }
  return t;
}

Result<Table> read_table(const std::string& path, const std::vector<Column>& columns) {
  return read_table(path, [&](const std::vector<std::string>&) { return TableSpec{columns}; });
}

}  // namespace greensched::report
