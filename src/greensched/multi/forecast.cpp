#include "greensched/multi/forecast.hpp"

#include <algorithm>

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
