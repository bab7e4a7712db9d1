// The marginal price and carbon of energy a job adds at a site with on-site generation, as a
// dispatch agent can know them. In an hour where the site's generation exceeds its demand, the
// extra kWh comes from the surplus: it forgoes the feed-in price (or nothing, where surplus is
// curtailed) and emits nothing; otherwise it is imported at the grid's price and carbon. A job
// larger than the surplus is covered in part.
//
// What the agent sees: generation from the site's weather of that hour through the solar and
// wind models (a day-ahead weather forecast taken as exact) for hours up to kLookaheadS after
// now, and beyond that none; the site's demand as its facility power now (persistence); grid
// price and carbon from the agent's forecaster (only the past, unless an oracle). The battery
// is left out: it is the site controller's, decided after dispatch.
#pragma once

#include <cstdint>
#include <vector>

#include "greensched/multi/agent.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/forecast.hpp"

namespace greensched::multi {

struct NetHour {
  double price_per_kwh = 0;
  double carbon_g_per_kwh = 0;
};

// One hour. covered = (generation - demand) / job, clamped to [0, 1] (job_kwh <= 0: 1 when
// generation > demand, else 0); surplus is worth `export_price` when exported, 0 when curtailed.
NetHour net_hour(double generation_kwh, double demand_kwh, double job_kwh, double grid_price,
                 double grid_carbon, bool allow_export, double export_price);

// Means of net_hour over [from, to) (epoch seconds), weighted by the seconds of each hour,
// for a site with an `energy` block; grid forecasts are computed once per site and hour of now.
class NetSignalCache {
 public:
  static constexpr int64_t kLookaheadS = 48 * 3600;

  SignalView mean(const SiteSpec& site, int site_index, const Forecaster& forecaster, int64_t now,
                  int64_t from, int64_t to, double demand_kw, double job_kw);

 private:
  // Forecast grid price and carbon for hours now_hour_ + k, k = 0..kLookaheadS / 3600 + 1.
  const std::vector<NetHour>& grid(const SiteSpec& site, int site_index,
                                   const Forecaster& forecaster, int64_t now);

  int64_t now_hour_ = -1;
  std::vector<std::vector<NetHour>> grid_;  // per site index; empty until asked
};

}  // namespace greensched::multi
