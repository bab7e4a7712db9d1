// Runs a site energy controller (energy/controller.hpp) on a finished fleet run: each site's
// hourly facility demand from the replay is served by its on-site generation, its battery and
// the grid, hour by hour over the measured window. The controller acts after dispatch and does
// not change it, so one replay per agent serves every controller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "greensched/core/status.hpp"
#include "greensched/energy/controller.hpp"
#include "greensched/multi/energy_result.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/generation_forecast.hpp"
#include "greensched/multi/mpc_forecast.hpp"

namespace greensched::multi {

// A site without an `energy` block has no generation and no battery: it imports its demand.
// Sites without a price series pay 0. `options.allow_export` is taken per site from its block.
// `options.carbon_price_usd_per_t` is the run's agent's (controller_carbon_price_usd_per_t in
// agent.hpp): 0 makes every controller minimise cost alone. The mpc controller reads each
// site's generation from a GenerationForecast made with `generation` (the agents' own), and
// plans on `learned`'s price and carbon forecasts where given (null: seasonal-naive); an error
// when a learned model was trained on data after the window's start (run.energy_hour0_s).
// Each site's controllers get history_wanted_h hours before the window as their past, fewer
// where the site's series hold fewer before it (site_history_h): hours before a series' start
// are unknown, never its repetition's last hours.
Result<EnergyResult> run_site_controllers(const Fleet& fleet, const MultiResult& run,
                                          energy::ControllerKind kind,
                                          const energy::ControllerOptions& options = {},
                                          const GenerationForecastOptions& generation = {},
                                          const MpcForecastModels* learned = nullptr);

// The past hours the forecasts (forecast_days) and greedy's price window read.
std::size_t history_wanted_h(const energy::ControllerOptions& options);
// The hours of the site's series (carbon, price, generation) before hour0_s, at most wanted_h:
// the fewest any of them holds (TimeSeries::history_s).
std::size_t site_history_h(const SiteSpec& site, int64_t hour0_s, std::size_t wanted_h);
// One line for stderr naming the sites whose series hold fewer than history_wanted_h hours
// before hour0_s, and what the controllers do with less; empty when every site has them all.
std::string short_history_note(const Fleet& fleet, int64_t hour0_s,
                               const energy::ControllerOptions& options);

}  // namespace greensched::multi
