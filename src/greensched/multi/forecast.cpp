#include "greensched/multi/forecast.hpp"

#include <algorithm>
#include <vector>

namespace greensched::multi {

double Forecaster::mean(const TimeSeries& series, int64_t now, int64_t from, int64_t to) const {
  if (to <= from || series.empty()) return at(series, now, from);
  const int64_t first = series.index_of(from);
  const int64_t last = series.index_of(to - 1);
  if (first == last) return at(series, now, from);
  const int64_t step = series.step_s();
  double sum = 0;
  for (int64_t i = first; i <= last; ++i) {
    const int64_t a = std::max(from, series.start_s() + i * step);
    const int64_t b = std::min(to, series.start_s() + (i + 1) * step);
    sum += at(series, now, a) * static_cast<double>(b - a);
  }
  return sum / static_cast<double>(to - from);
}

namespace {

constexpr int64_t kDay = 86400;

class SameHourForecaster final : public Forecaster {
 public:
  explicit SameHourForecaster(int days) : days_(std::max(days, 1)) {}

  double at(const TimeSeries& series, int64_t now, int64_t t) const override {
    if (series.empty()) return 0;
    // Sample j is known at `now` when it lies in the data (j >= 0; before the start the
    // cyclic repetition would show data from the end of the series) and its interval
    // [start + j * step, start + (j + 1) * step) has ended by `now`.
    const auto known = [&](int64_t j) {
      return j >= 0 && series.start_s() + (j + 1) * series.step_s() <= now;
    };
    if (known(series.index_of(t))) return series.at(t);

    const int64_t ahead = std::max<int64_t>(0, t - now);
    const int64_t max_k = days_ + (ahead + kDay - 1) / kDay + 1;
    double sum = 0;
    int count = 0;
    for (int64_t k = 1; k <= max_k && count < days_; ++k) {
      const int64_t tk = t - k * kDay;
      if (!known(series.index_of(tk))) continue;
      sum += series.at(tk);
      ++count;
    }
    if (count > 0) return sum / count;
    // No same-hour sample yet (the first day of the series): persistence of the latest
    // complete sample; before any sample is complete, the first sample (the only read of a
    // sample not known at `now`).
    const int64_t latest = series.index_of(now) - 1;
    if (latest >= 0) return series.at(series.start_s() + latest * series.step_s());
    return series.values().front();
  }

  // For t >= now the forecast repeats daily (every known same-hour sample lies before now), so
  // the mean over a long interval is whole days of one daily profile plus the ends: O(one
  // day) instead of O(interval). Short or past intervals take the sample-by-sample sum.
  double mean(const TimeSeries& series, int64_t now, int64_t from, int64_t to) const override {
    const int64_t step = series.empty() ? 0 : series.step_s();
    if (step <= 0 || from < now || to - from <= 2 * kDay || kDay % step != 0) {
      return Forecaster::mean(series, now, from, to);
    }
    const int64_t per_day = kDay / step;
    const int64_t i0 = series.index_of(from);
    const int64_t i1 = series.index_of(to - 1);
    const auto start_of = [&](int64_t i) { return series.start_s() + i * step; };
    std::vector<double> profile(static_cast<std::size_t>(per_day));
    double day_total = 0;
    for (int64_t k = 0; k < per_day; ++k) {
      profile[static_cast<std::size_t>(k)] = at(series, now, std::max(from, start_of(i0 + k)));
      day_total += profile[static_cast<std::size_t>(k)];
    }
    const auto value = [&](int64_t i) {
      return profile[static_cast<std::size_t>((i - i0) % per_day)];
    };
    double sum = value(i0) * static_cast<double>(start_of(i0 + 1) - from) +
                 value(i1) * static_cast<double>(to - start_of(i1));
    const int64_t middle = i1 - i0 - 1;  // whole samples i0 + 1 .. i1 - 1
    double whole = static_cast<double>(middle / per_day) * day_total;
    for (int64_t i = i0 + 1 + (middle / per_day) * per_day; i < i1; ++i) whole += value(i);
    sum += whole * static_cast<double>(step);
    return sum / static_cast<double>(to - from);
  }

 private:
  int days_;
};

class OracleForecaster final : public Forecaster {
 public:
  double at(const TimeSeries& series, int64_t, int64_t t) const override { return series.at(t); }
  double mean(const TimeSeries& series, int64_t, int64_t from, int64_t to) const override {
    return series.mean(from, to);
  }
};

}  // namespace

std::unique_ptr<Forecaster> make_same_hour_forecaster(int days) {
  return std::make_unique<SameHourForecaster>(days);
}

std::unique_ptr<Forecaster> make_oracle_forecaster() {
  return std::make_unique<OracleForecaster>();
}

}  // namespace greensched::multi
