#include "greensched/forecast/evaluate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "greensched/core/parallel_for.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/forecast/baselines.hpp"

namespace greensched::forecast {
namespace {

constexpr int kBlockH = 24;

// The k indices of the lowest values in [from, from + n), ties to the earlier.
std::vector<std::size_t> lowest(std::span<const double> v, std::size_t from, std::size_t n, int k) {
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), from);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  idx.resize(std::min<std::size_t>(n, static_cast<std::size_t>(std::max(k, 1))));
  return idx;
}

}  // namespace

void ErrorSums::add(std::span<const double> f, std::span<const double> a) {
  for (std::size_t j = 0; j < f.size(); ++j) {
    const double err = std::abs(f[j] - a[j]);
    abs_sum_ += err;
    ++hours_;
    if (std::abs(a[j]) >= floor_) {
      ape_sum_ += err / std::abs(a[j]);
      ++ape_hours_;
    }
  }
  for (std::size_t from = 0; from + kBlockH <= f.size(); from += kBlockH) {
    const auto chosen = lowest(f, from, kBlockH, k_);
    const auto best = lowest(a, from, kBlockH, k_);
    double chosen_mean = 0, best_mean = 0, day_mean = 0;
    for (std::size_t j : chosen) {
      chosen_mean += a[j];
      if (std::abs(a[j]) >= floor_) {
        sel_ape_sum_ += std::abs(f[j] - a[j]) / std::abs(a[j]);
        ++sel_hours_;
      }
    }
    for (std::size_t j : best) best_mean += a[j];
    for (std::size_t j = from; j < from + kBlockH; ++j) day_mean += a[j];
    chosen_mean /= static_cast<double>(chosen.size());
    best_mean /= static_cast<double>(best.size());
    day_mean /= kBlockH;
    missed_ += chosen_mean - best_mean;
    possible_ += day_mean - best_mean;
  }
}

Metrics ErrorSums::finish() const {
  const double nan = std::nan("");
  Metrics m;
  m.hours = hours_;
  m.mape_hours = ape_hours_;
  m.mae = hours_ > 0 ? abs_sum_ / static_cast<double>(hours_) : nan;
  m.mape_pct = ape_hours_ > 0 ? 100.0 * ape_sum_ / static_cast<double>(ape_hours_) : nan;
  m.sel_mape_pct = sel_hours_ > 0 ? 100.0 * sel_ape_sum_ / static_cast<double>(sel_hours_) : nan;
  m.missed_saving_pct = possible_ > 0 ? 100.0 * missed_ / possible_ : nan;
  return m;
}

