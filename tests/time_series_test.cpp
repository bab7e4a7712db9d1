// Tests of the multi-cluster signals: TimeSeries (cyclic lookup, exact integrals), UTC time
// parsing, the carbon-intensity readers (hand-written files with every error as file:line,
// and the real Electricity Maps and Let's Wait Awhile files), the forecasters (above all: a
// non-oracle forecast never depends on samples not yet complete) and the synthetic series.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "greensched/core/rng.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/multi/series_readers.hpp"
#include "greensched/multi/synthetic_carbon.hpp"
#include "greensched/multi/time_series.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 86400;
constexpr int64_t k2023 = 1672531200;  // 2023-01-01T00:00:00Z
constexpr int64_t k2020 = 1577836800;  // 2020-01-01T00:00:00Z

std::string carbon_dir() {
  return ::greensched::testing::shared_data_dir() + "/carbon";
}

// Skips when the carbon data is missing (fails under CI=true).
#define GREENSCHED_REQUIRE_CARBON() GREENSCHED_REQUIRE_SHARED_FILE(carbon_dir() + "/SOURCE.md")

// Brute force: the integral as a sum over every second.
double integral_by_seconds(const TimeSeries& s, int64_t from, int64_t to) {
  double sum = 0;
  for (int64_t t = from; t < to; ++t) sum += s.at(t);
  return sum;
}

// ---------------------------------------------------------------------------------------------
// TimeSeries

TEST(TimeSeries, AtIsCyclicOutsideTheSpan) {
  const TimeSeries s(1000, 10, {1, 2, 3, 4});
  EXPECT_EQ(s.end_s(), 1040);
  EXPECT_EQ(s.at(1000), 1);
  EXPECT_EQ(s.at(1009), 1);
  EXPECT_EQ(s.at(1010), 2);
  EXPECT_EQ(s.at(1039), 4);
  EXPECT_EQ(s.at(1040), 1);
  EXPECT_EQ(s.at(1055), 2);
  EXPECT_EQ(s.at(999), 4);
  EXPECT_EQ(s.at(990), 4);
  EXPECT_EQ(s.at(989), 3);
  EXPECT_EQ(s.at(1000 - 40 * 1000 + 25), 3);
  EXPECT_EQ(s.at(1000 + 40 * 1000 + 35), 4);
  EXPECT_EQ(s.index_of(1000), 0);
  EXPECT_EQ(s.index_of(1039), 3);
  EXPECT_EQ(s.index_of(1040), 4);
  EXPECT_EQ(s.index_of(999), -1);
  EXPECT_EQ(s.index_of(990), -1);
  EXPECT_EQ(s.index_of(989), -2);
}

// The data before t: everything since the start (the span and the repetitions after it, which
// a replay goes through); before the start, only the repetition holding t's own earlier part.
TEST(TimeSeries, HistoryIsTheDataBeforeTime) {
  const TimeSeries s(1000, 10, {1, 2, 3, 4});
  EXPECT_EQ(s.history_s(1000), 0);
  EXPECT_EQ(s.history_s(1025), 25);
  EXPECT_EQ(s.history_s(1040), 40);
  EXPECT_EQ(s.history_s(1095), 95);
  EXPECT_EQ(s.history_s(999), 39);  // the repetition [960, 1000) holds 999
  EXPECT_EQ(s.history_s(960), 0);
  EXPECT_EQ(s.history_s(975), 15);
  EXPECT_EQ(TimeSeries().history_s(5000), 0);
}

TEST(TimeSeries, NegativeStartTimes) {
  const TimeSeries s(-100, 30, {5, 6});
  EXPECT_EQ(s.at(-100), 5);
  EXPECT_EQ(s.at(-71), 5);
  EXPECT_EQ(s.at(-70), 6);
  EXPECT_EQ(s.at(-41), 6);
  EXPECT_EQ(s.at(-40), 5);
  EXPECT_EQ(s.at(-101), 6);
  EXPECT_EQ(s.index_of(-101), -1);
  EXPECT_DOUBLE_EQ(s.integral(-110, -60), 6 * 10 + 5 * 30 + 6 * 10);
}

