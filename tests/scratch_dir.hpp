// A fresh directory for one test's files, removed when the test ends. Its name holds the
// process id and the test's name, because ctest runs the tests of one binary in parallel.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace greensched::testing {

class ScratchDir {
 public:
  // Creates (emptied) <tmp>/greensched-<pid>-<suite>-<test><suffix>.
  explicit ScratchDir(std::string_view suffix = "") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("greensched-{}-{}-{}{}", ::getpid(), info->test_suite_name(), info->name(),
                        suffix);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& dir() const { return path_; }
  std::string path() const { return path_.string(); }
  // The path of `name` inside the directory (not created).
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `content` to `name` (parent directories created); returns its path.
  std::string write(const std::string& name, std::string_view content) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace greensched::testing
