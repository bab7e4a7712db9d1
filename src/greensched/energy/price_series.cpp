#include "greensched/energy/price_series.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::energy {
namespace {

constexpr std::string_view kTimeColumn = "Datetime (UTC)";
constexpr std::string_view kPriceColumn = "Price (USD/MWh)";
constexpr double kKwhPerMwh = 1000.0;

// Strict decimal over the whole field, finite.
std::optional<double> parse_number(std::string_view field) {
  if (field.empty()) return std::nullopt;
  double value = 0;
  const char* last = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), last, value);
  if (ec != std::errc() || ptr != last || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A UTC column must carry no offset other than zero.
bool is_utc_stamp(std::string_view text) {
  if (text.ends_with("Z") || text.ends_with("+00:00")) return true;
  return text.size() <= 19;  // "YYYY-MM-DD HH:MM:SS" and shorter: no offset at all
}

}  // namespace

std::string price_file(const std::string& data_dir, const std::string& zone) {
  return fmt::format("{}/energy/prices2023/{}_electricity_prices_2023.csv", data_dir, zone);
}

Result<PriceSeries> read_price_series(const std::string& path) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  return parse_price_series(text.value(), path);
}

Result<PriceSeries> parse_price_series(std::string_view text, const std::string& path) {
  trace::CsvReader reader(text, path);
  if (auto st = reader.read_header(); !st.ok()) return Error{st.message()};
  const auto time_col = reader.column(kTimeColumn);
  const auto price_col = reader.column(kPriceColumn);
  if (!time_col || !price_col) {
    return Error{fmt::format("{}:1: header lacks column '{}' (expected columns '{}', '{}')", path,
                             !time_col ? kTimeColumn : kPriceColumn, kTimeColumn, kPriceColumn)};
  }
  const std::size_t columns = reader.header().size();

  PriceSeries out;
  std::vector<double>& values = out.usd_per_kwh.values;
  int64_t previous = 0;
  while (reader.next()) {
    const auto& f = reader.fields();
    if (f.size() != columns) {
      return reader.error(fmt::format("{} fields, the header has {}", f.size(), columns));
    }
    const std::string_view stamp = f[*time_col];
    if (!is_utc_stamp(stamp)) {
      return reader.error(
          fmt::format("{} '{}' is not UTC (expected no offset, Z or +00:00)", kTimeColumn, stamp));
    }
    const auto t = parse_offset_time(stamp);
    if (!t.ok()) return reader.error(fmt::format("{}: {}", kTimeColumn, t.error()));
    const auto price = parse_number(f[*price_col]);
    if (!price) {
      return reader.error(fmt::format("{} '{}' is not a number", kPriceColumn, f[*price_col]));
    }
    // Floor toward minus infinity so that stamps before 1970 floor the same way.
    const int64_t offset = ((t.value() % kSecondsPerHour) + kSecondsPerHour) % kSecondsPerHour;
    if (values.empty()) {
      out.stamp_offset_s = offset;
      out.usd_per_kwh.start_s = t.value() - offset;
    } else {
      if (offset != out.stamp_offset_s) {
        return reader.error(fmt::format(
            "time {} is {} s past the hour, the first row was {} s past (the offset must be "
            "constant)",
            format_utc_time(t.value()), offset, out.stamp_offset_s));
      }
      if (t.value() != previous + kSecondsPerHour) {
        return reader.error(fmt::format(
            "time {} is not one hour after the previous row's {} (rows must be consecutive "
            "hours)",
            format_utc_time(t.value()), format_utc_time(previous)));
      }
    }
    previous = t.value();
    values.push_back(*price / kKwhPerMwh);
  }
  if (values.empty()) return Error{fmt::format("{}: no data rows after the header", path)};
  return out;
}

int64_t day_ahead_published_until(int64_t now_utc_s, int64_t utc_offset_s) {
  constexpr int64_t kDay = 86400;
  const int64_t local = now_utc_s + utc_offset_s;
  const int64_t day_start = local - (((local % kDay) + kDay) % kDay);
  const bool published = local - day_start >= 12 * 3600;  // tomorrow's auction is out
  return day_start + (published ? 2 : 1) * kDay - utc_offset_s;
}

}  // namespace greensched::energy
