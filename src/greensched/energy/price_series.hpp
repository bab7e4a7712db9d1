// Hourly wholesale electricity prices, 2023 (../shared/data/energy/prices2023/
// <ZONE>_electricity_prices_2023.csv; columns `Datetime (UTC)`, `Datetime (Local)`,
// `Price (USD/MWh)`). Read into USD/kWh on an hourly UTC grid; negative prices are real
// (surplus renewables) and kept.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "greensched/core/status.hpp"
#include "greensched/energy/hourly_series.hpp"

namespace greensched::energy {

struct PriceSeries {
  HourlySeries usd_per_kwh;  // start_s on the hour (UTC)
  // Some zones stamp each hour at a constant offset past it (IN-WE at :30). Rows are floored
  // to the hour they fall in, and the offset is kept here; it must be the same on every row.
  int64_t stamp_offset_s = 0;
};

// Rows must be consecutive hours (each exactly 3600 s after the previous: no gaps, no
// repeats, no steps back); `Datetime (UTC)` must be UTC (no offset, Z or +00:00). Errors are
// "path:line: reason" or "path: reason".
Result<PriceSeries> read_price_series(const std::string& path);
// The same from the file's text; errors name `path`.
Result<PriceSeries> parse_price_series(std::string_view text, const std::string& path);

// Until when (epoch second, exclusive) a day-ahead auction has published prices at epoch
// second `now`, for a zone whose local time is UTC + utc_offset_s: from 12:00 local time the
// whole next local day, before it the rest of today (as EPEX SPOT and Nord Pool publish).
int64_t day_ahead_published_until(int64_t now_utc_s, int64_t utc_offset_s);

// <data_dir>/energy/prices2023/<zone>_electricity_prices_2023.csv
std::string price_file(const std::string& data_dir, const std::string& zone);

}  // namespace greensched::energy
