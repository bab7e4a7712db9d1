// The marginal price and carbon of energy a job adds at a site with its own energy, as a
// dispatch agent can know them. Each hour h of the job's run, its kWh come, in this order:
//  1. from the site's surplus, where generation exceeds demand: a kWh forgoes the feed-in
//     price (or nothing, where surplus is curtailed) and emits nothing;
//  2. from the battery, where the site has one and that weighs less than the grid at h: the
//     kWh was stored in the best earlier hour h' of the kBatteryHoldS before h and costs that
//     hour's own net price and carbon (steps 1 and 3 at h') divided by the round-trip
//     efficiency, since each kWh delivered took 1 / eta_rt kWh then;
//  3. from the grid at h's price and carbon.
// "Weighs" is the price plus a carbon price times the carbon: the weight the site controllers
// give an import (controller_carbon_price_usd_per_t in agent.hpp), which is the price alone
// except under green-cost-carbon. Price and carbon are always the chosen source's: a kWh from
// the battery carries the carbon of the hour it was bought in, even where that exceeds the
// grid's at h, as a controller that buys the cheap hours does.
//
// How much each source can give: the surplus covers (generation - demand) / job of the job's
// kWh; the battery at most its discharge power in each hour and, over the whole run, one swing
// of its usable capacity (soc_max - soc_min) x capacity x eta_d; the grid the rest. The site's
// own use of the battery is left out: the view credits it to this job alone.
//
// Why 24 hours back: the controllers plan the battery a day at a time (mpc's 24 h horizon,
// greedy's 24 h price window) and batteries sized at 4 hours of half the mean demand cycle
// once or twice a day, so a kWh is rarely held longer. The time a battery takes to fill
// (usable / charge power, about 3 hours) would drop the usual shifts from midday or night
// to the evening; more than a day would credit trades between days that no controller plans.
//
// What the agent sees: generation from the site's GenerationForecast (generation_forecast.hpp,
// the one the site controllers read) for hours up to kLookaheadS after now, and beyond that
// none and no battery either (the grid alone); past hours' generation as it was; the site's
// demand as its facility power now, past hours included (persistence); grid price and carbon
// from the agent's forecaster: the actual values for hours that have ended, a forecast from
// the past (unless an oracle) for the others, except prices a day-ahead auction has published
// when the run knows them (energy::day_ahead_published_until). Whether the battery does store
// that energy is the site controller's decision, made after dispatch.
#pragma once

#include <cstdint>
#include <vector>

#include "greensched/multi/agent.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/multi/generation_forecast.hpp"

namespace greensched::multi {

struct NetHour {
  double price_per_kwh = 0;
  double carbon_g_per_kwh = 0;
  double battery_share = 0;  // of the job's kWh, served by the battery
};

// One hour without a battery. covered = (generation - demand) / job, clamped to [0, 1]
// (job_kwh <= 0: 1 when generation > demand, else 0); surplus is worth `export_price` when
// exported, 0 when curtailed; the rest is the grid's.
NetHour net_hour(double generation_kwh, double demand_kwh, double job_kwh, double grid_price,
                 double grid_carbon, bool allow_export, double export_price);

// A kWh the battery delivers, charged in an hour whose net view is `source`: the source's
// price and carbon divided by the round-trip efficiency.
NetHour stored_kwh(const NetHour& source, double round_trip_efficiency);

// What the battery offers a job in one hour: a kWh at `stored` (from stored_kwh), at most
// `max_kwh` of them.
struct BatteryOffer {
  NetHour stored;
  double max_kwh = 0;
};

// One hour with a battery: as net_hour, then the battery serves min(1 - covered, max_kwh /
// job_kwh) of the job's kWh (job_kwh <= 0: all of 1 - covered) instead of the grid, when its
// kWh weighs less than the grid's: price + carbon_price_usd_per_t x g / 1e6 (ties: the grid).
NetHour net_hour(double generation_kwh, double demand_kwh, double job_kwh, double grid_price,
                 double grid_carbon, bool allow_export, double export_price,
                 const BatteryOffer& battery, double carbon_price_usd_per_t);

// Means of the net view over [from, to) (epoch seconds), weighted by the seconds of each hour,
// for a site with an `energy` block; grid forecasts and generation are computed once per site
// and hour of now.
class NetSignalCache {
 public:
  static constexpr int64_t kLookaheadS = 48 * 3600;
  static constexpr int64_t kBatteryHoldS = 24 * 3600;

  // carbon_price_usd_per_t: what the run's site controllers add to an import's price;
  // day_ahead_prices: prices a day-ahead auction has published are known, not forecast.
  explicit NetSignalCache(double carbon_price_usd_per_t = 0, bool day_ahead_prices = false)
      : carbon_price_usd_per_t_(carbon_price_usd_per_t), day_ahead_prices_(day_ahead_prices) {}

  SignalView mean(const SiteSpec& site, int site_index, const Forecaster& forecaster,
                  const GenerationForecast& generation, int64_t now, int64_t from, int64_t to,
                  double demand_kw, double job_kw);

 private:
  struct Hour {
    double price = 0;   // grid, USD/kWh
    double carbon = 0;  // grid, g/kWh
    double generation_kwh = 0;
  };
  struct Source {
    int64_t index = 0;  // in hours()
    NetHour kwh;        // a kWh delivered from energy stored in that hour
    double weight = 0;
  };
  static constexpr int64_t kBackH = kBatteryHoldS / 3600;  // hours() index of the hour of now

  // Hours now_hour_ - kBackH + k, k = 0..kBackH + kLookaheadS / 3600 + 1: forecast (or, for
  // hours that have ended, actual) grid price and carbon, and on-site generation.
  const std::vector<Hour>& hours(const SiteSpec& site, int site_index, const Forecaster& forecaster,
                                 const GenerationForecast& generation, int64_t now);

  double carbon_price_usd_per_t_ = 0;
  bool day_ahead_prices_ = false;
  int64_t now_hour_ = -1;
  std::vector<std::vector<Hour>> hours_;  // per site index; empty until asked
  std::vector<Source> window_;            // scratch: the battery's candidate sources
};

}  // namespace greensched::multi
