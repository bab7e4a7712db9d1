// The report's section on site energy (greensched multi with site energy controllers), from
// energy_timeline.csv and summary.csv: per site the energy sources over time stacked (on-site
// solar and wind, battery discharge, grid import), the battery's state of charge per site, and
// cost and carbon per agent and controller.
#pragma once

#include <string>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/report/svg_chart.hpp"

namespace greensched::report {

struct EnergyFigure {
  std::string id;
  std::string svg;
  std::string caption_html;
};

// Errors are "path:line: reason". `summary_path` may be empty (then no cost and carbon bars).
Result<std::vector<EnergyFigure>> energy_figures(const std::string& timeline_path,
                                                 const std::string& summary_path,
                                                 svg::ColorMap& colors);

}  // namespace greensched::report
