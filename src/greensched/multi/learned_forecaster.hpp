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
// No look-ahead: a forecast at `now` reads only samples complete at `now`. Forecasts are
// cached per series and issue hour (the samples complete at `now`): the agents ask for many
// hours of the same few series every instant, and the trees run once per series and hour.
#pragma once

#include <memory>

#include "greensched/multi/fleet.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/multi/mpc_forecast.hpp"

namespace greensched::multi {

// `models` must come from `fleet` (train_mpc_forecasts or load_mpc_forecasts on it): each
// site's carbon and price TimeSeries are matched to the models' series by site. One forecaster
// per simulation (its cache is not shared between threads); the models may be shared.
std::unique_ptr<Forecaster> make_learned_forecaster(const Fleet& fleet,
                                                    std::shared_ptr<const MpcForecastModels> models,
                                                    int same_hour_days = 7);

}  // namespace greensched::multi
