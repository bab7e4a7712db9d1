// The explain API: a decision record (a dict, as simulate(record=True) and read_records give
// them, or one JSON line) to the plain-English explanation or the facts behind it, by the same
// templates as `greensched explain`.
#include <string>

#include <fmt/format.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "greensched/explain/explanation.hpp"

namespace greensched::python {
namespace {

nlohmann::json to_record(const py::object& record) {
  std::string line;
  if (py::isinstance<py::str>(record)) {
    line = record.cast<std::string>();
  } else {
    line = py::module_::import("json").attr("dumps")(record).cast<std::string>();
  }
  return unwrap(explain::parse_decision_record(line, "record"));
}

}  // namespace

void bind_explain(py::module_& m) {
  m.def(
      "explain_text",
      [](const py::object& record) { return explain::explain_text(to_record(record)); },
      py::arg("record"));
  m.def(
      "explain_facts",
      [](const py::object& record) { return to_python(explain::explain_facts(to_record(record))); },
      py::arg("record"));
  m.def(
      "is_failed_placement",
      [](const py::object& record) { return explain::is_failed_placement(to_record(record)); },
      py::arg("record"));
}

}  // namespace greensched::python
