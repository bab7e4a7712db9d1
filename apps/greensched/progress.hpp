// A one-line progress bar on stderr, drawn only when stderr is a terminal.
#pragma once

#include <cstddef>
#include <string_view>

namespace greensched::app {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();
  void update(std::size_t done, std::size_t total, std::string_view label);

 private:
  bool enabled_;
  bool drawn_ = false;
};

bool stderr_is_terminal();

}  // namespace greensched::app
