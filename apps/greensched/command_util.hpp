// What every command shares: how an error ends a command.
#pragma once

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "greensched/core/text_file.hpp"

namespace greensched::app {

// Prints "error: MESSAGE" on stderr and returns the exit code (1: failure, 2: usage).
inline int fail(const std::string& message, int code = 1) {
  fmt::print(stderr, "error: {}\n", message);
  return code;
}

}  // namespace greensched::app
