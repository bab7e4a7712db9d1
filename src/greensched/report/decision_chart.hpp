// The chart of one decision record (sim/decision_record.hpp, multi's dispatch records), as a
// standalone SVG: what `explain --chart` writes and what the report shows beside a failed
// pod's explanation.
//   placed pod:  the chosen node's GPUs before and after the placement (per GPU: used before,
//                this pod's share, free after) and the recorded candidates' scores, the chosen
//                node and the runner-up marked;
//   failed pod:  how many nodes of each GPU type refused it, for each reason (by reason alone
//                when the record lacks reason_counts_by_type);
//   dispatch:    each site's forecast carbon intensity over the job's window, a line per site,
//                the chosen start marked, and where the record has them the true intensity
//                (dashed) and the actual start; without a forecast, the expected carbon of
//                each alternative (else its forecast intensity, else each site's intensity
//                at submission) as bars.
// The same record always gives the same bytes; every label is escaped. A record without what a
// chart needs gets a chart of what it has, or none (an empty string): never an exception.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace greensched::report {

// The SVG of the record's chart; empty when the record holds nothing to draw.
std::string decision_chart_svg(const nlohmann::json& record);

// Why decision_chart_svg(record) is empty, e.g. "a failed pod's record without
// reason_counts_by_type or reason_counts"; empty when there is a chart.
std::string decision_chart_missing(const nlohmann::json& record);

}  // namespace greensched::report
