#include "greensched/forecast/holidays.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "greensched/core/utc_time.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::forecast {

extern const char kBuiltinHolidaysCsv[];

Result<HolidayCalendar> parse_holidays(std::string_view csv, std::string source) {
  trace::CsvReader reader(csv, std::move(source));
  reader.allow_quotes();
  if (Status s = reader.read_header(); !s.ok()) return s.error();
  const auto zone_col = reader.column("zone"), date_col = reader.column("date");
  if (!zone_col || !date_col) return reader.error("the header must name columns zone and date");
  HolidayCalendar c;
  c.first_year = 1 << 30;
  c.last_year = -(1 << 30);
  while (reader.next()) {
    if (Status s = reader.row_status(); !s.ok()) return s.error();
    const auto& f = reader.fields();
    if (f.size() <= std::max(*zone_col, *date_col)) {
      return reader.error(
          fmt::format("{} fields, the header names {}", f.size(), reader.header().size()));
    }
    const std::string_view zone = f[*zone_col], date = f[*date_col];
    if (zone.empty()) return reader.error("empty zone");
    auto t = date.size() == 10 && date[4] == '-' && date[7] == '-'
                 ? parse_utc_time(date)
                 : Result<int64_t>(Error{"expected YYYY-MM-DD"});
    if (!t.ok()) return reader.error(fmt::format("date '{}': {}", date, t.error()));
    const int year = std::atoi(std::string(date.substr(0, 4)).c_str());
    c.first_year = std::min(c.first_year, year);
    c.last_year = std::max(c.last_year, year);
    c.zones[std::string(zone)].push_back(static_cast<int32_t>(floor_div(t.value(), kDayS)));
  }
  if (c.zones.empty()) return Error{fmt::format("{}: no holidays", reader.source())};
  for (auto& [zone, days] : c.zones) {
    std::sort(days.begin(), days.end());
    days.erase(std::unique(days.begin(), days.end()), days.end());
  }
  return c;
}

const HolidayCalendar& builtin_holidays() {
  static const HolidayCalendar calendar = [] {
    auto c = parse_holidays(kBuiltinHolidaysCsv, "built-in data/holidays.csv");
    // The build's own table: a test parses it; an error here is a broken build.
    if (!c.ok()) std::abort();
    return std::move(c.value());
  }();
  return calendar;
}

bool attach_holidays(const HolidayCalendar& calendar, std::string_view zone, Series& series) {
  const auto it = calendar.zones.find(zone);
  if (it == calendar.zones.end()) return false;
  series.holidays = it->second;
  // Days since 1970-01-01 of 1 January of the first year, and of the year after the last.
  const auto jan1 = [](int year) {
    using namespace std::chrono;
    return static_cast<int32_t>(
        sys_days{std::chrono::year{year} / January / 1}.time_since_epoch().count());
  };
  series.holidays_from_day = jan1(calendar.first_year);
  series.holidays_to_day = jan1(calendar.last_year + 1);
  return true;
}

}  // namespace greensched::forecast
