#include "convert.hpp"

namespace greensched::python {

py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

py::array to_str_array(const std::vector<std::string>& values) {
  py::list items(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) items[i] = py::str(values[i]);
  py::object asarray = py::module_::import("numpy").attr("asarray");
  if (values.empty()) return asarray(items, py::arg("dtype") = "U1");
  return asarray(items, py::arg("dtype") = py::str("str"));
}

}  // namespace greensched::python
