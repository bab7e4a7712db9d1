// Cooling overhead as a PUE (facility power / IT power) from outdoor air. A simple, bounded
// model: below a free-cooling threshold (outside air or economiser does the work) the PUE is
// the base; above it each degree adds a fixed amount as chillers take over; air more humid
// than a threshold adds a penalty per % RH (economiser hours lost, dehumidification). The
// threshold default 18 C is the lower end of the ASHRAE TC 9.9 recommended inlet range.
// Missing (non-finite) weather falls back to a fixed PUE; slopes of 0 give a fixed PUE.
#pragma once

#include "greensched/core/status.hpp"

namespace greensched::energy {

struct CoolingModel {
  double base_pue = 1.1;
  double free_cooling_below_c = 18;
  double pue_per_c = 0.015;  // above the threshold
  double humid_above_pct = 60;
  double pue_per_humidity_pct = 0.002;  // above humid_above_pct
  double min_pue = 1.05;
  double max_pue = 1.8;
  double fallback_pue = 1.4;  // when temperature or humidity is missing
};

// ok, or what is wrong: needs 1 <= min_pue <= base_pue <= max_pue, slopes >= 0,
// fallback within [min_pue, max_pue].
Status validate(const CoolingModel& model);

// PUE at an outdoor temperature (C) and relative humidity (%), within [min_pue, max_pue].
double pue(const CoolingModel& model, double temperature_c, double relative_humidity_pct);

}  // namespace greensched::energy