TEST(TimeSeries, IntegralAcrossSampleBoundaries) {
  const TimeSeries s(1000, 10, {1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.integral(1005, 1025), 1 * 5 + 2 * 10 + 3 * 5);  // 40
  EXPECT_DOUBLE_EQ(s.integral(1000, 1040), 100);
  EXPECT_DOUBLE_EQ(s.integral(1010, 1020), 20);
  EXPECT_DOUBLE_EQ(s.integral(1012, 1018), 12);
  EXPECT_DOUBLE_EQ(s.integral(1019, 1021), 2 + 3);
  EXPECT_DOUBLE_EQ(s.integral(1020, 1020), 0);
  EXPECT_DOUBLE_EQ(s.integral(1030, 1020), 0);
  EXPECT_DOUBLE_EQ(s.mean(1005, 1025), 2);
  EXPECT_DOUBLE_EQ(s.mean(1000, 1040), 2.5);
}

TEST(TimeSeries, IntegralWrapsAround) {
  const TimeSeries s(1000, 10, {1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.integral(1035, 1045), 4 * 5 + 1 * 5);
  EXPECT_DOUBLE_EQ(s.integral(995, 1005), 4 * 5 + 1 * 5);
  EXPECT_DOUBLE_EQ(s.integral(1035, 1065), 4 * 5 + 1 * 10 + 2 * 10 + 3 * 5);
  EXPECT_DOUBLE_EQ(s.integral(955, 975), 4 * 5 + 1 * 10 + 2 * 5);  // 955 = 995 - one cycle
  EXPECT_DOUBLE_EQ(s.mean(1035, 1045), 2.5);
}

TEST(TimeSeries, LongSpansUseWholeCycles) {
  const TimeSeries s(1000, 10, {1, 2, 3, 4});
  // 1000 whole cycles (100 each), then 10 s of 1 and 5 s of 2.
  EXPECT_DOUBLE_EQ(s.integral(1000, 1000 + 40 * 1000 + 15), 100000 + 10 + 10);
  // From the middle of sample 2, across 250 cycles and a bit.
  // From the middle of sample 2: 250 cycles from any phase, then [11025, 11045) = 3, 4, 1.
  EXPECT_DOUBLE_EQ(s.integral(1025, 1025 + 40 * 250 + 20), 250 * 100 + 3 * 5 + 4 * 10 + 1 * 5);
  EXPECT_DOUBLE_EQ(s.mean(1000, 1000 + 40 * 1000), 2.5);
  EXPECT_DOUBLE_EQ(s.mean(-40 * 5000 + 1000, 1000), 2.5);
}

TEST(TimeSeries, IntegralMatchesBruteForceOnRandomSpans) {
  Rng rng(7);
  std::vector<double> values(13);
  for (double& v : values) v = static_cast<double>(rng.uniform(1000));
  const TimeSeries s(-17, 7, values);
  for (int i = 0; i < 500; ++i) {
    const int64_t from = static_cast<int64_t>(rng.uniform(600)) - 300;
    const int64_t to = from + static_cast<int64_t>(rng.uniform(i < 450 ? 100 : 1000));
    // Integer values: both sums are exact.
    ASSERT_EQ(s.integral(from, to), integral_by_seconds(s, from, to)) << from << " " << to;
    if (to > from) {
      ASSERT_DOUBLE_EQ(s.mean(from, to), s.integral(from, to) / static_cast<double>(to - from));
    }
  }
}

TEST(TimeSeries, MeanWithinOneSampleIsTheSampleExactly) {
  const TimeSeries s(0, 3600, {0.1, 0.7, 1.0 / 3.0});
  EXPECT_EQ(s.mean(3601, 7199), 0.7);
  EXPECT_EQ(s.mean(7200, 10800), 1.0 / 3.0);
  EXPECT_EQ(s.mean(100, 100), 0.1);  // empty span: the value at `from`
  EXPECT_EQ(s.mean(200, 100), 0.1);
}

TEST(TimeSeries, EmptySeriesDoesNotCrash) {
  const TimeSeries empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.at(12345), 0);
  EXPECT_EQ(empty.integral(0, 1000), 0);
  EXPECT_EQ(empty.mean(0, 1000), 0);
  const TimeSeries no_values(0, 60, {});
  EXPECT_EQ(no_values.at(-5), 0);
  EXPECT_EQ(no_values.mean(0, 100), 0);
}

// ---------------------------------------------------------------------------------------------
// parse_utc_time

TEST(TimeSeries, ParseUtcTimeFormats) {
  const auto ok = [](std::string_view text) {
    auto r = parse_utc_time(text);
    EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error());
    return r.ok() ? r.value() : -999;
  };
  EXPECT_EQ(ok("2023-01-01"), k2023);
  EXPECT_EQ(ok("2023-01-01 00:00:00"), k2023);
  EXPECT_EQ(ok("2023-01-01 05:06"), k2023 + 5 * 3600 + 6 * 60);
  EXPECT_EQ(ok("2023-01-01 05:06:07"), 1672549567);
  EXPECT_EQ(ok("2023-01-01T05:06:07"), 1672549567);
  EXPECT_EQ(ok("2023-01-01T05:06:07Z"), 1672549567);
  EXPECT_EQ(ok("2023-01-01T05:06Z"), k2023 + 5 * 3600 + 6 * 60);
  EXPECT_EQ(ok("2020-01-01 00:00:00"), k2020);
  EXPECT_EQ(ok("1672531200"), k2023);
  EXPECT_EQ(ok("0"), 0);
  EXPECT_EQ(ok("-1"), -1);
  EXPECT_EQ(ok("1969-12-31 23:59:59"), -1);
  EXPECT_EQ(ok("1970-01-01"), 0);
  // Leap years: 2024 (divisible by 4), 2000 (by 400); 2100 is not one.
  EXPECT_EQ(ok("2024-02-29"), 1709164800);
  EXPECT_EQ(ok("2024-03-01") - ok("2024-02-28"), 2 * kDay);
  EXPECT_EQ(ok("2000-02-29"), 951782400);
  EXPECT_EQ(ok("2100-03-01"), 4107542400);
  EXPECT_EQ(ok("2100-03-01") - ok("2100-02-28"), kDay);
  EXPECT_EQ(ok("2023-12-31 23:00:00") - k2023, 8759 * kHour);
}

