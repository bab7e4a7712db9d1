// Durations as people write them: "12h", "30m", "90s", "2d", "1h30m", "1.5h". Every command's
// time option reads them through here, so that --slack 30m and greensched.io/slack: 30m mean
// the same. A bare number keeps the unit its option always had (hours for multi --slack,
// seconds for --ls-bound), so that old command lines still mean what they meant.
#pragma once

#include <string>
#include <string_view>

#include "greensched/core/status.hpp"

namespace greensched {

// Seconds in `text`: one or more NUMBER UNIT parts (d, h, m, s; a number may have decimals),
// or one bare number, read in `bare_unit_s` seconds. Negative, empty and malformed text is an
// error that quotes it.
Result<double> parse_duration(std::string_view text, double bare_unit_s);

// The shortest spelling of `seconds` in whole units: 12h, 10m, 1h30m, 90s, 2d, 0s; a fraction
// of a second is written in seconds with up to 3 decimals (0.5s).
std::string format_duration(double seconds);

}  // namespace greensched
