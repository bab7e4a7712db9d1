#include "greensched/report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace greensched::report::svg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kTitlePx = 15;
constexpr double kTextPx = 12;
constexpr double kLegendRowPx = 20;

// Removes the "-" of a formatted negative zero ("-0", "-0.0").
std::string fix_negative_zero(std::string s) {
  if (!s.empty() && s[0] == '-' && s.find_first_not_of("-0.,") == std::string::npos) s.erase(0, 1);
  return s;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// Maps data to pixels.
struct Scale {
  double d0, d1, p0, p1;
  double operator()(double v) const {
    if (d1 == d0) return (p0 + p1) / 2;
    return p0 + (v - d0) / (d1 - d0) * (p1 - p0);
  }
};

// One polyline path ("M..L..") of finite points, dropping points that do not change the
// drawing: repeats at the same pixel and the middle of straight horizontal/vertical runs.
void append_polyline(std::string& out,
                     const std::vector<std::pair<std::string, std::string>>& pts) {
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

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string coord(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return fix_negative_zero(s);
}

Ticks nice_ticks(double lo, double hi, int target, bool extend) {
  Ticks t;
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  double m = 10;
  for (double candidate : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (norm <= candidate * (1 + 1e-9)) {
      m = candidate;
      break;
    }
  }
  t.step = m * mag;
  const double eps = t.step * 1e-9;
  if (extend) {
    t.lo = std::floor(lo / t.step + 1e-9) * t.step;
    t.hi = std::ceil(hi / t.step - 1e-9) * t.step;
  } else {
    t.lo = std::ceil(lo / t.step - 1e-9) * t.step;
    t.hi = std::floor(hi / t.step + 1e-9) * t.step;
  }
  for (int i = 0;; ++i) {
    const double v = t.lo + i * t.step;
    if (v > t.hi + eps || i > 1000) break;
    t.values.push_back(std::abs(v) < eps ? 0.0 : v);
  }
  int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(t.step) + 1e-9)));
  if (m == 2.5 && t.step < 10) ++decimals;
  t.decimals = decimals;
  if (!extend) {
    t.lo = lo;
    t.hi = hi;
  }
  return t;
}

std::string format_number(double v, int decimals) {
  if (!std::isfinite(v)) return "–";
  const std::string s = fmt::format("{:.{}f}", v, std::max(0, decimals));
  const std::size_t start = s[0] == '-' ? 1 : 0;
  std::size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  std::string out = s.substr(0, start);
  for (std::size_t i = start; i < end; ++i) {
    if (i > start && (end - i) % 3 == 0) out += ',';
    out += s[i];
  }
  out.append(s, end, std::string::npos);
  return fix_negative_zero(out);
}

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

const std::vector<std::string>& palette() {
  static const std::vector<std::string> colors = {
      "#4e79a7",  // 0 blue
      "#f28e2b",  // 1 orange
      "#e15759",  // 2 red
      "#59a14f",  // 3 green
      "#76b7b2",  // 4 teal
      "#b07aa1",  // 5 purple
      "#9c755f",  // 6 brown
      "#7f7f7f",  // 7 grey
      "#c9a400",  // 8 gold
      "#d37295",  // 9 pink
      "#1a9fb0",  // 10 cyan
      "#2f4b7c",  // 11 navy
      "#6b8e23",  // 12 olive
      "#8b0000",  // 13 dark red
      "#b6992d",  // 14 ochre
      "#444444",  // 15 dark grey
  };
  return colors;
}

const std::string& ColorMap::color(const std::string& name) {
  if (auto it = assigned_.find(name); it != assigned_.end()) return it->second;
  static const std::map<std::string, std::size_t> known = {
      // single-cluster policies
      {"bestfit", 0},
      {"pwr:200+fgd:800", 1},
      {"fgd", 2},
      {"pwr", 3},
      {"packing", 4},
      {"clustering", 5},
      {"dotprod", 6},
      {"random", 7},
      // dispatch agents
      {"lowest-carbon-now", 0},
      {"carbon-forecast", 1},
      {"green", 3},
      {"least-loaded", 5},
      {"round-robin", 9},
      {"local", 7},
      {"carbon-forecast (oracle)", 13},
      {"green (oracle)", 10},
  };
  const auto& colors = palette();
  if (used_.empty()) used_.assign(colors.size(), false);
  std::size_t index = colors.size();
  if (auto it = known.find(name); it != known.end() && !used_[it->second]) index = it->second;
  if (index == colors.size()) {
    for (std::size_t i = 0; i < colors.size(); ++i) {
      if (!used_[i]) {
        index = i;
        break;
      }
    }
  }
  if (index == colors.size()) index = assigned_.size() % colors.size();  // more names than colours
  used_[index] = true;
  return assigned_.emplace(name, colors[index]).first->second;
}