TEST(TimeSeries, ParseUtcTimeErrorsSayWhatWasExpected) {
  for (std::string_view bad : {"",
                               "abc",
                               "2023-1-01",
                               "2023/01/01",
                               "2023-13-01",
                               "2023-00-10",
                               "2023-02-29",
                               "1900-02-29",
                               "2023-04-31",
                               "2023-01-01 24:00",
                               "2023-01-01 12:60",
                               "2023-01-01 12:00:60",
                               "2023-01-01 12",
                               "2023-01-01X12:00",
                               "2023-01-01 05:00Z",
                               "2023-01-01T05:00:00ZZ",
                               "2023-01-01T05:00:00+01:00",
                               " 2023-01-01",
                               "2023-01-01 ",
                               "12-34",
                               "1.5e9"}) {
    auto r = parse_utc_time(bad);
    ASSERT_FALSE(r.ok()) << "accepted '" << bad << "'";
    EXPECT_NE(r.error().find("expected YYYY-MM-DD"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find(fmt::format("'{}'", bad)), std::string::npos) << r.error();
  }
}

TEST(TimeSeries, FormatUtcTimeRoundTrips) {
  EXPECT_EQ(format_utc_time(k2023), "2023-01-01 00:00:00");
  EXPECT_EQ(format_utc_time(-1), "1969-12-31 23:59:59");
  EXPECT_EQ(format_utc_time(1709164800 + 3661), "2024-02-29 01:01:01");
  Rng rng(3);
  for (int i = 0; i < 2000; ++i) {
    const int64_t t = static_cast<int64_t>(rng.uniform(uint64_t{8'000'000'000})) - 2'000'000'000;
    auto back = parse_utc_time(format_utc_time(t));
    ASSERT_TRUE(back.ok()) << format_utc_time(t);
    ASSERT_EQ(back.value(), t) << format_utc_time(t);
  }
}

// ---------------------------------------------------------------------------------------------
// Readers on hand-written files

class CarbonReader : public ::testing::Test {
 protected:
  std::string write(const std::string& name, std::string_view text) {
    return scratch_.write(name, text);
  }
  // Expects the reader to fail; the message must start with "path:line: ".
  template <typename Read>
  std::string error_at(const std::string& path, int line, Read read) {
    auto r = read(path);
    EXPECT_FALSE(r.ok()) << path;
    if (r.ok()) return {};
    const std::string prefix = fmt::format("{}:{}: ", path, line);
    EXPECT_EQ(r.error().rfind(prefix, 0), 0u) << r.error() << " (expected prefix " << prefix << ")";
    return r.error();
  }
  testing::ScratchDir scratch_;
};

auto lwa = [](const std::string& p) { return read_lwa_csv(p); };
auto plain = [](const std::string& p) { return read_plain_csv(p); };
auto emaps = [](const std::string& p) { return read_emaps_csv(p); };

constexpr std::string_view kEmapsHeader =
    "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO\xE2\x82\x82"
    "eq/kWh (direct),Carbon Intensity gCO\xE2\x82\x82"
    "eq/kWh (LCA),Low Carbon Percentage,Renewable Percentage,Data Source,Data Estimated,Data "
    "Estimation Method\n";

TEST_F(CarbonReader, LwaMixedStepsResampleToHourlyMeans) {
  // 30-minute rows, then 15-minute rows, then 30-minute rows again (median step 30 min).
  const std::string path = write("lwa.csv",
                                 "Time,Carbon Intensity\n"
                                 "2020-01-01 00:00:00,100\n"
                                 "2020-01-01 00:30:00,200\n"
                                 "2020-01-01 01:00:00,10\n"
                                 "2020-01-01 01:15:00,20\n"
                                 "2020-01-01 01:30:00,30.5\n"
                                 "2020-01-01 01:45:00,40\n"
                                 "2020-01-01 02:00:00,50\n"
                                 "2020-01-01 02:30:00,60\n"
                                 "2020-01-01 03:00:00,70\n"
                                 "2020-01-01 03:30:00,80\n");
  auto r = read_lwa_csv(path);
  ASSERT_TRUE(r.ok()) << r.error();
  const TimeSeries& s = r.value();
  EXPECT_EQ(s.start_s(), k2020);
  EXPECT_EQ(s.step_s(), kHour);
  ASSERT_EQ(s.values().size(), 4u);
  EXPECT_DOUBLE_EQ(s.values()[0], 150);
  EXPECT_DOUBLE_EQ(s.values()[1], (10 + 20 + 30.5 + 40) / 4);
  EXPECT_DOUBLE_EQ(s.values()[2], 55);
  EXPECT_DOUBLE_EQ(s.values()[3], 75);  // the last row holds for the median step, 30 min

  // The same file at 30-minute steps: the 15-minute pairs are averaged, the rest kept.
  auto half = read_lwa_csv(path, 1800);
  ASSERT_TRUE(half.ok()) << half.error();
  EXPECT_EQ(half.value().values(), (std::vector<double>{100, 200, 15, 35.25, 50, 60, 70, 80}));
  EXPECT_TRUE(read_series(path, "lwa").ok());
}

TEST_F(CarbonReader, TimeWeightedMeanOfUnevenSamples) {
  // Epoch seconds; 10 holds 600 s, 40 holds 3000 s; the last (7) holds the median, 3000 s.
  const std::string path = write("plain.csv", "t,v\n0,10\n600,40\n3600,7\n");
  auto r = read_plain_csv(path);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().start_s(), 0);
  EXPECT_EQ(r.value().values(), (std::vector<double>{(10.0 * 600 + 40.0 * 3000) / 3600, 7}));
  EXPECT_DOUBLE_EQ(r.value().values()[0], 35);
}

TEST_F(CarbonReader, PlainStartIsFlooredToTheStep) {
  const std::string path = write("plain.csv",
                                 "time,price\n"
                                 "2023-01-01T00:30:00Z,4\n"
                                 "2023-01-01T01:30:00Z,6\n"
                                 "2023-01-01T02:30:00Z,8\n");
  auto r = read_series(path, "plain");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().start_s(), k2023);
  // Step 0 only has [00:30, 01:00) of 4; then halves; the last step has [03:00, 03:30) of 8.
  EXPECT_EQ(r.value().values(), (std::vector<double>{4, 5, 7, 8}));
}

TEST_F(CarbonReader, EmapsPicksTheDirectOrLcaColumn) {
  const std::string path =
      write("emaps.csv", std::string(kEmapsHeader) +
                             "2023-01-01 00:00:00,Germany,Germany,DE,140.51,185.8,83,78,e,false,\n"
                             "2023-01-01 01:00:00,Germany,Germany,DE,140.44,185.7,83,78,e,false,\n"
                             "2023-01-01 02:00:00,Germany,Germany,DE,0,1.5,83,78,e,true,TS\n");
  auto direct = read_emaps_csv(path);
  ASSERT_TRUE(direct.ok()) << direct.error();
  EXPECT_EQ(direct.value().start_s(), k2023);
  EXPECT_EQ(direct.value().values(), (std::vector<double>{140.51, 140.44, 0}));
  auto lca = read_series(path, "emaps", "lca");
  ASSERT_TRUE(lca.ok()) << lca.error();
  EXPECT_EQ(lca.value().values(), (std::vector<double>{185.8, 185.7, 1.5}));
  auto by_name = read_series(path, "emaps", "direct");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name.value().values(), direct.value().values());

  auto unknown = read_emaps_csv(path, "marginal");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("unknown carbon-intensity column 'marginal'"), std::string::npos)
      << unknown.error();
  EXPECT_EQ(unknown.error().rfind(path, 0), 0u);
}

