// Horizontal stacked bar charts: one labelled row per entry, its segments side by side with a
// legend of the segments above, each segment's value inside it where it fits.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "greensched/report/svg_chart.hpp"
#include "greensched/report/svg_draw.hpp"

namespace greensched::report::svg {
namespace {

double segment_value(const StackedRow& row, std::size_t i) {
  if (i >= row.values.size() || !std::isfinite(row.values[i])) return 0;
  return std::max(0.0, row.values[i]);
}

// Dark text on light fills ("#rrggbb" with a high luminance), white text on the others.
const char* text_color_on(const std::string& fill) {
  if (fill.size() != 7 || fill[0] != '#') return "#fff";
  const long rgb = std::strtol(fill.c_str() + 1, nullptr, 16);
  const double luminance =
      (0.299 * static_cast<double>((rgb >> 16) & 0xFF) +
       0.587 * static_cast<double>((rgb >> 8) & 0xFF) + 0.114 * static_cast<double>(rgb & 0xFF)) /
      255.0;
  return luminance > 0.6 ? "#222" : "#fff";
}

// The segments' legend in rows from (x0, y0) within `width`; returns the svg and the y below it.
std::pair<std::string, double> segment_legend(const std::vector<Segment>& segments, double x0,
                                              double y0, double width) {
  std::string out;
  double x = x0;
  double y = y0;
  for (const Segment& s : segments) {
    const double w = 14 + 5 + text_width(s.label, kTextPx) + 16;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += kLegendRowPx;
    }
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\" stroke=\"#999\" "
        "stroke-width=\"0.6\"/><text x=\"{}\" y=\"{}\" dy=\"0.35em\">{}</text>",
        coord(x), coord(y - 5), escape(s.color), coord(x + 19), coord(y), escape(s.label));
    x += w;
  }
  return {out, segments.empty() ? y0 : y + kLegendRowPx};
}

}  // namespace

std::string render_stacked_bar_chart(const StackedBarChart& chart) {
  double label_w = 0;
  double total_w = 0;
  double max_total = 0;
  for (const StackedRow& row : chart.rows) {
    label_w = std::max(label_w, text_width(row.label, kTextPx));
    double total = 0;
    for (std::size_t i = 0; i < chart.segments.size(); ++i) total += segment_value(row, i);
    max_total = std::max(max_total, total);
    if (chart.show_total) {
      total_w = std::max(total_w, text_width(format_number(total, chart.decimals), 11));
    }
  }
  double axis_end = max_total > 0 ? max_total : 1;
  if (chart.max && std::isfinite(*chart.max) && *chart.max > 0) {
    axis_end = std::max(*chart.max, max_total);
  }
  const Ticks t = nice_ticks(0, axis_end, 4, true);
  const double width = chart.width;
  const double ml = 12 + label_w + 10;
  const double mr = 14 + std::max(total_w, 10.0);
  const auto [legend, legend_bottom] = segment_legend(chart.segments, 12, 44, width - 24);
  const double top = legend_bottom + 8;
  const double bar_h = 20;
  const double gap = 8;
  const double bottom = top + static_cast<double>(chart.rows.size()) * (bar_h + gap) + 4;
  const double height = bottom + 46;
  const Scale sx{t.lo, t.hi, ml, width - mr};

  std::string out;
  out += svg_open(chart.id, "chart-svg", width, height, chart.title);
  out += title_text("12", chart.title);
  out += "<g class=\"legend\" fill=\"#222\">" + legend + "</g>";
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
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const StackedRow& row = chart.rows[r];
    const double y = top + static_cast<double>(r) * (bar_h + gap);
    out += fmt::format(
        "<g class=\"row\"><text x=\"{}\" y=\"{}\" dy=\"0.35em\" text-anchor=\"end\" "
        "fill=\"#222\">{}</text>",
        coord(ml - 8), coord(y + bar_h / 2), escape(row.label));
    double total = 0;
    for (std::size_t i = 0; i < chart.segments.size(); ++i) {
      const double v = segment_value(row, i);
      if (v <= 0) continue;
      const Segment& s = chart.segments[i];
      const double x0 = sx(total);
      const double x1 = sx(total + v);
      total += v;
      const std::string value = format_number(v, chart.decimals);
      out += fmt::format(
          "<g class=\"segment\"><title>{}, {}: {}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" "
          "height=\"{}\" fill=\"{}\"/>",
          escape(row.label), escape(s.label), value, coord(x0), coord(y),
          coord(std::max(x1 - x0, 0.5)), coord(bar_h), escape(s.color));
      if (x1 - x0 >= text_width(value, 11) + 6) {
        out += fmt::format(
            "<text x=\"{}\" y=\"{}\" dy=\"0.35em\" text-anchor=\"middle\" fill=\"{}\" "
            "font-size=\"11\">{}</text>",
            coord((x0 + x1) / 2), coord(y + bar_h / 2), text_color_on(s.color), value);
      }
      out += "</g>";
    }
    if (chart.show_total) {
      out += fmt::format(
          "<text class=\"total\" x=\"{}\" y=\"{}\" dy=\"0.35em\" fill=\"#222\" "
          "font-size=\"11\">{}</text>",
          coord(sx(total) + 5), coord(y + bar_h / 2), format_number(total, chart.decimals));
    }
    out += "</g>";
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
