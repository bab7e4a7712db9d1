// Horizontal bar charts: one labelled bar per entry, the value written at its end.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "greensched/report/svg_chart.hpp"
#include "greensched/report/svg_draw.hpp"

namespace greensched::report::svg {

std::string render_bar_chart(const BarChart& chart) {
  double label_w = 0;
  double value_w = 0;
  double vmax = 0;
  double vmin = 0;
  for (const Bar& b : chart.bars) {
    label_w = std::max(label_w, text_width(b.label, kTextPx));
    value_w = std::max(value_w, text_width(format_number(b.value, chart.decimals), 11));
    if (std::isfinite(b.value)) vmax = std::max(vmax, b.value), vmin = std::min(vmin, b.value);
  }
  const Ticks t = nice_ticks(vmin, vmax > vmin ? vmax : vmin + 1, 4, true);
  const double width = chart.width;
  const double ml = 12 + label_w + 10;
  const double mr = 14 + value_w;
  const double top = 40;
  const double bar_h = 20;
  const double gap = 8;
  const double bottom = top + static_cast<double>(chart.bars.size()) * (bar_h + gap) + 4;
  const double height = bottom + 46;
  const Scale sx{t.lo, t.hi, ml, width - mr};

  std::string out;
  out += svg_open(chart.id, "chart-svg", width, height, chart.title);
  out += title_text("12", chart.title);
  out += "<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">";
  for (double v : t.values) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", coord(sx(v)),
                       coord(top - 4), coord(bottom));
  }
  out += "</g><g class=\"ticks\" fill=\"#444\" font-size=\"11\">";
  for (double v : t.values) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", coord(sx(v)),
                       coord(bottom + 16), format_number(v, t.decimals));
  }
  out += "</g><g class=\"bars\">";
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double y = top + static_cast<double>(i) * (bar_h + gap);
    const double v = std::isfinite(b.value) ? b.value : 0;
    const double x0 = sx(std::min(0.0, v));
    const double x1 = sx(std::max(0.0, v));
    out += fmt::format(
        "<g><title>{0}: {1}</title><text x=\"{2}\" y=\"{3}\" dy=\"0.35em\" text-anchor=\"end\" "
        "fill=\"#222\">{0}</text><rect x=\"{4}\" y=\"{5}\" width=\"{6}\" height=\"{7}\" "
        "fill=\"{8}\"/><text x=\"{9}\" y=\"{3}\" dy=\"0.35em\" fill=\"#222\" "
        "font-size=\"11\">{1}</text></g>",
        escape(b.label), format_number(b.value, chart.decimals), coord(ml - 8),
        coord(y + bar_h / 2), coord(x0), coord(y), coord(std::max(x1 - x0, 0.5)), coord(bar_h),
        escape(b.color), coord(x1 + 5));
  }
  out += "</g>";
  out += fmt::format(
      "<g class=\"axes\" stroke=\"#333\" stroke-width=\"1\"><line x1=\"{0}\" y1=\"{1}\" "
      "x2=\"{0}\" y2=\"{2}\"/><line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/></g>",
      coord(sx(0)), coord(top - 4), coord(bottom), coord(width - mr));
  out += fmt::format(
      "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
      coord((ml + width - mr) / 2), coord(bottom + 36), escape(chart.value_label));
  out += "</svg>";
  return out;
}

}  // namespace greensched::report::svg