TEST_F(CarbonReader, ReadSeriesRejectsUnknownFormat) {
  const std::string path = write("plain.csv", "t,v\n0,1\n");
  auto r = read_series(path, "json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("unknown series format 'json'"), std::string::npos) << r.error();
  auto col = read_series(path, "plain", "lca");
  ASSERT_FALSE(col.ok());
}

TEST_F(CarbonReader, ErrorsNameFileAndLine) {
  const std::string head = "Time,Carbon Intensity\n2020-01-01 00:00:00,100\n";
  // Non-numbers, including what from_chars would otherwise take.
  for (std::string_view value : {"abc", "", "12x", "nan", "inf", " 5", "1,5"}) {
    const std::string path =
        write("nan.csv", head + "2020-01-01 00:30:00," + std::string(value) + "\n");
    const std::string e = error_at(path, 3, lwa);
    EXPECT_NE(e.find(value == "1,5" ? "found 3" : "not a number"), std::string::npos) << e;
  }
  EXPECT_NE(error_at(write("neg.csv", head + "2020-01-01 00:30:00,-5\n"), 3, lwa).find("negative"),
            std::string::npos);
  EXPECT_NE(error_at(write("dec.csv", head + "2020-01-01 00:30:00,5\n"
                                             "2020-01-01 00:15:00,5\n"),
                     4, lwa)
                .find("strictly increasing"),
            std::string::npos);
  EXPECT_NE(error_at(write("dup.csv", head + "2020-01-01 00:00:00,5\n"), 3, lwa)
                .find("strictly increasing"),
            std::string::npos);
  EXPECT_NE(error_at(write("time.csv", head + "2020-13-01 00:30:00,5\n"), 3, lwa).find("bad time"),
            std::string::npos);
  EXPECT_NE(error_at(write("short.csv", head + "2020-01-01 00:30:00\n"), 3, lwa).find("fields"),
            std::string::npos);
  EXPECT_NE(error_at(write("col.csv", "Time,CI\n2020-01-01 00:00:00,1\n"), 1, lwa)
                .find("missing column 'Carbon Intensity'"),
            std::string::npos);
  EXPECT_NE(error_at(write("col2.csv", "When,Carbon Intensity\n2020-01-01 00:00:00,1\n"), 1, lwa)
                .find("missing column 'Time'"),
            std::string::npos);
  EXPECT_NE(error_at(write("rows.csv", "Time,Carbon Intensity\n"), 1, lwa).find("no data rows"),
            std::string::npos);
  EXPECT_NE(error_at(write("three.csv", "a,b,c\n0,1,2\n"), 1, plain).find("2 columns"),
            std::string::npos);
  EXPECT_NE(error_at(write("three2.csv", "a,b\n0,1\n3600,1,2\n"), 3, plain).find("2 fields"),
            std::string::npos);

  // emaps: the missing columns, and a bad value in the chosen column.
  EXPECT_NE(error_at(write("e1.csv", "Time,Carbon Intensity gCO2eq/kWh (direct)\n"), 1, emaps)
                .find("missing column 'Datetime (UTC)'"),
            std::string::npos);
  EXPECT_NE(
      error_at(write("e2.csv", "Datetime (UTC),Carbon Intensity gCO2eq/kWh (LCA)\n"), 1, emaps)
          .find("(direct)"),
      std::string::npos);
  const std::string bad_value =
      write("e3.csv", std::string(kEmapsHeader) +
                          "2023-01-01 00:00:00,Germany,Germany,DE,140.51,185.8,83,78,e,false,\n"
                          "2023-01-01 01:00:00,Germany,Germany,DE,-1,185.7,83,78,e,false,\n");
  EXPECT_NE(error_at(bad_value, 3, emaps).find("negative"), std::string::npos);
  EXPECT_TRUE(read_emaps_csv(bad_value, "lca").ok());  // the other column is fine

  // A file that is not there.
  auto missing = read_lwa_csv(scratch_.file("nope.csv"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("cannot open"), std::string::npos);
}

TEST_F(CarbonReader, GapIsAnErrorNamingIt) {
  // Hourly rows with 03:00 and 04:00 missing: those output hours have no data.
  const std::string path = write("gap.csv", std::string(kEmapsHeader) +
                                                "2023-01-01 00:00:00,X,X,X,1,2,0,0,e,false,\n"
                                                "2023-01-01 01:00:00,X,X,X,1,2,0,0,e,false,\n"
                                                "2023-01-01 02:00:00,X,X,X,1,2,0,0,e,false,\n"
                                                "2023-01-01 05:00:00,X,X,X,1,2,0,0,e,false,\n"
                                                "2023-01-01 06:00:00,X,X,X,1,2,0,0,e,false,\n");
  const std::string e = error_at(path, 5, emaps);
  EXPECT_NE(e.find("no data between 2023-01-01 02:00:00 and 2023-01-01 05:00:00"),
            std::string::npos)
      << e;
  // At 3-hour steps every step has some data: no error.
  auto coarse = read_emaps_csv(path, "direct", 3 * kHour);
  ASSERT_TRUE(coarse.ok()) << coarse.error();
  EXPECT_EQ(coarse.value().values(), (std::vector<double>{1, 1, 1}));

  // A missing 15-minute row inside 15-minute data is no gap at hourly steps: the row before
  // holds until the next one.
  const std::string quarter = write("q.csv",
                                    "Time,Carbon Intensity\n"
                                    "2020-01-01 00:00:00,1\n"
                                    "2020-01-01 00:15:00,2\n"
                                    "2020-01-01 00:45:00,3\n"
                                    "2020-01-01 01:00:00,4\n"
                                    "2020-01-01 01:15:00,4\n"
                                    "2020-01-01 01:30:00,4\n"
                                    "2020-01-01 01:45:00,4\n");
  auto q = read_lwa_csv(quarter);
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(q.value().values(), (std::vector<double>{(1 + 2 * 2 + 3) / 4.0, 4}));
}

// ---------------------------------------------------------------------------------------------
// Readers on the real files

struct EmapsStats {
  int min = 0;
  int mean = 0;
  int max = 0;
};

TEST(CarbonReaderRealData, EmapsFilesMatchSourceMd) {
  GREENSCHED_REQUIRE_CARBON();
  // direct-CI min/mean/max (g/kWh), rounded, from ../shared/data/carbon/SOURCE.md.
  const std::map<std::string, EmapsStats> expected = {
      {"AU-NSW", {140, 502, 720}},
      {"AU-VIC", {194, 458, 731}},
      {"BR-SP", {19, 56, 110}},
      {"CA-ON", {0, 47, 139}},
      {"CL-SIC", {41, 221, 473}},
      {"DE-LU", {84, 308, 640}},
      {"GB", {4, 129, 282}},
      {"IN-WE", {618, 691, 730}},
      {"JP-TK", {152, 450, 510}},
      {"KR", {216, 378, 433}},
      {"SG", {338, 369, 380}},
      {"US-CAL-CISO", {54, 194, 332}},
      {"US-MIDA-PJM", {245, 322, 424}},
      {"US-NY-NYIS", {131, 210, 301}},
      {"US-TEX-ERCO", {124, 317, 494}},
      {"ZA", {535, 645, 719}},
  };
  for (const auto& [zone, stats] : expected) {
    const std::string path = carbon_dir() + "/emaps2023/" + zone + "_2023_hourly.csv";
    auto r = read_emaps_csv(path);
    ASSERT_TRUE(r.ok()) << r.error();
    const TimeSeries& s = r.value();
    EXPECT_EQ(s.start_s(), k2023) << zone;
    EXPECT_EQ(s.step_s(), kHour) << zone;
    ASSERT_EQ(s.values().size(), 8760u) << zone;
    const auto [lo, hi] = std::minmax_element(s.values().begin(), s.values().end());
    const double mean = s.mean(s.start_s(), s.end_s());
    // Within rounding (SOURCE.md rounds half to even: KR's minimum 216.5 is listed as 216).
    EXPECT_NEAR(*lo, stats.min, 0.5) << zone;
    EXPECT_NEAR(mean, stats.mean, 0.5) << zone;
    EXPECT_NEAR(*hi, stats.max, 0.5) << zone;
    // The life-cycle column reads too and is never below the direct one on average.
    auto lca = read_emaps_csv(path, "lca");
    ASSERT_TRUE(lca.ok()) << lca.error();
    ASSERT_EQ(lca.value().values().size(), 8760u) << zone;
    EXPECT_GT(lca.value().mean(k2023, k2023 + 8760 * kHour), mean) << zone;
  }
}

TEST(CarbonReaderRealData, LwaFilesResampleToHourly) {
  GREENSCHED_REQUIRE_CARBON();
  struct Case {
    const char* file;
    double source_mean;  // SOURCE.md: the mean over rows
    double hourly_mean;  // time-weighted; differs from the row mean only for mixed steps
    double min;
    double max;
  };
  // lwa_gb mixes 15- and 30-minute rows: its per-row mean (SOURCE.md, 217.6) counts each
  // 15-minute row as much as a 30-minute one; the time-weighted hourly mean is 214.5.
  const Case cases[] = {
      {"lwa_fr_ci.csv", 56.7, 56.72, 19.5, 116.4},
      {"lwa_gb_ci.csv", 217.6, 214.50, 63.7, 394.9},
      {"lwa_ger_ci.csv", 315.2, 315.22, 100.7, 593.3},
  };
  for (const Case& c : cases) {
    auto r = read_lwa_csv(carbon_dir() + "/" + c.file);
    ASSERT_TRUE(r.ok()) << r.error();
    const TimeSeries& s = r.value();
    EXPECT_EQ(s.step_s(), kHour);
    EXPECT_EQ(s.start_s(), 1576800000) << c.file;  // 2019-12-20 00:00
    EXPECT_GE(s.values().size(), 9287u) << c.file;
    EXPECT_LE(s.values().size(), 9288u) << c.file;
    const double mean = s.mean(s.start_s(), s.end_s());
    EXPECT_NEAR(mean, c.hourly_mean, 0.01 * c.hourly_mean) << c.file;
    EXPECT_NEAR(mean, c.source_mean, 0.02 * c.source_mean) << c.file;
    if (std::string_view(c.file) != "lwa_gb_ci.csv") {
      EXPECT_NEAR(mean, c.source_mean, 0.01 * c.source_mean) << c.file;
    }
    const auto [lo, hi] = std::minmax_element(s.values().begin(), s.values().end());
    EXPECT_GE(*lo, c.min - 0.05) << c.file;  // hourly means stay within the rows' range
    EXPECT_LE(*hi, c.max + 0.05) << c.file;
  }
}

// ---------------------------------------------------------------------------------------------
// Forecasters

// values[d * 24 + h] = 1000 + 100 * d + h, hourly from 2023-01-01, 3 days.
TimeSeries three_days() {
  std::vector<double> v;
  for (int d = 0; d < 3; ++d) {
    for (int h = 0; h < 24; ++h) v.push_back(1000 + 100 * d + h);
  }
  return TimeSeries(k2023, kHour, v);
}

TEST(Forecast, SameHourHandComputed) {
  const TimeSeries s = three_days();
  const auto f7 = make_same_hour_forecaster(7);
  const auto f1 = make_same_hour_forecaster(1);
  const int64_t now = k2023 + 2 * kDay + 5 * kHour + 1800;  // inside day 2, hour 5
  // Past, complete samples are returned as they are.
  EXPECT_EQ(f7->at(s, now, k2023 + 2 * kDay + 4 * kHour + 600), 1204);
  EXPECT_EQ(f7->at(s, now, k2023 + 10 * kHour), 1010);
  // The current step (day 2 hour 5) is not complete: the same hour on days 1 and 0.
  EXPECT_EQ(f7->at(s, now, now), (1105 + 1005) / 2.0);
  EXPECT_EQ(f7->at(s, now, k2023 + 2 * kDay + 5 * kHour + 3599), 1055);
  EXPECT_EQ(f1->at(s, now, now), 1105);
  // Later today: hour 10 of days 1 and 0.
  EXPECT_EQ(f7->at(s, now, k2023 + 2 * kDay + 10 * kHour), 1060);
  EXPECT_EQ(f1->at(s, now, k2023 + 2 * kDay + 10 * kHour), 1110);
  // Tomorrow (beyond the span) hour 2: days 2, 1 and 0 at hour 2 are all complete.
  EXPECT_EQ(f7->at(s, now, k2023 + 3 * kDay + 2 * kHour), (1202 + 1102 + 1002) / 3.0);
  EXPECT_EQ(f1->at(s, now, k2023 + 3 * kDay + 2 * kHour), 1202);
  // Tomorrow hour 8: day 2 hour 8 is not complete, so days 1 and 0.
  EXPECT_EQ(f7->at(s, now, k2023 + 3 * kDay + 8 * kHour), 1058);
  EXPECT_EQ(f1->at(s, now, k2023 + 3 * kDay + 8 * kHour), 1108);
  // The default mean weights partial steps: [10:30, 12:00) = 1800 s of 1060, 3600 s of 1061.
  EXPECT_DOUBLE_EQ(
      f7->mean(s, now, k2023 + 2 * kDay + 10 * kHour + 1800, k2023 + 2 * kDay + 12 * kHour),
      (1060.0 * 1800 + 1061.0 * 3600) / 5400);
  EXPECT_EQ(f7->mean(s, now, now, now), f7->at(s, now, now));
  EXPECT_EQ(f7->mean(s, now, now, now + 60), f7->at(s, now, now));
}

TEST(Forecast, SameHourAtTheStartOfASeries) {
  const TimeSeries s = three_days();
  const auto f = make_same_hour_forecaster(7);
  // Day 0, hour 3:10: no same-hour sample from an earlier day is complete, so the latest
  // complete sample (hour 2); never the data before the start (the wrapped end of the series).
  const int64_t now = k2023 + 3 * kHour + 600;
  EXPECT_EQ(f->at(s, now, k2023 + 5 * kHour), 1002);
  EXPECT_EQ(f->at(s, now, now), 1002);
  // A day later the same hour of day 0 is known.
  EXPECT_EQ(f->at(s, now, k2023 + kDay + 2 * kHour), 1002);
  EXPECT_EQ(f->at(s, now, k2023 + kDay + 1 * kHour), 1001);
  // Nothing complete yet: the first sample (documented: the one read of an unknown sample).
  EXPECT_EQ(f->at(s, k2023 + 100, k2023 + 7 * kHour), 1000);
  EXPECT_EQ(f->at(s, k2023 - kDay, k2023 + 7 * kHour), 1000);
  EXPECT_EQ(f->at(TimeSeries(), k2023, k2023), 0);
  // It knows a day from a day after the start on; the oracle always does.
  EXPECT_FALSE(f->knows_a_day(s, now));
  EXPECT_FALSE(f->knows_a_day(s, k2023 + kDay - 1));
  EXPECT_TRUE(f->knows_a_day(s, k2023 + kDay));
  EXPECT_TRUE(make_oracle_forecaster()->knows_a_day(s, now));
}

// The same-hour forecaster's mean (a day's profile summed cumulatively) is the time-weighted
// mean of its own point forecasts, over short and long intervals and wherever they start.
TEST(Forecast, SameHourMeanIsTheMeanOfItsPointForecasts) {
  Rng rng(12);
  std::vector<double> values(20 * 24);
  for (double& v : values) v = 50 + 400 * rng.uniform_real();
  const TimeSeries series(k2023, kHour, values);
  const auto f = make_same_hour_forecaster(7);
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t now = k2023 + static_cast<int64_t>(rng.uniform(19 * kDay));
    const int64_t from = now + static_cast<int64_t>(rng.uniform(2 * kDay));
    const int64_t to =
        from + 1 + static_cast<int64_t>(rng.uniform(trial % 2 ? 5 * kDay : 3 * kHour));
    double sum = 0;
    for (int64_t a = from; a < to;) {
      const int64_t b = std::min(to, k2023 + (series.index_of(a) + 1) * kHour);
      sum += f->at(series, now, a) * static_cast<double>(b - a);
      a = b;
    }
    EXPECT_NEAR(f->mean(series, now, from, to), sum / static_cast<double>(to - from), 1e-9)
        << "now " << now - k2023 << " from " << from - now << " to " << to - now;
  }
}

// A non-oracle forecast is a function of the samples complete at `now` only: rewriting every
// other sample leaves each answer bit for bit the same.
TEST(Forecast, SameHourNeverReadsTheFuture) {
  Rng rng(11);
  std::vector<double> values(30 * 24);
  for (double& v : values) v = 50 + 400 * rng.uniform_real();
  const TimeSeries series(k2023, kHour, values);
  const auto f7 = make_same_hour_forecaster(7);
  const auto f3 = make_same_hour_forecaster(3);

  const int64_t nows[] = {k2023 + kHour,
                          k2023 + kHour + 1,
                          k2023 + 5 * kHour + 17,
                          k2023 + kDay + 1234,
                          k2023 + 2 * kDay + 13 * kHour,
                          k2023 + 10 * kDay + 5 * kHour + 1234,
                          k2023 + 29 * kDay + 23 * kHour + 3599,
                          k2023 + 30 * kDay - 1};
  for (int64_t now : nows) {
    std::vector<int64_t> targets;
    for (int64_t dt = 0; dt < 4 * kDay; dt += 7 * 60 + 13) targets.push_back(now + dt);
    targets.push_back(now + 40 * kDay);  // beyond the span: wraps into the (unknown) data
    const auto answers = [&](const TimeSeries& s) {
      std::vector<uint64_t> out;
      for (int64_t t : targets) {
        out.push_back(std::bit_cast<uint64_t>(f7->at(s, now, t)));
        out.push_back(std::bit_cast<uint64_t>(f3->at(s, now, t)));
        out.push_back(std::bit_cast<uint64_t>(f7->mean(s, now, t, t + 5 * kHour + 77)));
      }
      return out;
    };
    const std::vector<uint64_t> before = answers(series);

    // Every sample not complete at `now` is rewritten: shuffled among themselves, then
    // perturbed, then replaced outright.
    const auto first_unknown =
        static_cast<std::size_t>(std::max<int64_t>(0, (now - k2023) / kHour));
    ASSERT_GE(first_unknown, 1u);
    std::vector<double> shuffled = values;
    std::span<double> future(shuffled.data() + first_unknown, shuffled.size() - first_unknown);
    rng.shuffle(future);
    std::vector<double> perturbed = shuffled;
    for (std::size_t i = first_unknown; i < perturbed.size(); ++i) perturbed[i] += 1e-3 * (i + 1);
    std::vector<double> replaced = values;
    for (std::size_t i = first_unknown; i < replaced.size(); ++i) replaced[i] = 1e6 + i;

    for (const auto& other : {shuffled, perturbed, replaced}) {
      EXPECT_EQ(answers(TimeSeries(k2023, kHour, other)), before) << "now=" << now;
    }
    // And the forecast does use the known data: changing a known sample changes something.
    std::vector<double> changed_past = values;
    changed_past[first_unknown - 1] += 1;
    EXPECT_NE(answers(TimeSeries(k2023, kHour, changed_past)), before) << "now=" << now;
  }
}

TEST(Forecast, OracleIsTheActualSeries) {
  Rng rng(5);
  std::vector<double> values(100);
  for (double& v : values) v = 100 * rng.uniform_real();
  const TimeSeries s(k2023, 1800, values);
  const auto oracle = make_oracle_forecaster();
  const int64_t now = k2023 + 12345;
  for (int64_t t = now; t < now + 3 * kDay; t += 997) {
    EXPECT_EQ(oracle->at(s, now, t), s.at(t));
    EXPECT_EQ(oracle->mean(s, now, t, t + 7 * kHour + 11), s.mean(t, t + 7 * kHour + 11));
  }
  // The default Forecaster::mean of an oracle-like `at` agrees with the exact mean.
  struct AtOnly final : Forecaster {
    double at(const TimeSeries& series, int64_t, int64_t t) const override { return series.at(t); }
  } at_only;
  for (int64_t t = now; t < now + kDay; t += 1013) {
    EXPECT_NEAR(at_only.mean(s, now, t, t + 5 * kHour + 7), s.mean(t, t + 5 * kHour + 7), 1e-9);
  }
}

// ---------------------------------------------------------------------------------------------
// Synthetic carbon

double hour_of_day_mean(const TimeSeries& s, int utc_hour) {
  double sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < s.values().size(); ++i) {
    const int64_t t = s.start_s() + static_cast<int64_t>(i) * s.step_s();
    if ((t % kDay) / kHour == utc_hour) {
      sum += s.values()[i];
      ++n;
    }
  }
  return sum / n;
}

