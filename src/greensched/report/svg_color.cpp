// The colour palette and stable colours by name.
#include "greensched/report/svg_chart.hpp"

namespace greensched::report::svg {

const std::vector<std::string>& palette() {
  static const std::vector<std::string> colors = {
      "#4e79a7",  // 0 blue
      "#f28e2b",  // 1 orange
      "#e15759",  // 2 red
      "#59a14f",  // 3 green
      "#76b7b2",  // 4 teal
      "#b07aa1",  // 5 purple
      "#9c755f",  // 6 brown
      "#7f7f7f",  // 7 grey
      "#c9a400",  // 8 gold
      "#d37295",  // 9 pink
      "#1a9fb0",  // 10 cyan
      "#2f4b7c",  // 11 navy
      "#6b8e23",  // 12 olive
      "#8b0000",  // 13 dark red
      "#b6992d",  // 14 ochre
      "#444444",  // 15 dark grey
  };
  return colors;
}

const std::string& ColorMap::color(const std::string& name) {
  if (auto it = assigned_.find(name); it != assigned_.end()) return it->second;
  static const std::map<std::string, std::size_t> known = {
      // single-cluster policies
      {"bestfit", 0},
      {"pwr:200+fgd:800", 1},
      {"fgd", 2},
      {"pwr", 3},
      {"packing", 4},
      {"clustering", 5},
      {"dotprod", 6},
      {"random", 7},
      // dispatch agents
      {"lowest-carbon-now", 0},
      {"carbon-forecast", 1},
      {"green", 3},
      {"least-loaded", 5},
      {"round-robin", 9},
      {"local", 7},
      {"carbon-forecast (oracle)", 13},
      {"green (oracle)", 10},
  };
  const auto& colors = palette();
  if (used_.empty()) used_.assign(colors.size(), false);
  std::size_t index = colors.size();
  if (auto it = known.find(name); it != known.end() && !used_[it->second]) index = it->second;
  if (index == colors.size()) {
    for (std::size_t i = 0; i < colors.size(); ++i) {
      if (!used_[i]) {
        index = i;
        break;
      }
    }
  }
  if (index == colors.size()) index = assigned_.size() % colors.size();  // more names than colours
  used_[index] = true;
  return assigned_.emplace(name, colors[index]).first->second;
}

}  // namespace greensched::report::svg
