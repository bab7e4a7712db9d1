#include "greensched/multi/forecast.hpp"

#include <algorithm>
#include <deque>
#include <vector>

namespace greensched::multi {

bool Forecaster::knows_a_day(const TimeSeries&, int64_t) const {
  return true;
}

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

  bool knows_a_day(const TimeSeries& series, int64_t now) const override {
    return now - series.start_s() >= kDay;
  }

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

  // For t at or after the sample holding `now` the forecast repeats daily (every known
  // same-hour sample lies before now), so one day's profile, made once per series and sample
  // of `now` and summed cumulatively, gives the mean over any such interval in O(1). Past
  // intervals take the sample-by-sample sum.
  double mean(const TimeSeries& series, int64_t now, int64_t from, int64_t to) const override {
    const int64_t step = series.empty() ? 0 : series.step_s();
    if (step <= 0 || from < now || to <= from || kDay % step != 0) {
      return Forecaster::mean(series, now, from, to);
    }
    const Profile& p = profile(series, now);
    const int64_t i0 = series.index_of(from);
    const int64_t i1 = series.index_of(to - 1);
    const auto start_of = [&](int64_t i) { return series.start_s() + i * step; };
    if (i0 == i1) return p.value(i0);
    const double sum = p.value(i0) * static_cast<double>(start_of(i0 + 1) - from) +
                       p.value(i1) * static_cast<double>(to - start_of(i1)) +
                       p.sum(i0 + 1, i1) * static_cast<double>(step);
    return sum / static_cast<double>(to - from);
  }

 private:
  // The forecast of the samples i_now, i_now + 1, ... (i_now holds `now`), one day of them,
  // and their running sums.
  struct Profile {
    uint64_t series = 0;  // TimeSeries::id
    int64_t i_now = 0;
    std::vector<double> day;     // day[k]: sample i_now + k
    std::vector<double> prefix;  // prefix[k]: day[0] + ... + day[k - 1]
    double value(int64_t i) const {
      return day[static_cast<std::size_t>((i - i_now) % static_cast<int64_t>(day.size()))];
    }
    // Sum of samples [a, b), a >= i_now.
    double sum(int64_t a, int64_t b) const { return through(b) - through(a); }
    double through(int64_t i) const {  // sum of samples [i_now, i)
      const auto n = static_cast<int64_t>(day.size());
      const int64_t k = i - i_now;
      return static_cast<double>(k / n) * prefix.back() + prefix[static_cast<std::size_t>(k % n)];
    }
  };

  const Profile& profile(const TimeSeries& series, int64_t now) const {
    const int64_t i_now = series.index_of(now);
    for (const Profile& p : profiles_) {
      if (p.series == series.id() && p.i_now == i_now) return p;
    }
    Profile* slot = nullptr;
    for (Profile& p : profiles_) {
      if (p.series == series.id()) slot = &p;
    }
    if (slot == nullptr) {
      if (profiles_.size() >= 64) profiles_.clear();  // series built and dropped, as in tests
      slot = &profiles_.emplace_back();
    }
    const int64_t per_day = kDay / series.step_s();
    slot->series = series.id();
    slot->i_now = i_now;
    slot->day.resize(static_cast<std::size_t>(per_day));
    slot->prefix.assign(static_cast<std::size_t>(per_day) + 1, 0.0);
    for (int64_t k = 0; k < per_day; ++k) {
      const int64_t t = std::max(now, series.start_s() + (i_now + k) * series.step_s());
      slot->day[static_cast<std::size_t>(k)] = at(series, now, t);
      slot->prefix[static_cast<std::size_t>(k) + 1] =
          slot->prefix[static_cast<std::size_t>(k)] + slot->day[static_cast<std::size_t>(k)];
    }
    return *slot;
  }

  int days_;
  // One profile per series seen (a fleet has a few); remade when `now` enters a new sample.
  mutable std::deque<Profile> profiles_;
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
