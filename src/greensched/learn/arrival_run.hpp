// Runs for learning and evaluation: the plain inflation protocol with a policy made by the
// caller (e.g. a model being trained), arrival sequences of other protocols through
// sim::run_arrivals, and a parallel loop over runs.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "greensched/core/rng.hpp"
#include "greensched/core/status.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/sim/simulator.hpp"

namespace greensched::learn {

using sim::PolicyMaker;
using sim::run_arrivals;

// A run of the plain inflation protocol through run_arrivals.
Result<sim::RunResult> run_inflation_with(const sim::Scenario& scenario, const sim::RunSpec& spec,
                                          const PolicyMaker& make = {});

// Runs fn(i) for i in [0, count) on `jobs` threads (0: all cores); the first error stops the
// rest and is returned. Callers store results by index, so the order never depends on jobs.
Status parallel_for(std::size_t count, int jobs, const std::function<Status(std::size_t)>& fn);

}  // namespace greensched::learn