double text_width(std::string_view text, double font_px) {
  double em = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    if (std::string_view("il.,:;|!'() ").find(static_cast<char>(c)) != std::string_view::npos) {
      em += 0.3;
    } else if (c >= 'A' && c <= 'Z') {
      em += 0.68;
    } else if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%') {
      em += 0.85;
    } else {
      em += 0.56;
    }
  }
  return em * font_px;
}

namespace {

// The opening <svg> of every chart, with its accessible <title>.
std::string svg_open(std::string_view id, std::string_view css_class, double width, double height,
                     std::string_view title) {
  return fmt::format(
      "<svg id=\"{0}\" class=\"{3}\" width=\"{1}\" height=\"{2}\" viewBox=\"0 0 {1} {2}\" "
      "role=\"img\" aria-labelledby=\"{0}-title\" "
      "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\" "
      "font-size=\"12\"><title id=\"{0}-title\">{4}</title>",
      escape(id), coord(width), coord(height), css_class, escape(title));
}

// The visible title at the top left.
std::string title_text(std::string_view x, std::string_view title) {
  return fmt::format("<text x=\"{}\" y=\"22\" font-size=\"{}\" font-weight=\"600\">{}</text>", x,
                     kTitlePx, escape(title));
}

}  // namespace

std::string render_line_chart(const LineChart& chart) {
  // Data ranges.
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
  if (chart.y_from_zero) yr.add(0);
  if (xr.empty()) xr.add(0), xr.add(1);
  if (yr.empty()) yr.add(0), yr.add(1);
  const double x_lo = chart.x_min.value_or(xr.lo);
  const double x_hi = chart.x_max.value_or(xr.hi);
  Ticks yt = nice_ticks(chart.y_min.value_or(yr.lo), chart.y_max.value_or(yr.hi), 5, true);
  if (chart.y_min) yt.lo = *chart.y_min;
  if (chart.y_max) yt.hi = *chart.y_max;
  const Ticks xt = nice_ticks(x_lo, x_hi == x_lo ? x_lo + 1 : x_hi, 8, false);

  // Layout.
  const double width = chart.width;
  double label_w = 0;
  for (double v : yt.values)
    label_w = std::max(label_w, text_width(format_number(v, yt.decimals), 11));
  const double ml = std::max(80.0, 26 + label_w + 10);  // the same in most charts: aligned plots
  const double mr = 24;
  std::vector<LegendEntry> legend;
  for (const Series& s : chart.series) {
    if (s.in_legend) legend.push_back(LegendEntry{s.name, s.color, s.dashed, false});
  }
  legend.insert(legend.end(), chart.extra_legend.begin(), chart.extra_legend.end());
  auto [legend_svg, legend_bottom] = render_legend(legend, ml, 44, width - ml - mr);
  const double top = legend_bottom + 8;
  const double bottom = top + chart.plot_height;
  const double height = bottom + 50;
  const Scale sx{xt.lo, xt.hi, ml, width - mr};
  const Scale sy{yt.lo, yt.hi, bottom, top};

  std::string out;
  out.reserve(4096);
  out += svg_open(chart.id, "chart-svg", width, height, chart.title);
  out += fmt::format(
      "<defs><clipPath id=\"{}-clip\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
      "</clipPath></defs>",
      escape(chart.id), coord(ml), coord(top - 2), coord(width - mr - ml), coord(bottom - top + 4));
  out += title_text(coord(ml), chart.title);
  out += "<g class=\"legend\" fill=\"#222\">" + legend_svg + "</g>";

  // Grid and tick labels.
  out += "<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">";
  for (double v : yt.values) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", coord(ml), coord(sy(v)),
                       coord(width - mr), coord(sy(v)));
  }
  for (double v : xt.values) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", coord(sx(v)), coord(top),
                       coord(sx(v)), coord(bottom));
  }
  out += "</g><g class=\"ticks\" fill=\"#444\" font-size=\"11\">";
  for (double v : yt.values) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.32em\" text-anchor=\"end\">{}</text>",
                       coord(ml - 6), coord(sy(v)), format_number(v, yt.decimals));
  }
  for (double v : xt.values) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", coord(sx(v)),
                       coord(bottom + 16), format_number(v, xt.decimals));
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

  // Data: bands first, then lines on top.
  const auto pixel = [&](const Point& p) { return std::pair{coord(sx(p.x)), coord(sy(p.y))}; };
  out += fmt::format("<g class=\"data\" clip-path=\"url(#{}-clip)\">", escape(chart.id));
  for (const Series& s : chart.series) {
    if (s.band_lo.empty() || s.band_hi.empty()) continue;
    const std::vector<Point> lo = downsample_minmax(s.band_lo, chart.max_points);
    const std::vector<Point> hi = downsample_minmax(s.band_hi, chart.max_points);
    std::string d;
    // Segments between gaps when both edges share their x positions, else one polygon.
    const bool paired = lo.size() == hi.size();
    std::size_t i = 0;
    const std::size_t n = paired ? lo.size() : 1;
    while (i < n) {
      std::vector<std::pair<std::string, std::string>> ring;
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
    if (d.empty()) continue;
    out += fmt::format(
        "<path class=\"band\" d=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\"/>", d,
        escape(s.color));
  }
  for (const Series& s : chart.series) {
    const std::vector<Point> pts = downsample_minmax(s.points, chart.max_points);
    std::string d;
    std::vector<std::pair<std::string, std::string>> segment;
    for (std::size_t i = 0; i <= pts.size(); ++i) {
      if (i == pts.size() || !std::isfinite(pts[i].y)) {
        if (!segment.empty()) append_polyline(d, segment);
        segment.clear();
        continue;
      }
      segment.push_back(pixel(pts[i]));
    }
    if (d.empty()) continue;
    out += fmt::format(
        "<g class=\"series\"><title>{}</title><path d=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"{}\" stroke-linejoin=\"round\" stroke-linecap=\"round\"{}/></g>",
        escape(s.name), d, escape(s.color), s.dashed ? "1.8" : "2",
        s.dashed ? " stroke-dasharray=\"6 4\"" : "");
  }
  out += "</g></svg>";
  return out;
}

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

