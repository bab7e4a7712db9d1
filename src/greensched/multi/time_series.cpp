#include "greensched/multi/time_series.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <numbers>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "greensched/core/rng.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::multi {

namespace {

constexpr int64_t kDay = 86400;

// Floor division and modulo for b > 0.
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && (a < 0)) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  return a - floor_div(a, b) * b;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = floor_div(y, 400);
  const auto yoe = static_cast<unsigned>(y - era * 400);                 // [0, 399]
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct CivilDate {
  int64_t year = 1970;
  unsigned month = 1;
  unsigned day = 1;
};

CivilDate civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = floor_div(z, 146097);
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  CivilDate out;
  out.day = doy - (153 * mp + 2) / 5 + 1;
  out.month = mp < 10 ? mp + 3 : mp - 9;
  out.year = static_cast<int64_t>(yoe) + era * 400 + (out.month <= 2 ? 1 : 0);
  return out;
}

bool is_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned days_in_month(int64_t y, unsigned m) {
  static constexpr unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// `n` ASCII digits at text[pos], or nullopt.
std::optional<unsigned> digits(std::string_view text, std::size_t pos, std::size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  unsigned v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return v;
}

// Strict decimal: the whole field, finite.
std::optional<double> parse_double(std::string_view field) {
  if (field.empty()) return std::nullopt;
  double value = 0;
  const char* last = field.data() + field.size();
  auto [ptr, ec] = std::from_chars(field.data(), last, value);
  if (ec != std::errc() || ptr != last || !std::isfinite(value)) return std::nullopt;
  return value;
}

struct Sample {
  int64_t t = 0;
  double value = 0;
  std::size_t line = 0;
};

// Times beyond about ±34,000 years are refused, so that differences and sums of times never
// overflow; a resampled series is at most a century of hourly steps, so that a few far-apart
// rows cannot ask for gigabytes.
constexpr int64_t kMaxAbsTimeS = int64_t{1} << 40;
constexpr int64_t kMaxSeriesSteps = int64_t{100} * 366 * 24;

// Reads the time and value fields of the current row, checks them and appends the sample.
Status add_sample(const trace::CsvReader& reader, std::size_t time_col, std::size_t value_col,
                  std::string_view what, std::vector<Sample>& out) {
  const auto& f = reader.fields();
  if (f.size() != reader.header().size()) {
    return reader.error(fmt::format("expected {} fields (as in the header), found {}",
                                    reader.header().size(), f.size()));
  }
  auto t = parse_utc_time(f[time_col]);
  if (!t.ok()) return reader.error(t.error());
  if (t.value() > kMaxAbsTimeS || t.value() < -kMaxAbsTimeS) {
    return reader.error(fmt::format("time '{}' is out of range", f[time_col]));
  }
  const auto v = parse_double(f[value_col]);
  if (!v) {
    return reader.error(
        fmt::format("{} '{}' is not a number (expected a decimal >= 0)", what, f[value_col]));
  }
  if (*v < 0) return reader.error(fmt::format("{} {} is negative", what, f[value_col]));
  if (!out.empty() && t.value() <= out.back().t) {
    return reader.error(fmt::format(
        "time {} is not after the previous row's {} (rows must be in strictly increasing time)",
        format_utc_time(t.value()), format_utc_time(out.back().t)));
  }
  Sample s;
  s.t = t.value();
  s.value = *v;
  s.line = reader.line_number();
  out.push_back(s);
  return Status::Ok();
}

// Resamples irregular samples to a regular step by time-weighted means.
//  - Sample i holds from its time until the next sample's time, but for at most
//    hold_cap = max(step_s, median input step): a longer interval is a hole in the data.
//  - The last sample holds for the median input step (step_s when there is a single sample).
//  - Output k covers [start + k * step_s, start + (k + 1) * step_s), start = the first time
//    floored to step_s; its value is the time-weighted mean of the inputs over the covered
//    part of it. An output step with no coverage at all is an error naming the hole.
Result<TimeSeries> resample(const trace::CsvReader& reader, const std::vector<Sample>& samples,
                            int64_t step_s) {
  const std::string& path = reader.source();
  if (step_s <= 0) return Error{fmt::format("{}: resampling step {} s is not > 0", path, step_s)};
  if (samples.empty()) return reader.error("no data rows after the header");

  int64_t median = step_s;
  if (samples.size() > 1) {
    std::vector<int64_t> diffs;
    diffs.reserve(samples.size() - 1);
    for (std::size_t i = 1; i < samples.size(); ++i) {
      diffs.push_back(samples[i].t - samples[i - 1].t);
    }
    const std::size_t mid = diffs.size() / 2;
    std::nth_element(diffs.begin(), diffs.begin() + static_cast<std::ptrdiff_t>(mid), diffs.end());
    median = diffs[mid];
  }
  const int64_t hold_cap = std::max(step_s, median);

  const int64_t start = floor_div(samples.front().t, step_s) * step_s;
  const int64_t end = samples.back().t + median;
  const int64_t steps = floor_div(end - start + step_s - 1, step_s);
  if (steps > kMaxSeriesSteps) {
    return Error{fmt::format("{}: the rows span {} steps of {} s; at most {} are supported", path,
                             steps, step_s, kMaxSeriesSteps)};
  }
  const auto n = static_cast<std::size_t>(steps);
  std::vector<double> weighted(n, 0.0);
  std::vector<int64_t> covered(n, 0);
  std::vector<int> pieces(n, 0);
  std::vector<double> last_value(n, 0.0);

  for (std::size_t i = 0; i < samples.size(); ++i) {
    int64_t a = samples[i].t;
    const int64_t b =
        i + 1 < samples.size() ? std::min(samples[i + 1].t, a + hold_cap) : a + median;
    while (a < b) {
      const auto k = static_cast<std::size_t>(floor_div(a - start, step_s));
      const int64_t seg_end = std::min(b, start + (static_cast<int64_t>(k) + 1) * step_s);
      weighted[k] += samples[i].value * static_cast<double>(seg_end - a);
      covered[k] += seg_end - a;
      ++pieces[k];
      last_value[k] = samples[i].value;
      a = seg_end;
    }
  }

  std::vector<double> values(n);
  for (std::size_t k = 0; k < n; ++k) {
    if (covered[k] == 0) {
      const int64_t step_start = start + static_cast<int64_t>(k) * step_s;
      // The hole is between the last sample before this step and the first one after it.
      const auto next = std::upper_bound(samples.begin(), samples.end(), step_start,
                                         [](int64_t t, const Sample& s) { return t < s.t; });
      assert(next != samples.begin() && next != samples.end());
      const Sample& before = *(next - 1);
      return Error{fmt::format(
          "{}:{}: no data between {} and {} (a gap of {} s; a sample holds for at most {} s)", path,
          next->line, format_utc_time(before.t), format_utc_time(next->t), next->t - before.t,
          hold_cap)};
    }
    // A step filled by one sample keeps its value exactly.
    values[k] = pieces[k] == 1 ? last_value[k] : weighted[k] / static_cast<double>(covered[k]);
  }
  return TimeSeries(start, step_s, std::move(values));
}

Result<trace::CsvReader> open_csv(std::string_view text, const std::string& source) {
  trace::CsvReader reader(text, source);
  if (Status st = reader.read_header(); !st.ok()) return st.error();
  return reader;
}

// Reads the file at `path` and hands its text to `parse`.
template <typename Parse>
Result<TimeSeries> with_file(const std::string& path, Parse parse) {
  auto text = trace::read_file(path);
  if (!text.ok()) return text.status().error();
  return parse(std::string_view(text.value()));
}

std::string quoted_header(const trace::CsvReader& reader) {
  std::string out;
  for (const auto& h : reader.header()) {
    if (!out.empty()) out += ", ";
    out += "'" + h + "'";
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// TimeSeries

TimeSeries::TimeSeries(int64_t start_s, int64_t step_s, std::vector<double> values)
    : start_s_(start_s), step_s_(step_s), values_(std::move(values)) {
  assert(step_s_ > 0);
  for (double v : values_) cycle_total_ += v;
}

int64_t TimeSeries::index_of(int64_t t) const {
  return floor_div(t - start_s_, step_s_);
}

double TimeSeries::at(int64_t t) const {
  if (values_.empty()) return 0;
  const auto n = static_cast<int64_t>(values_.size());
  return values_[static_cast<std::size_t>(floor_mod(index_of(t), n))];
}

double TimeSeries::integral(int64_t from, int64_t to) const {
  if (to <= from || values_.empty()) return 0;
  const auto n = static_cast<int64_t>(values_.size());
  const auto value = [&](int64_t i) { return values_[static_cast<std::size_t>(floor_mod(i, n))]; };
  const int64_t i0 = index_of(from);
  const int64_t i1 = index_of(to);  // the sample holding `to` (contributes to - its start)
  if (i0 == i1) return value(i0) * static_cast<double>(to - from);

  const double head = value(i0) * static_cast<double>(start_s_ + (i0 + 1) * step_s_ - from);
  const double tail = value(i1) * static_cast<double>(to - (start_s_ + i1 * step_s_));
  // Whole samples i0 + 1 .. i1 - 1: whole cycles by the cycle total, then the remainder.
  const int64_t middle = i1 - i0 - 1;
  double sum = static_cast<double>(middle / n) * cycle_total_;
  const int64_t rest = middle % n;
  auto j = static_cast<std::size_t>(floor_mod(i0 + 1, n));
  for (int64_t k = 0; k < rest; ++k) {
    sum += values_[j];
    if (++j == values_.size()) j = 0;
  }
  return head + sum * static_cast<double>(step_s_) + tail;
}

double TimeSeries::mean(int64_t from, int64_t to) const {
  if (to <= from || index_of(from) == index_of(to - 1)) return at(from);
  return integral(from, to) / static_cast<double>(to - from);
}

// ---------------------------------------------------------------------------------------------
// Times

Result<int64_t> parse_utc_time(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Error{
        fmt::format("bad time '{}': {} (expected YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], "
                    "YYYY-MM-DDTHH:MM[:SS][Z] or integer epoch seconds)",
                    text, why)};
  };
  if (text.empty()) return bad("empty");
  // Plain integer: epoch seconds.
  const std::string_view unsigned_part = text.front() == '-' ? text.substr(1) : text;
  if (!unsigned_part.empty() &&
      unsigned_part.find_first_not_of("0123456789") == std::string_view::npos) {
    if (auto v = trace::parse_int(text)) return *v;
    return bad("not an integer");
  }
  const auto year = digits(text, 0, 4);
  const auto month = digits(text, 5, 2);
  const auto day = digits(text, 8, 2);
  if (!year || !month || !day || text[4] != '-' || text[7] != '-') {
    return bad("not a date");
  }
  if (*month < 1 || *month > 12) return bad("month out of range");
  if (*day < 1 || *day > days_in_month(*year, *month)) return bad("day out of range");
  int64_t secs = days_from_civil(*year, *month, *day) * kDay;
  if (text.size() == 10) return secs;

  if (text[10] != ' ' && text[10] != 'T') return bad("expected ' ' or 'T' after the date");
  std::string_view rest = text.substr(11);
  if (!rest.empty() && rest.back() == 'Z') {
    if (text[10] != 'T') return bad("'Z' needs the 'T' separator");
    rest.remove_suffix(1);
  }
  if (rest.size() != 5 && rest.size() != 8) return bad("expected HH:MM or HH:MM:SS");
  const auto hour = digits(rest, 0, 2);
  const auto minute = digits(rest, 3, 2);
  if (!hour || !minute || rest[2] != ':') return bad("expected HH:MM or HH:MM:SS");
  unsigned second = 0;
  if (rest.size() == 8) {
    const auto s = digits(rest, 6, 2);
    if (!s || rest[5] != ':') return bad("expected HH:MM:SS");
    second = *s;
  }
  if (*hour > 23 || *minute > 59 || second > 59) return bad("time of day out of range");
  secs += static_cast<int64_t>(*hour) * 3600 + static_cast<int64_t>(*minute) * 60 + second;
  return secs;
}

std::string format_utc_time(int64_t epoch_s) {
  const int64_t days = floor_div(epoch_s, kDay);
  const int64_t sod = epoch_s - days * kDay;
  const CivilDate d = civil_from_days(days);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", d.year, d.month, d.day, sod / 3600,
                     sod / 60 % 60, sod % 60);
}

// ---------------------------------------------------------------------------------------------
// Readers

Result<TimeSeries> parse_emaps_csv(std::string_view text, const std::string& path,
                                   const std::string& column, int64_t step_s) {
  std::string_view tag;
  if (column.empty() || column == "direct") {
    tag = "(direct)";
  } else if (column == "lca") {
    tag = "(LCA)";
  } else {
    return Error{fmt::format(
        "{}: unknown carbon-intensity column '{}' (expected \"direct\" or \"lca\")", path, column)};
  }
  auto opened = open_csv(text, path);
  if (!opened.ok()) return Error{opened.error()};
  trace::CsvReader& reader = opened.value();

  const auto time_col = reader.column("Datetime (UTC)");
  if (!time_col) {
    return reader.error(
        fmt::format("missing column 'Datetime (UTC)' (header has {})", quoted_header(reader)));
  }
  std::optional<std::size_t> ci_col;
  for (std::size_t i = 0; i < reader.header().size(); ++i) {
    const std::string& h = reader.header()[i];
    if (h.starts_with("Carbon Intensity") && h.find(tag) != std::string::npos) {
      if (ci_col) {
        return reader.error(fmt::format("two carbon-intensity columns marked {}: '{}' and '{}'",
                                        tag, reader.header()[*ci_col], h));
      }
      ci_col = i;
    }
  }
  if (!ci_col) {
    return reader.error(
        fmt::format("missing column 'Carbon Intensity gCO\u2082eq/kWh {}' (header has {})", tag,
                    quoted_header(reader)));
  }
  std::vector<Sample> samples;
  while (reader.next()) {
    auto st = add_sample(reader, *time_col, *ci_col, "carbon intensity", samples);
    if (!st.ok()) return Error{st.message()};
  }
  return resample(reader, samples, step_s);
}

Result<TimeSeries> parse_lwa_csv(std::string_view text, const std::string& path, int64_t step_s) {
  auto opened = open_csv(text, path);
  if (!opened.ok()) return Error{opened.error()};
  trace::CsvReader& reader = opened.value();
  const auto time_col = reader.column("Time");
  const auto ci_col = reader.column("Carbon Intensity");
  if (!time_col || !ci_col) {
    return reader.error(fmt::format("missing column '{}' (expected header Time,Carbon Intensity)",
                                    !time_col ? "Time" : "Carbon Intensity"));
  }
  std::vector<Sample> samples;
  while (reader.next()) {
    auto st = add_sample(reader, *time_col, *ci_col, "carbon intensity", samples);
    if (!st.ok()) return Error{st.message()};
  }
  return resample(reader, samples, step_s);
}

Result<TimeSeries> parse_plain_csv(std::string_view text, const std::string& path, int64_t step_s) {
  auto opened = open_csv(text, path);
  if (!opened.ok()) return Error{opened.error()};
  trace::CsvReader& reader = opened.value();
  if (reader.header().size() != 2) {
    return reader.error(fmt::format("expected a header of 2 columns (time,value), found {}",
                                    reader.header().size()));
  }
  std::vector<Sample> samples;
  while (reader.next()) {
    auto st = add_sample(reader, 0, 1, "value", samples);
    if (!st.ok()) return Error{st.message()};
  }
  return resample(reader, samples, step_s);
}

Result<TimeSeries> read_emaps_csv(const std::string& path, const std::string& column,
                                  int64_t step_s) {
  return with_file(
      path, [&](std::string_view text) { return parse_emaps_csv(text, path, column, step_s); });
}

Result<TimeSeries> read_lwa_csv(const std::string& path, int64_t step_s) {
  return with_file(path, [&](std::string_view text) { return parse_lwa_csv(text, path, step_s); });
}

Result<TimeSeries> read_plain_csv(const std::string& path, int64_t step_s) {
  return with_file(path,
                   [&](std::string_view text) { return parse_plain_csv(text, path, step_s); });
}

Result<TimeSeries> parse_series_text(std::string_view text, const std::string& path,
                                     const std::string& format, const std::string& column,
                                     int64_t step_s) {
  if (format == "emaps") return parse_emaps_csv(text, path, column, step_s);
  if (format == "lwa" || format == "plain") {
    if (!column.empty()) {
      return Error{
          fmt::format("{}: format '{}' has no column choice (got '{}')", path, format, column)};
    }
    return format == "lwa" ? parse_lwa_csv(text, path, step_s)
                           : parse_plain_csv(text, path, step_s);
  }
  return Error{
      fmt::format("{}: unknown series format '{}' (expected emaps, lwa or plain)", path, format)};
}

Result<TimeSeries> read_series(const std::string& path, const std::string& format,
                               const std::string& column, int64_t step_s) {
  // An unknown format is reported before the file is touched, as before.
  if (format != "emaps" && format != "lwa" && format != "plain") {
    return parse_series_text({}, path, format, column, step_s);
  }
  return with_file(path, [&](std::string_view text) {
    return parse_series_text(text, path, format, column, step_s);
  });
}

// ---------------------------------------------------------------------------------------------
// Synthetic carbon

TimeSeries synthetic_carbon(const SyntheticCarbon& shape, int64_t start_s, int days) {
  const int hours = std::max(days, 0) * 24;
  constexpr double kPi = std::numbers::pi;
  // Solar bump: sin over local 06:00-18:00, peak at noon; its daily mean is 1/pi, so the base
  // is raised by 1 / (1 - dip / pi) to keep the time-average at mean_g_per_kwh.
  const auto daylight_bump = [&](double local_hour) {
    if (local_hour <= 6.0 || local_hour >= 18.0) return 0.0;
    return std::sin(kPi * (local_hour - 6.0) / 12.0);
  };
  const double base = shape.mean_g_per_kwh / std::max(1e-9, 1.0 - shape.solar_dip / kPi);

  // Weather: a mean-reverting (AR(1)) latent on knots every 6 h with a 2-day correlation time,
  // squashed into [-1, 1] by tanh and cosine-interpolated to hours.
  constexpr int kKnotHours = 6;
  const double phi = std::exp(-static_cast<double>(kKnotHours) / 48.0);
  const double innovation = std::sqrt(1.0 - phi * phi);
  Rng rng(shape.seed);
  const auto gaussian = [&] {  // Irwin-Hall: mean 0, variance 1
    double s = 0;
    for (int i = 0; i < 12; ++i) s += rng.uniform_real();
    return s - 6.0;
  };
  std::vector<double> knots(static_cast<std::size_t>(hours / kKnotHours + 2));
  double z = gaussian();
  for (double& k : knots) {
    k = std::tanh(0.9 * z);
    z = phi * z + innovation * gaussian();
  }

  std::vector<double> values(static_cast<std::size_t>(hours));
  for (int h = 0; h < hours; ++h) {
    const int64_t t = start_s + static_cast<int64_t>(h) * 3600;
    const int64_t local = t + static_cast<int64_t>(shape.utc_offset_hours) * 3600;
    const double local_hour = static_cast<double>(floor_mod(local, kDay)) / 3600.0 + 0.5;
    // Weekly ripple: highest mid-week, lowest around the weekend (1970-01-01 was a Thursday,
    // so Wednesday noon is 6.5 days after the epoch, modulo a week).
    const double week_pos =
        static_cast<double>(floor_mod(local - (6 * kDay + kDay / 2), 7 * kDay)) /
        static_cast<double>(7 * kDay);
    const double weekly = 1.0 + 0.04 * std::cos(2.0 * kPi * week_pos);
    const std::size_t k = static_cast<std::size_t>(h / kKnotHours);
    const double frac = static_cast<double>(h % kKnotHours) / kKnotHours;
    const double w = 0.5 - 0.5 * std::cos(kPi * frac);
    const double weather = knots[k] * (1.0 - w) + knots[k + 1] * w;
    const double v = base * (1.0 - shape.solar_dip * daylight_bump(local_hour)) * weekly *
                     (1.0 + shape.wind_swing * weather);
    values[static_cast<std::size_t>(h)] = std::max(0.0, v);
  }
  return TimeSeries(start_s, 3600, std::move(values));
}

}  // namespace greensched::multi
