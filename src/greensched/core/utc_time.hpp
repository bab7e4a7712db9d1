// UTC time stamps <-> epoch seconds on C++20 <chrono> calendar types (proleptic Gregorian, no
// locale, no time zone database), for every reader of dated series: carbon, price and weather.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "greensched/core/status.hpp"

namespace greensched {

// Floor division and modulo for b > 0 (times before the epoch round down).
constexpr int64_t floor_div(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && a < 0 ? 1 : 0);
}
constexpr int64_t floor_mod(int64_t a, int64_t b) {
  return a - floor_div(a, b) * b;
}
// The start of the UTC hour holding epoch second t.
constexpr int64_t floor_hour(int64_t t) {
  return t - floor_mod(t, 3600);
}

// "2023-01-01", "2023-01-01 05:00:00", "2023-01-01T05:00:00Z" -> epoch seconds (UTC).
// Also "YYYY-MM-DD HH:MM", the 'T' separator with or without a trailing 'Z', and a plain
// integer (epoch seconds). A stamp without a zone is taken as UTC.
Result<int64_t> parse_utc_time(std::string_view text);

// "YYYY-MM-DD[T| ]HH:MM[:SS]" optionally followed by "Z" or a "+HH:MM" / "-HH:MM" offset ->
// UTC epoch seconds (a stamp with an offset is moved to UTC; one without is taken as it
// stands). The error says what was expected.
Result<int64_t> parse_offset_time(std::string_view text);

// Epoch seconds -> "YYYY-MM-DD HH:MM:SS" (UTC), as used in error messages and reports.
std::string format_utc_time(int64_t epoch_s);

}  // namespace greensched
