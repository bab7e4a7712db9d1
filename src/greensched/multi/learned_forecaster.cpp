#include "greensched/multi/learned_forecaster.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "greensched/core/utc_time.hpp"

namespace greensched::multi {
namespace {

class LearnedForecaster final : public Forecaster {
 public:
  LearnedForecaster(const Fleet& fleet, std::shared_ptr<const LearnedForecasts> forecasts, int days)
      : forecasts_(std::move(forecasts)), same_hour_(make_same_hour_forecaster(days)) {
    if (!forecasts_) return;
    const MpcForecastModels& models = forecasts_->models();
    for (std::size_t i = 0; i < fleet.sites.size(); ++i) {
      const SiteSpec& site = fleet.sites[i];
      add(site.carbon, models.carbon, models.carbon_series, i, 0.0);
      if (site.price) {
        add(*site.price, models.price, models.price_series, i,
            -std::numeric_limits<double>::infinity());
      }
    }
  }

  bool knows_a_day(const TimeSeries& series, int64_t now) const override {
    return same_hour_->knows_a_day(series, now);
  }

  double at(const TimeSeries& series, int64_t now, int64_t t) const override {
    const Issue* issue = issued(series, now);
    if (issue != nullptr) {
      const int64_t k = series.index_of(t) - issue->known;
      if (k >= 0 && k < static_cast<int64_t>(issue->values.size())) {
        return issue->values[static_cast<std::size_t>(k)];
      }
    }
    return same_hour_->at(series, now, t);
  }

  // The forecast samples' sum from running sums over the hours the model covers, the
  // same-hour mean beyond: O(1) whatever the interval, as the agents need.
  double mean(const TimeSeries& series, int64_t now, int64_t from, int64_t to) const override {
    if (from < now || to <= from) return Forecaster::mean(series, now, from, to);
    const Issue* issue = issued(series, now);
    if (issue == nullptr || issue->values.empty()) return same_hour_->mean(series, now, from, to);
    const int64_t step = series.step_s();
    const auto start_of = [&](int64_t i) { return series.start_s() + i * step; };
    const int64_t known = issue->known;
    const int64_t covered_to =
        std::min(to, start_of(known + static_cast<int64_t>(issue->values.size())));
    double sum = 0;
    if (from < covered_to) {
      const int64_t i0 = series.index_of(from);
      const int64_t i1 = series.index_of(covered_to - 1);
      const auto value = [&](int64_t i) {
        return issue->values[static_cast<std::size_t>(i - known)];
      };
      const auto through = [&](int64_t i) {
        return issue->prefix[static_cast<std::size_t>(i - known)];
      };
      if (i0 == i1) {
        sum = value(i0) * static_cast<double>(covered_to - from);
      } else {
        sum = value(i0) * static_cast<double>(start_of(i0 + 1) - from) +
              value(i1) * static_cast<double>(covered_to - start_of(i1)) +
              (through(i1) - through(i0 + 1)) * static_cast<double>(step);
      }
    }
    const int64_t rest_from = std::max(from, covered_to);
    if (rest_from < to) {
      sum += same_hour_->mean(series, now, rest_from, to) * static_cast<double>(to - rest_from);
    }
    return sum / static_cast<double>(to - from);
  }

 private:
  struct Source {
    const forecast::LearnedModel* model = nullptr;
    const forecast::Series* series = nullptr;
    double floor = 0;  // carbon intensity is never negative; prices may be
    // The latest issue read (samples known, forecasts): an instant's many questions take no
    // lock and no lookup.
    mutable int64_t known = -1;
    mutable const LearnedForecasts::Issue* issue = nullptr;
  };
  using Issue = LearnedForecasts::Issue;
  void add(const TimeSeries& t, const std::optional<forecast::LearnedModel>& model,
           const std::vector<forecast::Series>& series, std::size_t site, double floor) {
    if (!model || site >= series.size() || t.empty()) return;
    const forecast::Series& s = series[site];
    // The models' copy of this very series: same samples from the same start.
    if (s.values.empty() || s.start_s != t.start_s() || s.step_s != t.step_s() ||
        s.values != t.values()) {
      return;
    }
    sources_.emplace(t.id(), Source{&*model, &s, floor});
  }