TEST(Synthetic, DeterministicPerSeed) {
  SyntheticCarbon shape;
  const TimeSeries a = synthetic_carbon(shape, k2023);
  const TimeSeries b = synthetic_carbon(shape, k2023);
  EXPECT_EQ(a.start_s(), k2023);
  EXPECT_EQ(a.step_s(), kHour);
  ASSERT_EQ(a.values().size(), 365u * 24);
  EXPECT_EQ(a.values(), b.values());
  shape.seed = 2;
  EXPECT_NE(synthetic_carbon(shape, k2023).values(), a.values());
  EXPECT_EQ(synthetic_carbon(shape, k2023, 10).values().size(), 240u);
  EXPECT_TRUE(synthetic_carbon(shape, k2023, 0).empty());
}

TEST(Synthetic, MeanIsCloseToTheTarget) {
  for (double dip : {0.0, 0.2, 0.5}) {
    for (double swing : {0.0, 0.25, 0.5}) {
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        SyntheticCarbon shape;
        shape.mean_g_per_kwh = 250;
        shape.solar_dip = dip;
        shape.wind_swing = swing;
        shape.seed = seed;
        const TimeSeries s = synthetic_carbon(shape, k2023);
        const double mean = s.mean(s.start_s(), s.end_s());
        EXPECT_NEAR(mean, 250, 25) << dip << " " << swing << " " << seed;
        for (double v : s.values()) ASSERT_GE(v, 0);
      }
    }
  }
}