namespace greensched::report::svg {

int occupancy_level(int used_milli) {
  if (used_milli <= 0) return 0;
  if (used_milli >= 1000) return 5;
  if (used_milli <= 250) return 1;
  if (used_milli <= 500) return 2;
  if (used_milli <= 750) return 3;
  return 4;
}

const std::vector<std::string>& occupancy_shades() {
  static const std::vector<std::string> shades = {"#ffffff", "#d0e1f2", "#94c4df",
                                                  "#4a98c9", "#1764ab", "#08306b"};
  return shades;
}

std::string render_occupancy_map(const OccupancyMap& map) {
  constexpr double kCellW = 7;    // 6 px of colour + 1 px line
  constexpr double kRowH = 4;     // 3 px of colour + 1 px line
  constexpr double kLabelH = 14;  // group label above a group's rows
  constexpr double kGroupGap = 6;
  constexpr double kStrip = 3;  // group colour strip left of the rows
  constexpr double kGutter = 16;
  const double width = map.width;
  const double margin = 12;

  // Groups in order, with node counts.
  std::vector<std::pair<std::string, std::size_t>> groups;
  for (const MapNode& n : map.nodes) {
    if (groups.empty() || groups.back().first != n.group) groups.emplace_back(n.group, 0);
    ++groups.back().second;
  }
  ColorMap group_colors;
  std::map<std::string, std::size_t> group_nodes;
  for (const auto& [g, count] : groups) group_nodes[g] += count;

  // Legend: shades, then groups.
  std::string legend;
  double lx = margin;
  double ly = 44;
  legend +=
      fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-weight=\"600\">GPU in use:</text>",
                  coord(lx), coord(ly));
  lx += text_width("GPU in use:", kTextPx) * 1.2 + 14;
  static const char* const kShadeLabels[] = {"free",    "1–25 %",  "26–50 %",
                                             "51–75 %", "76–99 %", "full"};
  for (int level = 0; level < 6; ++level) {
    legend += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\" stroke=\"#999\" "
        "stroke-width=\"0.8\"/><text x=\"{}\" y=\"{}\" dy=\"0.35em\">{}</text>",
        coord(lx), coord(ly - 5), occupancy_shades()[static_cast<std::size_t>(level)],
        coord(lx + 19), coord(ly), kShadeLabels[level]);
    lx += 19 + text_width(kShadeLabels[level], kTextPx) + 16;
  }
  ly += kLegendRowPx;
  lx = margin;
  const std::string groups_title = "Node groups (GPU model, nodes):";
  legend += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-weight=\"600\">{}</text>",
                        coord(lx), coord(ly), escape(groups_title));
  lx += text_width(groups_title, kTextPx) * 1.2 + 14;
  std::vector<std::string> seen;
  for (const auto& [g, count] : groups) {
    if (std::find(seen.begin(), seen.end(), g) != seen.end()) continue;
    seen.push_back(g);
    const std::string label = fmt::format("{} ({})", g.empty() ? "no model" : g, group_nodes[g]);
    const double w = 8 + text_width(label, kTextPx) + 16;
    if (lx + w > width - margin) {
      lx = margin;
      ly += kLegendRowPx;
    }
    legend += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"4\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "dy=\"0.35em\">{}</text>",
        coord(lx), coord(ly - 6), group_colors.color(g), coord(lx + 8), coord(ly), escape(label));
    lx += w;
  }
  const double grid_top = ly + kLegendRowPx;

  // Flow the groups into columns no taller than `limit`; a column is as wide as its widest
  // node (or group label). The lowest limit whose columns fit the width wins.
  const auto node_w = [&](std::size_t gpus) {
    return kStrip + 2 + static_cast<double>(std::max<std::size_t>(gpus, 1)) * kCellW;
  };
  struct Placed {
    std::size_t node;
    std::size_t col;
    double y;
  };
  struct Label {
    std::string text;
    std::size_t col;
    double y;
  };
  std::vector<Placed> placed;
  std::vector<Label> labels;
  std::vector<double> col_w;
  double height_used = 0;
  double limit = kLabelH + kRowH * std::min<double>(static_cast<double>(map.nodes.size()), 40);
  for (int attempt = 0; attempt < 100000; ++attempt) {
    placed.clear();
    labels.clear();
    col_w.assign(1, 0);
    std::size_t col = 0;
    double y = 0;
    std::size_t next = 0;
    height_used = 0;
    for (const auto& [g, count] : groups) {
      const std::string label = g.empty() ? "no model" : g;
      for (std::size_t k = 0; k < count; ++k, ++next) {
        const bool first = k == 0;
        if (first && y > 0) y += kGroupGap;
        const double need = first ? kLabelH + kRowH : kRowH;
        const bool tail = !first && count - k <= 3;  // a group's last rows stay with it
        if (y + need > limit && y > 0 && !tail) {
          ++col;
          col_w.push_back(0);
          y = 0;
        }
        if (first || y == 0) {
          labels.push_back(Label{label, col, y});
          col_w[col] = std::max(col_w[col], text_width(label, 10) + 2);
          y += kLabelH;
        }
        placed.push_back(Placed{next, col, y});
        col_w[col] = std::max(col_w[col], node_w(map.nodes[next].used_milli.size()));
        y += kRowH;
        height_used = std::max(height_used, y);
      }
    }
    double total_w = 0;
    for (double w : col_w) total_w += w + kGutter;
    if (total_w - kGutter <= width - 2 * margin || col == 0) break;
    limit += kRowH;
  }
  std::vector<double> col_left(col_w.size(), margin);
  for (std::size_t c = 1; c < col_w.size(); ++c)
    col_left[c] = col_left[c - 1] + col_w[c - 1] + kGutter;
  const auto col_x = [&](std::size_t col) { return col_left[col]; };
  const double height = grid_top + height_used + 14;

  std::string out;
  out += svg_open(map.id, "chart-svg occupancy", width, height, map.title);
  out += title_text(coord(margin), map.title);
  out += "<g class=\"legend\" fill=\"#222\">" + legend + "</g>";

  // Group labels.
  out += "<g class=\"group-labels\" font-size=\"10\" fill=\"#333\">";
  for (const Label& l : labels) {
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>", coord(col_x(l.col)),
                       coord(grid_top + l.y + kLabelH - 4), escape(l.text));
  }
  out += "</g>";

  // Runs of consecutive placed nodes in one column with the same group and GPU count.
  struct Run {
    std::size_t begin, end;  // into placed
  };
  std::vector<Run> runs;
  for (std::size_t i = 0; i < placed.size(); ++i) {
    const MapNode& n = map.nodes[placed[i].node];
    if (!runs.empty()) {
      const Placed& prev = placed[i - 1];
      const MapNode& pn = map.nodes[prev.node];
      if (prev.col == placed[i].col && placed[i].y == prev.y + kRowH && pn.group == n.group &&
          pn.used_milli.size() == n.used_milli.size()) {
        runs.back().end = i + 1;
        continue;
      }
    }
    runs.push_back(Run{i, i + 1});
  }

  // Group strips.
  out += "<g class=\"strips\">";
  for (const Run& r : runs) {
    const Placed& p = placed[r.begin];
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                       coord(col_x(p.col)), coord(grid_top + p.y), coord(kStrip),
                       coord(static_cast<double>(r.end - r.begin) * kRowH),
                       group_colors.color(map.nodes[p.node].group));
  }
  out += "</g>";

  // Cell fills by shade, merged across equal neighbouring cells (right and down).
  std::vector<std::string> fills(6);
  for (const Run& r : runs) {
    const double x0 = col_x(placed[r.begin].col) + kStrip + 2;
    struct Open {
      std::size_t a, b;  // GPU range [a, b)
      int level;
      double y0, y1;
    };
    std::vector<Open> open;
    const auto flush = [&](const Open& o) {
      fills[static_cast<std::size_t>(o.level)] +=
          fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                      coord(x0 + static_cast<double>(o.a) * kCellW + 1), coord(grid_top + o.y0 + 1),
                      coord(static_cast<double>(o.b - o.a) * kCellW - 1), coord(o.y1 - o.y0 - 1));
    };
    for (std::size_t i = r.begin; i < r.end; ++i) {
      const MapNode& n = map.nodes[placed[i].node];
      const double y = placed[i].y;
      std::vector<Open> row;
      for (std::size_t g = 0; g < n.used_milli.size();) {
        const int level = occupancy_level(n.used_milli[g]);
        std::size_t h = g + 1;
        while (h < n.used_milli.size() && occupancy_level(n.used_milli[h]) == level) ++h;
        if (level > 0) row.push_back(Open{g, h, level, y, y + kRowH});
        g = h;
      }
      std::vector<Open> next_open;
      for (Open& cell : row) {
        auto it = std::find_if(open.begin(), open.end(), [&](const Open& o) {
          return o.a == cell.a && o.b == cell.b && o.level == cell.level;
        });
        if (it != open.end()) {
          it->y1 = cell.y1;
          next_open.push_back(*it);
          it->level = -1;  // taken
        } else {
          next_open.push_back(cell);
        }
      }
      for (const Open& o : open) {
        if (o.level >= 0) flush(o);
      }
      open = std::move(next_open);
    }
    for (const Open& o : open) flush(o);
  }
  for (std::size_t level = 1; level < fills.size(); ++level) {
    if (fills[level].empty()) continue;
    out += fmt::format("<g class=\"shade-{}\" fill=\"{}\">{}</g>", level, occupancy_shades()[level],
                       fills[level]);
  }

  // Cell lines on top.
  std::string d;
  for (const Run& r : runs) {
    const Placed& p = placed[r.begin];
    const double x0 = col_x(p.col) + kStrip + 2 + 0.5;
    const double y0 = grid_top + p.y + 0.5;
    const std::size_t gpus = map.nodes[p.node].used_milli.size();
    const double w = static_cast<double>(gpus) * kCellW;
    const double h = static_cast<double>(r.end - r.begin) * kRowH;
    for (std::size_t k = 0; k <= r.end - r.begin; ++k) {
      d +=
          fmt::format("M{} {}h{}", coord(x0), coord(y0 + static_cast<double>(k) * kRowH), coord(w));
    }
    for (std::size_t g = 0; g <= gpus; ++g) {
      d += fmt::format("M{} {}v{}", coord(x0 + static_cast<double>(g) * kCellW), coord(y0),
                       coord(h));
    }
  }
  out += fmt::format(
      "<path class=\"cells\" d=\"{}\" fill=\"none\" stroke=\"#b8b8b8\" stroke-width=\"1\"/>", d);
  out += "</svg>";
  return out;
}

}  // namespace greensched::report::svg
