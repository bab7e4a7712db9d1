// Policies written in Python. A Python callable registered under a name becomes a policy of
// the registry (policy/registry.hpp), usable wherever a policy spec is: alone, in a mix, in
// simulate, replay and multi. It is called once per pod with numpy arrays of the feasible
// nodes' features and returns their scores; filtering, normalisation (none, or min-max when
// registered so) and tie-breaking stay the scheduler's, as for built-in policies.
//
// The library runs with the GIL released; a Python policy takes it for each call. An exception
// raised by the callable is kept and the run goes on without calling Python again (scores 0);
// the binding that started the run raises it when the run returns (rethrow_policy_error).
#pragma once

#include <string>

#include <pybind11/pybind11.h>

namespace greensched::python {

namespace py = pybind11;

// Registers `fn` as policy `name` (replacing an earlier one of that name). `normalize`:
// "none" keeps the returned scores, "min-max" maps them to 0..100 as BestFit does.
void register_python_policy(const std::string& name, py::object fn, const std::string& normalize);

// Whether `spec` (a policy or mix) names a policy registered from Python.
bool uses_python_policy(const std::string& spec);

// Clears the kept error before a run.
void clear_policy_error();
// Raises (with the GIL held) the error a Python policy raised during the last run, if any.
void rethrow_policy_error();

}  // namespace greensched::python
