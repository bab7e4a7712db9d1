#include "greensched/multi/net_signal.hpp"

#include <algorithm>

namespace greensched::multi {
namespace {

constexpr int64_t kHour = 3600;

int64_t floor_hour(int64_t t) {
  return t - ((t % kHour) + kHour) % kHour;
}

}  // namespace

NetHour net_hour(double generation_kwh, double demand_kwh, double job_kwh, double grid_price,
                 double grid_carbon, bool allow_export, double export_price) {
  const double surplus = generation_kwh - demand_kwh;
  const double covered =
      job_kwh > 0 ? std::clamp(surplus / job_kwh, 0.0, 1.0) : (surplus > 0 ? 1.0 : 0.0);
  const double forgone = allow_export ? export_price : 0.0;
  return NetHour{covered * forgone + (1.0 - covered) * grid_price, (1.0 - covered) * grid_carbon};
}

const std::vector<NetHour>& NetSignalCache::grid(const SiteSpec& site, int site_index,
                                                 const Forecaster& forecaster, int64_t now) {
  const int64_t hour = floor_hour(now);
  if (hour != now_hour_) {
    now_hour_ = hour;
    for (auto& g : grid_) g.clear();
  }
  if (grid_.size() <= static_cast<std::size_t>(site_index)) grid_.resize(site_index + 1);
  std::vector<NetHour>& g = grid_[site_index];
  if (g.empty()) {
    const int64_t n = kLookaheadS / kHour + 2;
    g.resize(static_cast<std::size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      const int64_t t = hour + k * kHour;
      g[k].carbon_g_per_kwh = forecaster.at(site.carbon, now, t);
      g[k].price_per_kwh = site.price ? forecaster.at(*site.price, now, t) : 0.0;
    }
  }
  return g;
}

SignalView NetSignalCache::mean(const SiteSpec& site, int site_index, const Forecaster& forecaster,
                                int64_t now, int64_t from, int64_t to, double demand_kw,
                                double job_kw) {
  SignalView v;
  if (to <= from) to = from + 1;
  const std::vector<NetHour>& g = grid(site, site_index, forecaster, now);
  const SiteEnergy& e = *site.energy;
  const int64_t horizon = std::max(from, std::min(to, floor_hour(now) + kLookaheadS));
  double price = 0, carbon = 0;
  for (int64_t a = from; a < horizon;) {
    const int64_t b = std::min(horizon, floor_hour(a) + kHour);
    const std::size_t k = static_cast<std::size_t>((floor_hour(a) - floor_hour(now)) / kHour);
    const NetHour grid_hour = k < g.size() ? g[k] : g.back();
    const NetHour h =
        net_hour(e.generation_kwh(a), demand_kw, job_kw, grid_hour.price_per_kwh,
                 grid_hour.carbon_g_per_kwh, e.allow_export, e.export_price_usd_per_kwh);
    const double w = static_cast<double>(b - a);
    price += w * h.price_per_kwh;
    carbon += w * h.carbon_g_per_kwh;
    a = b;
  }
  if (horizon < to) {  // beyond the weather forecast: the grid
    const double w = static_cast<double>(to - horizon);
    carbon += w * forecaster.mean(site.carbon, now, horizon, to);
    if (site.price) price += w * forecaster.mean(*site.price, now, horizon, to);
  }
  const double span = static_cast<double>(to - from);
  v.carbon_g_per_kwh = carbon / span;
  v.price_per_kwh = price / span;
  return v;
}

}  // namespace greensched::multi
