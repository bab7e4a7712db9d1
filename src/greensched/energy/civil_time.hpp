// Calendar stamps -> UTC epoch seconds for the energy readers, on C++20 <chrono> calendar
// types (proleptic Gregorian, no locale, no time zone database). The general UTC parser lives
// in multi/, which sits above energy/, so energy/ keeps this small one of its own.
#pragma once

#include <cstdint>
#include <string_view>

#include "greensched/core/status.hpp"

namespace greensched::energy {

// "YYYY-MM-DD[T| ]HH:MM[:SS]" optionally followed by "Z" or a "+HH:MM" / "-HH:MM" offset.
// Returns the UTC epoch seconds (a stamp with an offset is moved to UTC; a stamp without one
// is taken as it stands). The error says what was expected.
Result<int64_t> parse_civil_time(std::string_view text);

// Epoch seconds -> "YYYY-MM-DD HH:MM:SS", for error messages.
std::string format_civil_time(int64_t epoch_s);

}  // namespace greensched::energy
