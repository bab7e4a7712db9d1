// The parts of the greensched._core module, each defined in its own file.
#pragma once

#include <pybind11/pybind11.h>

namespace greensched::python {

namespace py = pybind11;

void bind_simulate(py::module_& m);  // simulate (inflation) and replay
void bind_multi(py::module_& m);     // multi (fleet)
void bind_readers(py::module_& m);   // a reader per input format
void bind_explain(py::module_& m);   // decision records to explanations

}  // namespace greensched::python
