// An hourly signal on a fixed UTC grid: value i holds for [start_s + i * step_s, + step_s).
// The energy readers (prices, weather) and the controllers share it so that hour i of one
// series lines up with hour i of another by arithmetic, not by searching.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace greensched::energy {

inline constexpr int64_t kSecondsPerHour = 3600;

struct HourlySeries {
  int64_t start_s = 0;  // UTC epoch seconds of the first hour
  int64_t step_s = kSecondsPerHour;
  std::vector<double> values;

  std::size_t size() const { return values.size(); }
  int64_t end_s() const { return start_s + step_s * static_cast<int64_t>(values.size()); }
  // The value in force at UTC time t, or nullopt outside [start_s, end_s).
  std::optional<double> at(int64_t t) const;
};

}  // namespace greensched::energy
