// Line charts: data ranges and layout, grid and axes, min..max bands, gapped lines, the legend,
// and min-max downsampling of long series.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "greensched/report/svg_chart.hpp"
#include "greensched/report/svg_draw.hpp"

namespace greensched::report::svg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using Pixel = std::pair<std::string, std::string>;  // formatted x and y

// One polyline path ("M..L..") of finite points, dropping points that do not change the
// drawing: repeats at the same pixel and the middle of straight horizontal/vertical runs.
void append_polyline(std::string& out, const std::vector<Pixel>& pts) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (i > 0 && pts[i] == pts[i - 1]) continue;
    if (i > 0 && i + 1 < pts.size()) {
      const auto& a = pts[i - 1];
      const auto& b = pts[i];
      const auto& c = pts[i + 1];
      if ((a.second == b.second && b.second == c.second) ||
          (a.first == b.first && b.first == c.first)) {
        continue;
      }
    }
    out += kept == 0 ? 'M' : 'L';
    out += pts[i].first;
    out += ' ';
    out += pts[i].second;
    ++kept;
  }
  if (kept == 1) out += "h0.01";  // a lone point: drawn as a dot by the round line cap
}

std::string legend_swatch(double x, double y, const LegendEntry& e) {
  if (e.band) {
    return fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"22\" height=\"10\" fill=\"{}\" fill-opacity=\"0.22\"/>",
        coord(x), coord(y - 5), escape(e.color));
  }
  return fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>",
      coord(x), coord(y), coord(x + 22), coord(y), escape(e.color),
      e.dashed ? " stroke-dasharray=\"5 3\"" : "");
}

// Lays the legend out in rows starting at (x0, y0) within `width`; returns the svg and the
// y below the last row.
std::pair<std::string, double> render_legend(const std::vector<LegendEntry>& entries, double x0,
                                             double y0, double width) {
  std::string out;
  double x = x0;
  double y = y0;
  for (const LegendEntry& e : entries) {
    const double w = 22 + 6 + text_width(e.label, kTextPx) + 18;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += kLegendRowPx;
    }
    out += legend_swatch(x, y, e);
    out += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.35em\">{}</text>", coord(x + 28), coord(y),
                       escape(e.label));
    x += w;
  }
  return {out, entries.empty() ? y0 : y + kLegendRowPx};
}

// Where everything goes: ticks, margins, the plotting area and the legend above it.
struct LineLayout {
  Ticks xt, yt;
  double width = 0, ml = 0, mr = 24, top = 0, bottom = 0, height = 0;
  std::string legend_svg;
  Scale sx{0, 1, 0, 1}, sy{0, 1, 0, 1};
};

// The data's ranges (y within the x window), widened as the chart asks.
std::pair<Range, Range> data_ranges(const LineChart& chart) {
  Range xr, yr;
  const auto in_window = [&](double x) {
    return (!chart.x_min || x >= *chart.x_min) && (!chart.x_max || x <= *chart.x_max);
  };
  for (const Series& s : chart.series) {
    for (const Point& p : s.points) {
      if (std::isfinite(p.y)) xr.add(p.x);
      if (in_window(p.x)) yr.add(p.y);
    }
    for (const auto* band : {&s.band_lo, &s.band_hi}) {
      for (const Point& p : *band) {
        if (in_window(p.x)) yr.add(p.y);
      }
    }
  }
  for (const Marker& m : chart.markers) {
    if (in_window(m.x)) xr.add(m.x);
  }
  if (chart.y_from_zero) yr.add(0);
  if (xr.empty()) xr.add(0), xr.add(1);
  if (yr.empty()) yr.add(0), yr.add(1);
  return {xr, yr};
}

LineLayout line_layout(const LineChart& chart) {
  const auto [xr, yr] = data_ranges(chart);
  LineLayout l;
  const double x_lo = chart.x_min.value_or(xr.lo);
  const double x_hi = chart.x_max.value_or(xr.hi);
  l.yt = nice_ticks(chart.y_min.value_or(yr.lo), chart.y_max.value_or(yr.hi), 5, true);
  if (chart.y_min) l.yt.lo = *chart.y_min;
  if (chart.y_max) l.yt.hi = *chart.y_max;
  l.xt = nice_ticks(x_lo, x_hi == x_lo ? x_lo + 1 : x_hi, 8, false);

  l.width = chart.width;
  double label_w = 0;
  for (double v : l.yt.values)
    label_w = std::max(label_w, text_width(format_number(v, l.yt.decimals), 11));
  l.ml = std::max(80.0, 26 + label_w + 10);  // the same in most charts: aligned plots
  std::vector<LegendEntry> legend;
  for (const Series& s : chart.series) {
    if (s.in_legend) legend.push_back(LegendEntry{s.name, s.color, s.dashed, false});
  }
  legend.insert(legend.end(), chart.extra_legend.begin(), chart.extra_legend.end());
  double legend_bottom = 0;
  std::tie(l.legend_svg, legend_bottom) = render_legend(legend, l.ml, 44, l.width - l.ml - l.mr);
  l.top = legend_bottom + 8;
  l.bottom = l.top + chart.plot_height;
  l.height = l.bottom + 50;
  l.sx = Scale{l.xt.lo, l.xt.hi, l.ml, l.width - l.mr};
  l.sy = Scale{l.yt.lo, l.yt.hi, l.bottom, l.top};
  return l;
}

