// Writers for the site energy controllers of multi-cluster runs: energy_timeline.csv (per
// agent, controller, site and UTC hour: demand, on-site sources, battery, grid and prices)
// and a readable table of cost, carbon and on-site use per agent and controller.
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "greensched/multi/fleet.hpp"
#include "greensched/multi/fleet_sim.hpp"

namespace greensched::report {

void write_energy_timeline_csv(std::ostream& out, const multi::Fleet& fleet,
                               std::span<const multi::MultiResult> results);
std::string energy_summary_table(std::span<const multi::MultiResult> results);

}  // namespace greensched::report
