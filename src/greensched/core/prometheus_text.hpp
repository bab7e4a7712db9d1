// Writing the Prometheus text exposition format (version 0.0.4), shared by the node agent's and
// the extender's /metrics.
#pragma once

#include <string>
#include <string_view>

namespace greensched {

// Escapes a label value: backslash, double quote and newline, as the format requires.
std::string prometheus_label(std::string_view value);

// A sample value: "NaN", "+Inf", "-Inf", or the shortest decimal that reads back exactly.
std::string prometheus_number(double value);

// Appends the "# HELP" and "# TYPE" lines of a metric family.
void prometheus_header(std::string& out, std::string_view name, std::string_view type,
                       std::string_view help);

// Appends one sample line: `name value`, or `name{labels} value` when `labels` is not empty
// (`labels` is already formatted, with escaped values).
void prometheus_sample(std::string& out, std::string_view name, std::string_view labels,
                       double value);

}  // namespace greensched
