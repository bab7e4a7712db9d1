// Writers for multi-cluster runs: summary.csv (one row per agent), timeline.csv (per site and
// fleet over time, per agent), decisions.csv (where and when each job went, and why), and a
// readable table comparing the agents against the first one.
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "greensched/multi/fleet.hpp"
#include "greensched/multi/fleet_sim.hpp"

namespace greensched::report {

void write_multi_summary_csv(std::ostream& out, std::span<const multi::MultiResult> results);
void write_multi_timeline_csv(std::ostream& out, const multi::Fleet& fleet,
                              std::span<const multi::MultiResult> results);
void write_decisions_csv(std::ostream& out, const multi::Fleet& fleet,
                         std::span<const multi::MultiResult> results);
std::string multi_summary_table(std::span<const multi::MultiResult> results);

// A CSV field, quoted when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

}  // namespace greensched::report