  const Issue* issued(const TimeSeries& series, int64_t now) const {
    const auto source = sources_.find(series.id());
    if (source == sources_.end()) return nullptr;
    const Source& src = source->second;
    // Before the training's end the model has seen the hours it would forecast.
    if (now < src.model->trained_until_s()) return nullptr;
    const auto known = static_cast<int64_t>(forecast::known_count(*src.series, now));
    if (src.issue == nullptr || src.known != known) {
      src.issue = &forecasts_->issue(*src.model, *src.series, now, known, src.floor);
      src.known = known;
    }
    return src.issue;
  }

  std::shared_ptr<const LearnedForecasts> forecasts_;
  std::unique_ptr<Forecaster> same_hour_;
  std::unordered_map<uint64_t, Source> sources_;  // by TimeSeries::id
};

}  // namespace

LearnedForecasts::LearnedForecasts(std::shared_ptr<const MpcForecastModels> models)
    : models_(std::move(models)) {}

const LearnedForecasts::Issue& LearnedForecasts::issue(const forecast::LearnedModel& model,
                                                       const forecast::Series& series, int64_t now,
                                                       int64_t known, double floor) const {
  const auto key = std::make_pair(&series, known);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const auto hit = issued_.find(key); hit != issued_.end()) return hit->second;
  }
  Issue issue;
  issue.known = known;
  std::vector<int> horizons;
  if (known >= static_cast<int64_t>(forecast::kMinHistoryH)) {
    for (int h = 1; h <= model.max_horizon_h(); ++h) {
      if (forecast::target_index(static_cast<std::size_t>(known), h) >= series.size()) break;
      horizons.push_back(h);
    }
  }
  if (!horizons.empty()) {
    auto f = model.forecast({&series, nullptr}, now, horizons);
    if (f.ok()) {  // otherwise empty: the same-hour forecaster answers
      issue.values = std::move(f.value());
      issue.prefix.assign(issue.values.size() + 1, 0.0);
      for (std::size_t k = 0; k < issue.values.size(); ++k) {
        issue.values[k] = std::max(floor, issue.values[k]);
        issue.prefix[k + 1] = issue.prefix[k] + issue.values[k];
      }
    }
  }
  // Whoever computed it first, it is the same forecast: keep the one already there.
  std::lock_guard<std::mutex> lock(mutex_);
  return issued_.emplace(key, std::move(issue)).first->second;
}

std::unique_ptr<Forecaster> make_learned_forecaster(
    const Fleet& fleet, std::shared_ptr<const LearnedForecasts> forecasts, int same_hour_days) {
  return std::make_unique<LearnedForecaster>(fleet, std::move(forecasts), same_hour_days);
}

std::unique_ptr<Forecaster> make_learned_forecaster(const Fleet& fleet,
                                                    std::shared_ptr<const MpcForecastModels> models,
                                                    int same_hour_days) {
  auto forecasts = models ? std::make_shared<const LearnedForecasts>(std::move(models)) : nullptr;
  return make_learned_forecaster(fleet, std::move(forecasts), same_hour_days);
}

int64_t measured_hour0_s(const Fleet& fleet, const std::vector<PodSpec>& pods,
                         int64_t measure_from_s) {
  // The run's clock starts at its first submission (fleet_sim.cpp, set_up_clock).
  int64_t first = pods.empty() ? 0 : std::numeric_limits<int64_t>::max();
  for (const PodSpec& pod : pods) first = std::min(first, std::max<int64_t>(pod.creation_time, 0));
  return floor_hour(fleet.start_s + std::max(first, measure_from_s));
}

LearnedForecastsByWindow::LearnedForecastsByWindow()
    : LearnedForecastsByWindow([](const Fleet& fleet, int64_t window_start_s) {
        return train_mpc_forecasts(fleet, window_start_s);
      }) {}

Result<LearnedForecastsByWindow::Got> LearnedForecastsByWindow::get(const Fleet& fleet,
                                                                    int64_t window_start_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = windows_.find(window_start_s); it != windows_.end()) {
    return Got{it->second, false};
  }
  auto m = make_(fleet, window_start_s);
  if (!m.ok()) return Error{m.error()};
  auto forecasts = std::make_shared<const LearnedForecasts>(
      std::make_shared<const MpcForecastModels>(std::move(m.value())));
  windows_.emplace(window_start_s, forecasts);
  return Got{std::move(forecasts), true};
}

}  // namespace greensched::multi
