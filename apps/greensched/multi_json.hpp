// The multi command's --json summary: one object per run, in the runs' order, with the site
// energy controllers' rows where the energy table would be shown.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/multi/fleet_sim.hpp"

namespace greensched::app {

nlohmann::json multi_results_json(const std::vector<multi::MultiResult>& results, bool show_energy);

}  // namespace greensched::app