Result<EvalResult> evaluate(std::span<const EvalZone> zones, const EvalOptions& o) {
  if (zones.empty()) return Error{"evaluate: no zones"};
  if (o.days < 1 || o.retrain_days < 1 || o.k_lowest < 1 || o.horizons.empty()) {
    return Error{
        fmt::format("evaluate: days {}, retrain days {} and k {} must be >= 1, and a "
                    "horizon given",
                    o.days, o.retrain_days, o.k_lowest)};
  }
  if (o.issue_hours.empty() || o.issue_hours.front() < 0 || o.issue_hours.back() > 23 ||
      std::adjacent_find(o.issue_hours.begin(), o.issue_hours.end(),
                         [](int a, int b) { return a >= b; }) != o.issue_hours.end()) {
    return Error{"evaluate: issue hours must be UTC hours 0-23, ascending, each once"};
  }
  if (floor_mod(o.start_s, kDayS) != 0) {
    return Error{fmt::format("evaluate: the window starts at {}, not at 00:00 UTC",
                             format_utc_time(o.start_s))};
  }
  const int max_h = *std::max_element(o.horizons.begin(), o.horizons.end());
  const int min_h = *std::min_element(o.horizons.begin(), o.horizons.end());
  if (min_h < 1 || max_h > o.train.max_horizon_h) {
    return Error{fmt::format("evaluate: horizons must lie in 1..{} h", o.train.max_horizon_h)};
  }
  for (const EvalZone& z : zones) {
    if (Status s = validate_series(z.series); !s.ok()) return s.error();
    const std::size_t known = known_count(z.series, o.start_s);
    if (known < kMinHistoryH) {
      return Error{fmt::format(
          "evaluate: series {} has {} h before the window's start {}; the learned forecast needs "
          "{} h",
          z.series.name, known, format_utc_time(o.start_s), kMinHistoryH)};
    }
  }

  // The retraining points and their models (each trained on data ending at its point).
  std::vector<int64_t> points;
  for (int d = 0; d < o.days; d += o.retrain_days) points.push_back(o.start_s + d * kDayS);
  std::vector<ZoneSeries> inputs;
  for (const EvalZone& z : zones) {
    inputs.push_back({&z.series, z.exog.size() > 0 ? &z.exog : nullptr});
  }
  std::vector<LearnedModel> models(points.size());
  EvalResult result;
  result.retrains.resize(points.size());
  Status trained = parallel_for(points.size(), o.jobs, [&](std::size_t p) -> Status {
    const auto t0 = std::chrono::steady_clock::now();
    TrainOptions t = o.train;
    t.until_s = points[p];
    auto m = LearnedModel::train(inputs, t);
    if (!m.ok()) return m.status();
    models[p] = std::move(m.value());
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    result.retrains[p] = {points[p],  models[p].trained_until_s(),    models[p].training_rows(),
                          dt.count(), models[p].correction_weights(), models[p].guarded()};
    return Status::Ok();
  });
  if (!trained.ok()) return trained.error();

  std::vector<int> all_h(static_cast<std::size_t>(max_h));
  std::iota(all_h.begin(), all_h.end(), 1);
  // (window day, issue time) of every issue, in time order.
  std::vector<std::pair<int, int64_t>> issue_times;
  for (int d = 0; d < o.days; ++d) {
    for (const int hour : o.issue_hours) {
      issue_times.emplace_back(d, o.start_s + static_cast<int64_t>(d) * kDayS + kHourS * hour);
    }
  }
  result.metrics.resize(zones.size());
  for (std::size_t zi = 0; zi < zones.size(); ++zi) {
    const EvalZone& z = zones[zi];
    const Series& s = z.series;
    // The MAPE floor: 1 % of the mean |actual| over the window's hours.
    double abs_sum = 0;
    std::size_t n = 0;
    const std::size_t w0 = known_count(s, o.start_s);
    const std::size_t w1 = known_count(s, o.start_s + static_cast<int64_t>(o.days) * kDayS);
    for (std::size_t j = w0; j < w1; ++j, ++n) abs_sum += std::abs(s.values[j]);
    const double floor = n > 0 ? 0.01 * abs_sum / static_cast<double>(n) : 0.0;
    std::vector<std::array<ErrorSums, kModels>> sums;
    for (std::size_t hi = 0; hi < o.horizons.size(); ++hi) {
      sums.push_back({ErrorSums(floor, o.k_lowest), ErrorSums(floor, o.k_lowest),
                      ErrorSums(floor, o.k_lowest), ErrorSums(floor, o.k_lowest)});
    }
    for (const auto& [d, now] : issue_times) {
      const std::size_t known = known_count(s, now);
      if (target_index(known, min_h) >= s.size()) break;  // no horizon fits in the data
      const std::size_t p = static_cast<std::size_t>(d / o.retrain_days);
      const LearnedModel& model = models[p];
      if (model.trained_until_s() > now) {
        return Error{fmt::format("evaluate: the model for {} was trained on data up to {}",
                                 format_utc_time(now), format_utc_time(model.trained_until_s())),
                     ErrorCode::kInternal};
      }
      result.issues.push_back({zi, now, model.trained_until_s()});
      const std::size_t fit =
          std::min<std::size_t>(static_cast<std::size_t>(max_h), s.size() - known);
      const std::span<const int> hs(all_h.data(), fit);
      auto learned = model.forecast(inputs[zi], now, hs);
      if (!learned.ok()) return learned.status().error();
      std::array<std::vector<double>, kModels> f = {learned.value(), seasonal_naive(s, now, hs),
                                                    same_hour(s, now, hs), oracle(s, now, hs)};
      const std::vector<double>& actual = f[3];
      if (z.known_until) {
        const int64_t until = z.known_until(now);
        for (std::size_t k = 0; k < fit; ++k) {
          if (s.time_of(known + k) >= until) break;
          for (std::size_t m = 0; m + 1 < kModels; ++m) f[m][k] = actual[k];
        }
      }
      for (std::size_t m = 0; m < kModels; ++m) {
        for (double v : f[m]) {
          if (!std::isfinite(v)) {
            return Error{fmt::format("evaluate: {} forecast for {} at {} is not finite",
                                     kModelNames[m], s.name, format_utc_time(now)),
                         ErrorCode::kInternal};
          }
        }
      }
      for (std::size_t hi = 0; hi < o.horizons.size(); ++hi) {
        const auto h = static_cast<std::size_t>(o.horizons[hi]);
        if (h > fit) continue;
        for (std::size_t m = 0; m < kModels; ++m) {
          sums[hi][m].add(std::span<const double>(f[m].data(), h),
                          std::span<const double>(actual.data(), h));
        }
      }
    }
    for (const auto& per_h : sums) {
      std::array<Metrics, kModels> row;
      for (std::size_t m = 0; m < kModels; ++m) row[m] = per_h[m].finish();
      result.metrics[zi].push_back(row);
    }
  }
  return result;
}

}  // namespace greensched::forecast
