#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace greensched::app {

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) == 1;
}

ProgressBar::ProgressBar(bool enabled) : enabled_(enabled) {}

ProgressBar::~ProgressBar() {
  if (drawn_) fmt::print(stderr, "\n");
}

void ProgressBar::update(std::size_t done, std::size_t total, std::string_view label) {
  if (!enabled_ || total == 0) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  fmt::print(stderr, "\r[{:=<{}}{:<{}}] {}/{} {:<32}", "", filled, "", kWidth - filled, done, total,
             label);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace greensched::app
