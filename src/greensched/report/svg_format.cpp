// Text in charts: escaping, fixed number formatting, estimated text widths.
#include <cmath>

#include <fmt/format.h>

#include "greensched/report/svg_chart.hpp"
#include "greensched/report/svg_draw.hpp"

namespace greensched::report::svg {

std::string fix_negative_zero(std::string s) {
  if (!s.empty() && s[0] == '-' && s.find_first_not_of("-0.,") == std::string::npos) s.erase(0, 1);
  return s;
}

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

}  // namespace greensched::report::svg
