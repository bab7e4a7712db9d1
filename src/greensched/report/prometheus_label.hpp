// Label values in the Prometheus text exposition format (version 0.0.4), shared by the node
// agent's and the extender's /metrics.
#pragma once

#include <string>
#include <string_view>

namespace greensched::report {

// Escapes a label value: backslash, double quote and newline, as the format requires.
std::string prometheus_label(std::string_view value);

}  // namespace greensched::report
