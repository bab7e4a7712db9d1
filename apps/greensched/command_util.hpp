// What every command shares: how an error ends a command. Every failure prints one line
// "greensched COMMAND: MESSAGE" on stderr (MESSAGE names the file and line or key where there
// is one) and exits with a code below 128, so a shell never mistakes it for a signal.
#pragma once

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "greensched/core/status.hpp"
#include "greensched/core/text_file.hpp"

namespace greensched::app {

inline constexpr int kExitInput = 1;      // invalid input, or a named thing not found
inline constexpr int kExitUsage = 2;      // bad command-line arguments
inline constexpr int kExitInternal = 70;  // EX_SOFTWARE: a bug, reported rather than aborting
inline constexpr int kExitIo = 74;        // EX_IOERR: reading or writing failed

inline int exit_code(ErrorCode code) {
  switch (code) {
    case ErrorCode::kIo:
      return kExitIo;
    case ErrorCode::kInternal:
      return kExitInternal;
    case ErrorCode::kInvalidInput:
    case ErrorCode::kNotFound:
      break;
  }
  return kExitInput;
}

// The running subcommand's name, for messages; main sets it once parsing picked one.
inline std::string& command_name() {
  static std::string name;
  return name;
}

// Prints "greensched COMMAND: MESSAGE" on stderr and returns `code`.
inline int fail(const std::string& message, int code = kExitInput) {
  const std::string& command = command_name();
  fmt::print(stderr, "greensched{}{}: {}\n", command.empty() ? "" : " ", command, message);
  return code;
}

inline int fail(const Status& status) {
  return fail(status.message(), exit_code(status.code()));
}

template <typename T>
int fail(const Result<T>& result) {
  return fail(result.status());
}

}  // namespace greensched::app
