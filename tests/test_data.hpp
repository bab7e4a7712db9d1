// Tests that need the public data read it from ../shared/data (never copied into the
// project). Where it is absent they skip with a clear message, except under CI=true where
// its absence is a failure.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace greensched::testing {

// $GREENSCHED_DATA (the variable the command line reads too), else the directory configured at
// build time. GREENSCHED_SHARED_DATA is the older name of the variable.
inline std::string shared_data_dir() {
  if (const char* env = std::getenv("GREENSCHED_DATA")) return env;
  if (const char* env = std::getenv("GREENSCHED_SHARED_DATA")) return env;
  return GREENSCHED_SHARED_DATA;
}

inline std::string openb_path(const std::string& file) {
  return shared_data_dir() + "/openb/" + file;
}

inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace greensched::testing

// Skips the test when the openb data is missing (fails under CI=true).
#define GREENSCHED_REQUIRE_OPENB()                                          \
  GREENSCHED_REQUIRE_SHARED_FILE(::greensched::testing::shared_data_dir() + \
                                 "/openb/openb_pod_list_default.csv")

// Skips the test when a file of the shared data is missing (fails under CI=true).
#define GREENSCHED_REQUIRE_SHARED_FILE(path)                                      \
  do {                                                                            \
    const std::string file__ = (path);                                            \
    if (!std::filesystem::exists(file__)) {                                       \
      if (::greensched::testing::running_in_ci()) {                               \
        FAIL() << "CI=true but the shared data file is missing: " << file__;      \
      }                                                                           \
      GTEST_SKIP() << "shared data file not found: " << file__                    \
                   << " (set GREENSCHED_DATA or place ../shared/data beside the " \
                      "checkout)";                                                \
    }                                                                             \
  } while (0)
