// The dispatch agents' Forecaster (forecast.hpp) on the learned models of mpc_forecast.hpp
// (`multi --forecast learned`): a site's carbon intensity and price at hour t are the model's
// forecast issued at `now` for the horizon that reaches t, the same models the mpc controller
// plans on (trained once per window, on samples that end at or before the window's start).
// Everything the models cannot answer is the same-hour forecaster's (make_same_hour_forecaster):
//  - a series with no model (too little history before the window, no price series, a series
//    that is not one of the fleet's the models were built from);
//  - `now` before the models' training end (the warm-up before the window: a model trained on
//    those hours would see what it forecasts there);
//  - fewer than forecast::kMinHistoryH samples complete at `now`;
//  - t in a sample already complete at `now` (the sample itself), or beyond the model's
//    horizons (max_horizon_h, the mpc's --mpc-horizon) or the series' end.
// No look-ahead: a forecast at `now` reads only samples complete at `now`.
//
// The trees run once per series and issue hour for all the runs of a window: LearnedForecasts
// keeps every forecast the models issued, shared by the runs (and threads) that read it; each
// forecaster keeps the latest one it read of each series, so that the agents' many questions
// about the same few series each instant take no lock.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"

#include "greensched/multi/fleet.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/multi/mpc_forecast.hpp"

namespace greensched::multi {

// One window's learned models and the forecasts they issued. Thread-safe. A forecast depends
// only on its series and the samples complete at its issue (forecast::LearnedModel::forecast),
// so what a run reads does not depend on which run, or thread, asked first.
class LearnedForecasts {
 public:
  // The forecasts issued when `known` samples of a series were complete: values[k] is sample
  // known + k (horizon k + 1); prefix[k] = values[0] + ... + values[k - 1]. Empty: the model
  // could not forecast there (too little history, the series' end).
  struct Issue {
    int64_t known = 0;
    std::vector<double> values;
    std::vector<double> prefix;
  };

  explicit LearnedForecasts(std::shared_ptr<const MpcForecastModels> models);

  const MpcForecastModels& models() const { return *models_; }
  std::shared_ptr<const MpcForecastModels> shared_models() const { return models_; }

  // The forecasts of `model` for `series` (one of models()' series) issued at `now`, each
  // floored at `floor`; `known` = forecast::known_count(series, now). Computed at the first
  // call (outside the lock: other series are served meanwhile); the reference stays valid.
  const Issue& issue(const forecast::LearnedModel& model, const forecast::Series& series,
                     int64_t now, int64_t known, double floor) const;

 private:
  std::shared_ptr<const MpcForecastModels> models_;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<const forecast::Series*, int64_t>, Issue> issued_;
};

// `forecasts` must come from `fleet` (train_mpc_forecasts or load_mpc_forecasts on it): each
// site's carbon and price TimeSeries are matched to the models' series by site. One forecaster
// per simulation; `forecasts` may be shared by any number of them.
std::unique_ptr<Forecaster> make_learned_forecaster(
    const Fleet& fleet, std::shared_ptr<const LearnedForecasts> forecasts, int same_hour_days = 7);

// The same on forecasts of its own.
std::unique_ptr<Forecaster> make_learned_forecaster(const Fleet& fleet,
                                                    std::shared_ptr<const MpcForecastModels> models,
                                                    int same_hour_days = 7);

// The first hour a run of `pods` on `fleet` measures from trace second `measure_from_s`
// (MultiResult::energy_hour0_s): the window the learned models of its agents and its mpc are
// trained before.
int64_t measured_hour0_s(const Fleet& fleet, const std::vector<PodSpec>& pods,
                         int64_t measure_from_s);

// Learned forecasts by window, made once when a run of the window first asks for them and kept
// for every run that follows (the command line's plans, the Python package's runs and
// environments' episodes). Thread-safe: a window is made under the lock, so runs of one window
// wait for one training.
class LearnedForecastsByWindow {
 public:
  // Makes the models of `fleet`'s window that starts at `window_start_s` (e.g. by
  // train_mpc_forecasts). The runs asking for a window must all give the same fleet's series.
  using Maker =
      std::function<Result<MpcForecastModels>(const Fleet& fleet, int64_t window_start_s)>;
  explicit LearnedForecastsByWindow(Maker make) : make_(std::move(make)) {}
  // Trains each window's models on its past (train_mpc_forecasts with its default horizon).
  LearnedForecastsByWindow();

  struct Got {
    std::shared_ptr<const LearnedForecasts> forecasts;
    bool made = false;  // by this call (the first for the window): its models' notes are new
  };
  Result<Got> get(const Fleet& fleet, int64_t window_start_s);

 private:
  Maker make_;
  std::mutex mutex_;
  std::map<int64_t, std::shared_ptr<const LearnedForecasts>> windows_;
};

}  // namespace greensched::multi
