// Durations with units (duration.hpp).
#include "greensched/core/duration.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace greensched {

Result<double> parse_duration(std::string_view text, double bare_unit_s) {
  const auto malformed = [&] {
    return Error{fmt::format("'{}' is not a duration (e.g. 12h, 30m, 1h30m, 90s, 2d)", text)};
  };
  if (text.empty()) return Error{"an empty duration"};
  double total = 0;
  std::size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[j])) != 0 || text[j] == '.')) {
      ++j;
    }
    if (j == i) return malformed();
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + j, value);
    if (ec != std::errc() || end != text.data() + j || !std::isfinite(value)) return malformed();
    if (value > 1e12) return Error{fmt::format("'{}': number out of range", text)};
    double unit = 0;
    if (j < text.size()) {
      switch (text[j]) {
        case 'd':
          unit = 86400;
          break;
        case 'h':
          unit = 3600;
          break;
        case 'm':
          unit = 60;
          break;
        case 's':
          unit = 1;
          break;
        default:
          return Error{fmt::format("'{}': unknown unit '{}' (d, h, m or s)", text, text[j])};
      }
      ++j;
    } else if (any) {
      return Error{fmt::format("'{}': a number without a unit after the first", text)};
    } else {
      unit = bare_unit_s;
    }
    total += value * unit;
    any = true;
    i = j;
  }
  return total;
}

std::string format_duration(double seconds) {
  if (seconds <= 0) return "0s";
  if (seconds != std::floor(seconds)) return fmt::format("{:.3g}s", seconds);
  const auto s = static_cast<long long>(seconds);
  if (s % 86400 == 0) return fmt::format("{}d", s / 86400);
  if (s < 3600) return s % 60 == 0 ? fmt::format("{}m", s / 60) : fmt::format("{}s", s);
  std::string out = fmt::format("{}h", s / 3600);
  if (s % 3600 / 60 > 0) out += fmt::format("{}m", s % 3600 / 60);
  if (s % 60 > 0) out += fmt::format("{}s", s % 60);
  return out;
}

}  // namespace greensched