// Grid, tick labels, axes and axis titles.
std::string line_frame(const LineChart& chart, const LineLayout& l) {
  const double ml = l.ml, mr = l.mr, width = l.width, top = l.top, bottom = l.bottom;
  const Scale& sx = l.sx;
  const Scale& sy = l.sy;
  std::string out = "<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">";
  for (double v : l.yt.values) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", coord(ml), coord(sy(v)),
                       coord(width - mr), coord(sy(v)));
  }
  for (double v : l.xt.values) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", coord(sx(v)), coord(top),
                       coord(sx(v)), coord(bottom));
  }
  out += "</g><g class=\"ticks\" fill=\"#444\" font-size=\"11\">";
  for (double v : l.yt.values) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.32em\" text-anchor=\"end\">{}</text>",
                       coord(ml - 6), coord(sy(v)), format_number(v, l.yt.decimals));
  }
  for (double v : l.xt.values) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", coord(sx(v)),
                       coord(bottom + 16), format_number(v, l.xt.decimals));
  }
  out += "</g>";
  out += fmt::format(
      "<g class=\"axes\" stroke=\"#333\" stroke-width=\"1\"><line x1=\"{0}\" y1=\"{1}\" "
      "x2=\"{0}\" y2=\"{2}\"/><line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/></g>",
      coord(ml), coord(top), coord(bottom), coord(width - mr));
  out += fmt::format(
      "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
      coord((ml + width - mr) / 2), coord(bottom + 38), escape(chart.x_label));
  out += fmt::format(
      "<text class=\"axis-title\" transform=\"translate(14 {}) rotate(-90)\" "
      "text-anchor=\"middle\" fill=\"#222\">{}</text>",
      coord((top + bottom) / 2), escape(chart.y_label));
  return out;
}

// The path of a series' band: segments between gaps when both edges share their x positions,
// else one polygon. Empty when nothing is drawn.
template <typename ToPixel>
std::string band_path(const Series& s, std::size_t max_points, const ToPixel& pixel) {
  const std::vector<Point> lo = downsample_minmax(s.band_lo, max_points);
  const std::vector<Point> hi = downsample_minmax(s.band_hi, max_points);
  std::string d;
  const bool paired = lo.size() == hi.size();
  std::size_t i = 0;
  const std::size_t n = paired ? lo.size() : 1;
  while (i < n) {
    std::vector<Pixel> ring;
    if (paired) {
      std::size_t j = i;
      while (j < n && std::isfinite(lo[j].y) && std::isfinite(hi[j].y)) ++j;
      for (std::size_t k = i; k < j; ++k) ring.push_back(pixel(hi[k]));
      for (std::size_t k = j; k > i; --k) ring.push_back(pixel(lo[k - 1]));
      i = j + 1;
    } else {
      for (const Point& p : hi) {
        if (std::isfinite(p.y)) ring.push_back(pixel(p));
      }
      for (auto it = lo.rbegin(); it != lo.rend(); ++it) {
        if (std::isfinite(it->y)) ring.push_back(pixel(*it));
      }
      i = n;
    }
    if (ring.size() < 3) continue;
    for (std::size_t k = 0; k < ring.size(); ++k) {
      d += k == 0 ? 'M' : 'L';
      d += ring[k].first + ' ' + ring[k].second;
    }
    d += 'Z';
  }
  return d;
}

// The path of a series' line, broken at gaps (NaN y). Empty when nothing is drawn.
template <typename ToPixel>
std::string line_path(const Series& s, std::size_t max_points, const ToPixel& pixel) {
  const std::vector<Point> pts = downsample_minmax(s.points, max_points);
  std::string d;
  std::vector<Pixel> segment;
  for (std::size_t i = 0; i <= pts.size(); ++i) {
    if (i == pts.size() || !std::isfinite(pts[i].y)) {
      if (!segment.empty()) append_polyline(d, segment);
      segment.clear();
      continue;
    }
    segment.push_back(pixel(pts[i]));
  }
  return d;
}

