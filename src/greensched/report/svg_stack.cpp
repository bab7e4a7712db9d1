// Several charts in one standalone SVG, one under the other: what an image file of a decision
// (report/decision_chart) holds. Each chart keeps its own <svg> (nested ones position their
// content), moved down by the heights of those above it.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "greensched/report/svg_chart.hpp"
#include "greensched/report/svg_draw.hpp"

namespace greensched::report::svg {
namespace {

// The value of attribute `name` in the opening tag of `chart` (0 when absent): the width and
// height svg_open wrote.
double opening_attribute(const std::string& chart, std::string_view name) {
  const std::size_t end = chart.find('>');
  const std::string key = fmt::format(" {}=\"", name);
  const std::size_t at = chart.find(key);
  if (at == std::string::npos || at > end) return 0;
  return std::strtod(chart.c_str() + at + key.size(), nullptr);
}

}  // namespace

std::string stack_charts(std::string_view id, std::string_view title,
                         const std::vector<std::string>& charts) {
  double width = 0;
  double height = 0;
  std::string body;
  for (const std::string& chart : charts) {
    body += fmt::format("<g transform=\"translate(0 {})\">{}</g>", coord(height), chart);
    width = std::max(width, opening_attribute(chart, "width"));
    height += opening_attribute(chart, "height");
  }
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{0}\" class=\"chart-stack\" width=\"{1}\" "
      "height=\"{2}\" viewBox=\"0 0 {1} {2}\" role=\"img\" aria-labelledby=\"{0}-title\">"
      "<title id=\"{0}-title\">{3}</title><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>",
      escape(id), coord(std::max(width, 1.0)), coord(std::max(height, 1.0)), escape(title));
  out += body;
  out += "</svg>\n";
  return out;
}

}  // namespace greensched::report::svg
