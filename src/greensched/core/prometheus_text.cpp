#include "greensched/core/prometheus_text.hpp"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace greensched {

std::string prometheus_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string prometheus_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

void prometheus_header(std::string& out, std::string_view name, std::string_view type,
                       std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void prometheus_sample(std::string& out, std::string_view name, std::string_view labels,
                       double value) {
  if (labels.empty()) {
    fmt::format_to(std::back_inserter(out), "{} {}\n", name, prometheus_number(value));
  } else {
    fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, labels,
                   prometheus_number(value));
  }
}

}  // namespace greensched