// Vertical lines at the markers' x, each labelled at the top (labels one under the other, so
// that markers close together stay readable), with a dot where a marker has a y.
std::string render_markers(const LineChart& chart, const LineLayout& l) {
  if (chart.markers.empty()) return {};
  std::string out = "<g class=\"markers\" font-size=\"11\">";
  for (std::size_t i = 0; i < chart.markers.size(); ++i) {
    const Marker& m = chart.markers[i];
    if (!std::isfinite(m.x) || m.x < l.xt.lo || m.x > l.xt.hi) continue;
    const double x = l.sx(m.x);
    const double label_y = l.top + 12 + static_cast<double>(i) * 14;
    const bool left = x + 4 + text_width(m.label, 11) > l.width - l.mr;
    out += fmt::format(
        "<g class=\"marker\"><title>{0}</title><line x1=\"{1}\" y1=\"{2}\" x2=\"{1}\" "
        "y2=\"{3}\" stroke=\"{4}\" stroke-width=\"1.5\"{5}/>",
        escape(m.label), coord(x), coord(l.top), coord(l.bottom), escape(m.color),
        m.dashed ? " stroke-dasharray=\"4 3\"" : "");
    if (m.y && std::isfinite(*m.y)) {
      out += fmt::format(
          "<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" stroke=\"#fff\" "
          "stroke-width=\"1.5\"/>",
          coord(x), coord(l.sy(*m.y)), escape(m.color));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" fill=\"{}\">{}</text></g>",
                       coord(left ? x - 4 : x + 4), coord(label_y), left ? "end" : "start",
                       escape(m.color), escape(m.label));
  }
  return out + "</g>";
}

}  // namespace

std::vector<Point> downsample_minmax(const std::vector<Point>& points, std::size_t max_points) {
  max_points = std::max<std::size_t>(max_points, 4);
  if (points.size() <= max_points) return points;
  const std::size_t buckets = max_points / 2;
  const double x0 = points.front().x;
  const double x1 = points.back().x;
  std::vector<Point> out;
  out.reserve(max_points + 2);
  std::size_t i = 0;
  while (i < points.size()) {
    std::size_t b = 0;
    if (x1 > x0) {
      b = static_cast<std::size_t>((points[i].x - x0) / (x1 - x0) * static_cast<double>(buckets));
      b = std::min(b, buckets - 1);
    }
    std::size_t j = i;
    std::size_t lo = points.size();
    std::size_t hi = points.size();
    bool gap = false;
    for (; j < points.size(); ++j) {
      std::size_t bj = 0;
      if (x1 > x0) {
        bj =
            static_cast<std::size_t>((points[j].x - x0) / (x1 - x0) * static_cast<double>(buckets));
        bj = std::min(bj, buckets - 1);
      }
      if (bj != b) break;
      const double y = points[j].y;
      if (!std::isfinite(y)) {
        gap = true;
        continue;
      }
      if (lo == points.size() || y < points[lo].y) lo = j;
      if (hi == points.size() || y > points[hi].y) hi = j;
    }
    if (lo != points.size()) {
      out.push_back(points[std::min(lo, hi)]);
      if (lo != hi) out.push_back(points[std::max(lo, hi)]);
    }
    if (gap) out.push_back(Point{points[j - 1].x, kNaN});
    i = j;
  }
  return out;
}

std::string render_line_chart(const LineChart& chart) {
  const LineLayout l = line_layout(chart);
  std::string out;
  out.reserve(4096);
  out += svg_open(chart.id, "chart-svg", l.width, l.height, chart.title);
  out += fmt::format(
      "<defs><clipPath id=\"{}-clip\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
      "</clipPath></defs>",
      escape(chart.id), coord(l.ml), coord(l.top - 2), coord(l.width - l.mr - l.ml),
      coord(l.bottom - l.top + 4));
  out += title_text(coord(l.ml), chart.title);
  out += "<g class=\"legend\" fill=\"#222\">" + l.legend_svg + "</g>";
  out += line_frame(chart, l);

  // Data: bands first, then lines on top.
  const auto pixel = [&](const Point& p) { return Pixel{coord(l.sx(p.x)), coord(l.sy(p.y))}; };
  out += fmt::format("<g class=\"data\" clip-path=\"url(#{}-clip)\">", escape(chart.id));
  for (const Series& s : chart.series) {
    if (s.band_lo.empty() || s.band_hi.empty()) continue;
    const std::string d = band_path(s, chart.max_points, pixel);
    if (d.empty()) continue;
    out += fmt::format(
        "<path class=\"band\" d=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\"/>", d,
        escape(s.color));
  }
  for (const Series& s : chart.series) {
    const std::string d = line_path(s, chart.max_points, pixel);
    if (d.empty()) continue;
    out += fmt::format(
        "<g class=\"series\"><title>{}</title><path d=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"{}\" stroke-linejoin=\"round\" stroke-linecap=\"round\"{}/></g>",
        escape(s.name), d, escape(s.color), s.dashed ? "1.8" : "2",
        s.dashed ? " stroke-dasharray=\"6 4\"" : "");
  }
  out += "</g>";
  out += render_markers(chart, l);
  out += "</svg>";
  return out;
}

}  // namespace greensched::report::svg
