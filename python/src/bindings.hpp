// The parts of the greensched._core module, each defined in its own file.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

#include "greensched/power/power_model.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::python {

namespace py = pybind11;

void bind_simulate(py::module_& m);       // simulate (inflation) and replay
void bind_multi(py::module_& m);          // multi (fleet)
void bind_readers(py::module_& m);        // a reader per input format
void bind_explain(py::module_& m);        // decision records to explanations
void bind_placement_env(py::module_& m);  // the ClusterPlacement-v0 environment's engine
void bind_fleet_env(py::module_& m);      // the FleetDispatch-v0 environment's engine

// The node and pod lists, or the built-in workload (with synthetic times for replay), as the
// command line loads them (both paths, or neither).
trace::Workload load_workload(const std::string& nodes, const std::string& pods, bool replay);
// The power model file ("" = built in), with `pue` (0 = the model's own).
power::PowerModel load_power_model(const std::string& path, double pue);

}  // namespace greensched::python
