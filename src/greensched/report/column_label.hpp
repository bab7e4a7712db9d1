// Human names with units for the columns of the summary.csv files that simulate, simulate
// --mode replay and multi write, for table headers: "grid_import_kwh" reads "Grid import
// (kWh)". A column it does not know keeps its own name.
#pragma once

#include <string>

namespace greensched::report {

std::string column_label(const std::string& column);

}  // namespace greensched::report
