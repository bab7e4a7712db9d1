// Reading a Prometheus text exposition in tests: series ("name{labels}") -> value.
#pragma once

#include <map>
#include <string>

namespace greensched::testing {

inline std::map<std::string, double> parse_metrics(const std::string& text) {
  std::map<std::string, double> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

}  // namespace greensched::testing
