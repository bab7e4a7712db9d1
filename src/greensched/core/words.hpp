// Counts in words: "1 day", "3 days", "1.5 days". One rule for every table, line and page.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace greensched {

inline std::string plural(double n, std::string_view one, std::string_view many) {
  return fmt::format("{:g} {}", n, n == 1 ? one : many);
}

}  // namespace greensched
