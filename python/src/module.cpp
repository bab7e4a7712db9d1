// greensched._core: the Python extension module. The public API is the pure-Python package
// around it (python/greensched); this module holds the entry points into the library.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "greensched/learn/register.hpp"
#include "greensched/policy/registry.hpp"
#include "python_policy.hpp"

namespace py = pybind11;
using namespace greensched::python;

PYBIND11_MODULE(_core, m) {
  m.doc() = "greensched's C++ core (use the greensched package)";
  py::register_exception<BindingError>(m, "Error", PyExc_Exception);
  // fgd-online and learned=MODEL.json, as the command line registers them.
  check(greensched::learn::register_learn_policies());

  m.def("register_policy", &register_python_policy, py::arg("name"), py::arg("fn"),
        py::arg("normalize") = "none");
  m.def("policy_catalog", [] {
    py::list out;
    for (const auto& p : greensched::policy::policy_catalog()) {
      out.append(py::make_tuple(std::string(p.name), std::string(p.summary)));
    }
    for (const auto& [name, summary] : greensched::policy::registered_policy_factories()) {
      out.append(py::make_tuple(name, summary));
    }
    return out;
  });
  bind_simulate(m);
  bind_multi(m);
  bind_readers(m);
  bind_explain(m);
  bind_placement_env(m);
  bind_fleet_env(m);
}