TEST(Synthetic, HasADailyCycleAndMultiDaySwings) {
  SyntheticCarbon shape;
  shape.solar_dip = 0.3;
  const TimeSeries s = synthetic_carbon(shape, k2023);
  EXPECT_LT(hour_of_day_mean(s, 12), 0.85 * hour_of_day_mean(s, 0));
  EXPECT_LT(hour_of_day_mean(s, 12), hour_of_day_mean(s, 8));
  EXPECT_NEAR(hour_of_day_mean(s, 23), hour_of_day_mean(s, 2), 0.05 * hour_of_day_mean(s, 2));

  // California-like: local noon is 20:00 UTC.
  shape.utc_offset_hours = -8;
  const TimeSeries ca = synthetic_carbon(shape, k2023);
  EXPECT_LT(hour_of_day_mean(ca, 20), 0.85 * hour_of_day_mean(ca, 8));

  // Weather: daily means wander over days, with some consecutive-day persistence.
  std::vector<double> daily;
  for (int d = 0; d < 365; ++d) daily.push_back(s.mean(k2023 + d * kDay, k2023 + (d + 1) * kDay));
  const double mean = std::accumulate(daily.begin(), daily.end(), 0.0) / daily.size();
  double var = 0;
  double lag1 = 0;
  for (std::size_t d = 0; d < daily.size(); ++d) {
    var += (daily[d] - mean) * (daily[d] - mean);
    if (d > 0) lag1 += (daily[d] - mean) * (daily[d - 1] - mean);
  }
  EXPECT_GT(std::sqrt(var / daily.size()), 0.05 * mean);  // swings of several %
  EXPECT_GT(lag1 / var, 0.3);                             // that last for days

  // Without weather and sun only the weekly ripple is left, and no value goes below 0 even
  // with swings larger than the level.
  shape.solar_dip = 0;
  shape.wind_swing = 0;
  const TimeSeries calm = synthetic_carbon(shape, k2023);
  const auto [lo, hi] = std::minmax_element(calm.values().begin(), calm.values().end());
  EXPECT_GT(*lo, 0.95 * shape.mean_g_per_kwh);
  EXPECT_LT(*hi, 1.05 * shape.mean_g_per_kwh);
  shape.wind_swing = 1.5;
  const TimeSeries stormy = synthetic_carbon(shape, k2023);
  for (double v : stormy.values()) ASSERT_GE(v, 0);
}

}  // namespace
}  // namespace greensched::multi
