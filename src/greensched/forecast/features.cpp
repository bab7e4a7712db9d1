#include "greensched/forecast/features.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "greensched/core/utc_time.hpp"

namespace greensched::forecast {
namespace {

double mean_of(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double sum = 0;
  for (std::size_t j = from; j < to; ++j) sum += v[j];
  return sum / static_cast<double>(to - from);
}

// 1 when local day `day` is one of the series' holidays, 0 when not, NaN outside its calendar.
double holiday(const Series& s, int64_t day) {
  if (day < s.holidays_from_day || day >= s.holidays_to_day) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return std::binary_search(s.holidays.begin(), s.holidays.end(), static_cast<int32_t>(day)) ? 1.0
                                                                                             : 0.0;
}

}  // namespace

std::array<std::string, kBaseFeatures> base_feature_names() {
  return {"horizon_h",    "hour_local", "dow_local", "last",     "lag2",
          "lag24",        "mean24",     "std24",     "day_back", "day_back2",
          "week_back",    "same_hour7", "mean168",   "trend24",  "sd168",
          "naive_err168", "anomaly6",   "zone",      "holiday",  "day_back_holiday"};
}

double scale_at(const Series& s, std::size_t known) {
  const std::size_t from = known >= 168 ? known - 168 : 0;
  if (known == 0) return 1.0;
  double sum = 0;
  for (std::size_t j = from; j < known; ++j) sum += std::abs(s.values[j]);
  const double m = sum / static_cast<double>(known - from);
  return m < 1e-9 ? 1.0 : m;
}

void append_row(const Series& s, const Exogenous* exog, std::size_t known, int h, double scale,
                double zone_code, std::vector<float>& row) {
  assert(known >= kMinHistoryH && h >= 1 && h <= kMaxHorizonH);
  const std::vector<double>& v = s.values;
  const std::size_t i = target_index(known, h);
  const auto at = [&](std::size_t j) { return v[j] / scale; };
  const auto push = [&](double x) { row.push_back(static_cast<float>(x)); };

  const int64_t local = s.time_of(i) + s.utc_offset_s;
  const int64_t day = floor_div(local, kDayS);
  push(h);
  push(static_cast<double>(floor_mod(local, kDayS) / kHourS));
  push(static_cast<double>(floor_mod(day + 3, 7)));  // 1970-01-01 was a Thursday
  push(at(known - 1));
  push(at(known - 2));
  push(at(known - 24));
  const double m24 = mean_of(v, known - 24, known);
  double var = 0;
  for (std::size_t j = known - 24; j < known; ++j) var += (v[j] - m24) * (v[j] - m24);
  push(m24 / scale);
  push(std::sqrt(var / 24.0) / scale);
  const std::size_t d = static_cast<std::size_t>((h - 1) / 24 + 1);
  push(at(i - 24 * d));
  push(at(i - 24 * (d + 1)));
  push(at(i - 168));
  double same = 0;
  for (std::size_t k = 0; k < 7; ++k) same += v[i - 24 * (d + k)];
  push(same / 7.0 / scale);
  const double m168 = mean_of(v, known - 168, known);
  push(m168 / scale);
  push((m24 - mean_of(v, known - 48, known - 24)) / scale);
  double var168 = 0, naive_err = 0;
  for (std::size_t j = known - 168; j < known; ++j) {
    var168 += (v[j] - m168) * (v[j] - m168);
    naive_err += std::abs(v[j] - v[j - 24]);
  }
  push(std::sqrt(var168 / 168.0) / scale);
  push(naive_err / 168.0 / scale);
  push((mean_of(v, known - 6, known) - mean_of(v, known - 30, known - 24)) / scale);
  push(zone_code);
  push(holiday(s, day));
  push(holiday(s, day - static_cast<int64_t>(d)));
  if (exog != nullptr) {
    for (const auto& col : exog->columns) {
      const bool seen = h <= exog->lead_h && i < col.size();
      push(seen ? col[i] : std::numeric_limits<double>::quiet_NaN());
    }
  }
}

}  // namespace greensched::forecast
