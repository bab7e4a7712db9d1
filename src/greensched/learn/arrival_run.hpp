// One simulation run over a given arrival sequence, with the event loop and metrics of
// sim::run_inflation (same generator order: the caller's generator has drawn the arrivals,
// the tie order is drawn next, then the policy's own draws). Given the inflation sequence it
// reproduces run_inflation's curve exactly; given a drift sequence it runs the drift protocol.
// Policies come from the registry by spec, or from the caller (e.g. a model being trained).
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

using PolicyMaker =
    std::function<Result<std::unique_ptr<policy::Policy>>(const policy::PolicyContext& context)>;

// Runs `arrivals` (indices into the scenario's pods). The curve has bins up to spec.tune x 100
// (or further if arrivals go beyond). Without `make`, spec.policy is made by the registry.
Result<sim::RunResult> run_arrivals(const sim::Scenario& scenario, const sim::RunSpec& spec,
                                    std::span<const uint32_t> arrivals, Rng& rng,
                                    const PolicyMaker& make = {});

// A run of the plain inflation protocol through run_arrivals.
Result<sim::RunResult> run_inflation_with(const sim::Scenario& scenario, const sim::RunSpec& spec,
                                          const PolicyMaker& make = {});

// Runs fn(i) for i in [0, count) on `jobs` threads (0: all cores); the first error stops the
// rest and is returned. Callers store results by index, so the order never depends on jobs.
Status parallel_for(std::size_t count, int jobs, const std::function<Status(std::size_t)>& fn);

}  // namespace greensched::learn
