// Conversions between the library's values and Python's for the greensched._core bindings:
// Status and Result failures become greensched.Error (message "file:line: what" as the
// library words it), and result tables become dicts of numpy arrays, one per column.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
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

// Builds a table: a dict of equal-length columns, each a numpy array.
class TableBuilder {
 public:
  void add(const char* name, const std::vector<double>& values) { t_[name] = to_array(values); }
  void add(const char* name, const std::vector<int64_t>& values) { t_[name] = to_array(values); }
  void add(const char* name, const std::vector<std::string>& values) {
    t_[name] = to_str_array(values);
  }
  void add(const char* name, py::array values) { t_[name] = std::move(values); }
  py::dict release() { return std::move(t_); }

 private:
  py::dict t_;
};

}  // namespace greensched::python
