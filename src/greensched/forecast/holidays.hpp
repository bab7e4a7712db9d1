// Public holidays by zone: the calendar features of the learned forecasts (features.hpp). A
// day off moves demand, and with it prices and a grid's mix; the seasonal-naive forecast reads
// yesterday, which misleads on a holiday and on the day after one. The table is built in from
// data/holidays.csv (zone,date,name; made by scripts/holiday-table.py from the `holidays`
// package), its zones named as the data folder names them, a date being the zone's local
// calendar day.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/forecast/series.hpp"

namespace greensched::forecast {

struct HolidayCalendar {
  // The years the table covers, [first_year, last_year]: those of its earliest and latest
  // date. Outside them no day is known either way.
  int first_year = 0, last_year = 0;
  // Per zone, its holidays as day numbers (days since 1970-01-01), sorted, each once.
  std::map<std::string, std::vector<int32_t>, std::less<>> zones;
};

// A table with a header naming columns zone and date (more columns are ignored); a date is
// YYYY-MM-DD; a zone and date twice is one holiday. Errors name `source` and the line.
Result<HolidayCalendar> parse_holidays(std::string_view csv, std::string source);

// data/holidays.csv as built in.
const HolidayCalendar& builtin_holidays();

// Gives `series` the holidays of `zone` (Series::holidays); false, leaving it without, where
// the calendar has no such zone.
bool attach_holidays(const HolidayCalendar& calendar, std::string_view zone, Series& series);

}  // namespace greensched::forecast
