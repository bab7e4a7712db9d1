// Axis ticks at nice steps, and the frame every chart opens with.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "greensched/report/svg_chart.hpp"
#include "greensched/report/svg_draw.hpp"

namespace greensched::report::svg {

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

std::string svg_open(std::string_view id, std::string_view css_class, double width, double height,
                     std::string_view title) {
  return fmt::format(
      "<svg id=\"{0}\" class=\"{3}\" width=\"{1}\" height=\"{2}\" viewBox=\"0 0 {1} {2}\" "
      "role=\"img\" aria-labelledby=\"{0}-title\" "
      "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\" "
      "font-size=\"12\"><title id=\"{0}-title\">{4}</title>",
      escape(id), coord(width), coord(height), css_class, escape(title));
}

std::string title_text(std::string_view x, std::string_view title) {
  return fmt::format("<text x=\"{}\" y=\"22\" font-size=\"{}\" font-weight=\"600\">{}</text>", x,
                     kTitlePx, escape(title));
}

}  // namespace greensched::report::svg
