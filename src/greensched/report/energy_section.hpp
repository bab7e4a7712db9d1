// The report's section on site energy (greensched multi with site energy controllers), from
// energy_timeline.csv and summary.csv: per site with solar, wind or a battery the energy sources
// over time stacked (on-site solar and wind, battery discharge, grid import), the state of
// charge of the sites with a battery, and cost (where there are prices) and carbon per agent
// and controller. What is left out is said in a note, never drawn empty.
#pragma once

#include <string>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/report/svg_chart.hpp"

namespace greensched::report {

struct EnergyFigure {
  std::string id;
  std::string svg;           // "": a note, the caption alone (what is not charted, and why)
  std::string caption_html;  // for a note: plain text
};

// Errors are "path:line: reason". `summary_path` may be empty (then no cost and carbon bars).
Result<std::vector<EnergyFigure>> energy_figures(const std::string& timeline_path,
                                                 const std::string& summary_path,
                                                 svg::ColorMap& colors);

}  // namespace greensched::report
