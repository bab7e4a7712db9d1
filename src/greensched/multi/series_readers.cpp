// The carbon and price series readers (Electricity Maps, Let's Wait Awhile, plain CSV) and the
// resampling to a regular step they share.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/multi/series_readers.hpp"
#include "greensched/multi/time_series.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::multi {
namespace {

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
  auto text = read_file(path);
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

}  // namespace greensched::multi
