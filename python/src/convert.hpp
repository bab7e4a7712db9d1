// Conversions between the library's values and Python's for the greensched._core bindings:
// Status and Result failures become greensched.Error (message "file:line: what" as the
// library words it), and result tables become dicts of numpy arrays, one per column.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::python {

namespace py = pybind11;

// Thrown by the bindings and translated to greensched.Error.
class BindingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check(const Status& s) {
  if (!s.ok()) throw BindingError(s.message());
}

template <typename T>
T unwrap(Result<T> r) {
  if (!r.ok()) throw BindingError(r.error());
  return std::move(r.value());
}

// A numpy array copied from `values`.
template <typename T>
py::array_t<T> to_array(const std::vector<T>& values) {
  py::array_t<T> a(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), a.mutable_data());
  return a;
}

// nlohmann::json to Python, through the json module (exact for every JSON value).
py::object to_python(const nlohmann::json& j);

// A numpy array of str from `values`.
py::array to_str_array(const std::vector<std::string>& values);

// The numpy column type of a value: int64 for integers and bools, float64 for floating point,
// str for anything else (std::string, std::string_view, const char*).
template <typename V>
using ColumnType =
    std::conditional_t<std::is_floating_point_v<V>, double,
                       std::conditional_t<std::is_integral_v<V>, int64_t, std::string>>;

// Builds a table: a dict of equal-length columns, each a numpy array, in the order added.
class TableBuilder {
 public:
  template <typename T>
  requires std::is_arithmetic_v<T>
  void add(const char* name, const std::vector<T>& values) { t_[name] = to_array(values); }
  void add(const char* name, const std::vector<std::string>& values) {
    t_[name] = to_str_array(values);
  }
  void add(const char* name, py::array values) { t_[name] = std::move(values); }
  // The column `get(row)` of each of `rows` (`get` a callable or a member pointer), as T, by
  // default the ColumnType of its value.
  template <typename T = void, typename Rows, typename Get>
  void add(const char* name, const Rows& rows, Get get) {
    using Value = std::remove_cvref_t<std::invoke_result_t<Get&, decltype(*std::begin(rows))>>;
    using Column = std::conditional_t<std::is_void_v<T>, ColumnType<Value>, T>;
    std::vector<Column> values;
    values.reserve(std::size(rows));
    for (const auto& row : rows) values.push_back(static_cast<Column>(std::invoke(get, row)));
    add(name, values);
  }
  py::dict release() { return std::move(t_); }

 private:
  py::dict t_;
};

// A row of a table of the items a parent holds (a run's timeline points): the item and its
// parent.
template <typename Parent, typename Item>
struct Nested {
  const Parent& parent;
  const Item& item;
};

// The parent of a row that has one (a Nested row), else the row itself: the run of a row of
// any of a run's tables.
template <typename Row>
const auto& parent_or_self(const Row& row) {
  if constexpr (requires { row.parent; }) {
    return row.parent;
  } else {
    return row;
  }
}

// One row per item of each parent, in order: `items` (a member pointer, or a callable that
// returns a reference) gives a parent's items.
template <typename Parent, typename Items>
auto nested_rows(const std::vector<Parent>& parents, Items items) {
  using List = std::invoke_result_t<Items&, const Parent&>;
  static_assert(std::is_lvalue_reference_v<List>, "the rows refer to the parents' items");
  using Item = std::remove_cvref_t<decltype(*std::begin(std::declval<List>()))>;
  std::vector<Nested<Parent, Item>> rows;
  for (const Parent& parent : parents) {
    for (const Item& item : std::invoke(items, parent)) rows.push_back({parent, item});
  }
  return rows;
}

}  // namespace greensched::python
