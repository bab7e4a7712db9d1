// Shared by the chart files (svg_*.cpp): text sizes, data ranges and the data-to-pixel scale,
// the opening <svg> of a chart and its visible title.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

namespace greensched::report::svg {

inline constexpr double kTitlePx = 15;
inline constexpr double kTextPx = 12;
inline constexpr double kLegendRowPx = 20;

// The low and high end of the finite values added.
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

// Maps data [d0, d1] to pixels [p0, p1].
struct Scale {
  double d0, d1, p0, p1;
  double operator()(double v) const {
    if (d1 == d0) return (p0 + p1) / 2;
    return p0 + (v - d0) / (d1 - d0) * (p1 - p0);
  }
};

// Removes the "-" of a formatted negative zero ("-0", "-0.0").
std::string fix_negative_zero(std::string s);

// The opening <svg> of every chart, with its accessible <title>.
std::string svg_open(std::string_view id, std::string_view css_class, double width, double height,
                     std::string_view title);

// The visible title at the top left.
std::string title_text(std::string_view x, std::string_view title);

}  // namespace greensched::report::svg
