// The multi command's --json summary: one object per run, in the runs' order, with the site
// energy controllers' rows where the energy table would be shown and, with --bound, the bound
// of its load and slack and the share of its saving the run reaches.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/multi/fleet_bound.hpp"
#include "greensched/multi/fleet_sim.hpp"

namespace greensched::app {

// Every row carries `seed`, the seed its runs used.
nlohmann::json multi_results_json(const std::vector<multi::MultiResult>& results, bool show_energy,
                                  std::span<const multi::FleetBoundResult> bounds, uint64_t seed);

}  // namespace greensched::app
