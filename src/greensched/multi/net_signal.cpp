#include "greensched/multi/net_signal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "greensched/core/utc_time.hpp"
#include "greensched/energy/controller.hpp"
#include "greensched/energy/price_series.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kHour = 3600;

double surplus_share(double generation_kwh, double demand_kwh, double job_kwh) {
  const double surplus = generation_kwh - demand_kwh;
  return job_kwh > 0 ? std::clamp(surplus / job_kwh, 0.0, 1.0) : (surplus > 0 ? 1.0 : 0.0);
}

}  // namespace

NetHour net_hour(double generation_kwh, double demand_kwh, double job_kwh, double grid_price,
                 double grid_carbon, bool allow_export, double export_price) {
  return net_hour(generation_kwh, demand_kwh, job_kwh, grid_price, grid_carbon, allow_export,
                  export_price, BatteryOffer{}, 0.0);
}

NetHour stored_kwh(const NetHour& source, double round_trip_efficiency) {
  return NetHour{source.price_per_kwh / round_trip_efficiency,
                 source.carbon_g_per_kwh / round_trip_efficiency, 0.0};
}

NetHour net_hour(double generation_kwh, double demand_kwh, double job_kwh, double grid_price,
                 double grid_carbon, bool allow_export, double export_price,
                 const BatteryOffer& battery, double carbon_price_usd_per_t) {
  const double covered = surplus_share(generation_kwh, demand_kwh, job_kwh);
  const double forgone = allow_export ? export_price : 0.0;
  const double rest = 1.0 - covered;
  double share = 0;
  if (rest > 0 && battery.max_kwh > 0 &&
      energy::weighted_price(battery.stored.price_per_kwh, battery.stored.carbon_g_per_kwh,
                             carbon_price_usd_per_t) <
          energy::weighted_price(grid_price, grid_carbon, carbon_price_usd_per_t)) {
    share = job_kwh > 0 ? std::min(rest, battery.max_kwh / job_kwh) : rest;
  }
  const double grid = rest - share;
  return NetHour{covered * forgone + share * battery.stored.price_per_kwh + grid * grid_price,
                 share * battery.stored.carbon_g_per_kwh + grid * grid_carbon, share};
}

const std::vector<NetSignalCache::Hour>& NetSignalCache::hours(const SiteSpec& site, int site_index,
                                                               const Forecaster& forecaster,
                                                               const GenerationForecast& generation,
                                                               int64_t now) {
  const int64_t hour = floor_hour(now);
  if (hour != now_hour_) {
    now_hour_ = hour;
    for (auto& h : hours_) h.clear();
  }
  if (hours_.size() <= static_cast<std::size_t>(site_index)) hours_.resize(site_index + 1);
  std::vector<Hour>& hs = hours_[site_index];
  if (hs.empty()) {
    const int64_t n = kBackH + kLookaheadS / kHour + 2;
    hs.resize(static_cast<std::size_t>(n));
    const int64_t published_until =
        day_ahead_prices_ && site.energy
            ? energy::day_ahead_published_until(now, site.energy->utc_offset_s)
            : std::numeric_limits<int64_t>::min();
    for (int64_t k = 0; k < n; ++k) {
      const int64_t t = hour + (k - kBackH) * kHour;
      Hour& h = hs[static_cast<std::size_t>(k)];
      h.carbon = forecaster.at(site.carbon, now, t);
      h.price = !site.price           ? 0.0
                : t < published_until ? site.price->at(t)
                                      : forecaster.at(*site.price, now, t);
      h.generation_kwh = generation.kwh(now, t);
    }
  }
  return hs;
}

SignalView NetSignalCache::mean(const SiteSpec& site, int site_index, const Forecaster& forecaster,
                                const GenerationForecast& generation, int64_t now, int64_t from,
                                int64_t to, double demand_kw, double job_kw) {
  SignalView v;
  if (to <= from) to = from + 1;
  const std::vector<Hour>& hs = hours(site, site_index, forecaster, generation, now);
  const SiteEnergy& e = *site.energy;
  const int64_t last = static_cast<int64_t>(hs.size()) - 1;
  const auto index_of = [&](int64_t t) {
    return std::clamp(kBackH + (floor_hour(t) - now_hour_) / kHour, int64_t{0}, last);
  };
  const auto net = [&](const Hour& h, const BatteryOffer& battery) {
    return net_hour(h.generation_kwh, demand_kw, job_kw, h.price, h.carbon, e.allow_export,
                    e.export_price_usd_per_kwh, battery, carbon_price_usd_per_t_);
  };

  // The battery: what it may still give this job (kWh), and a sliding minimum over the hours
  // it may have stored energy in (window_[head..], increasing weight, increasing index).
  const energy::BatterySpec& b = e.battery;
  const bool has_battery = b.capacity_kwh > 0 && b.max_discharge_kw > 0 && b.soc_max > b.soc_min;
  double left_kwh =
      has_battery ? (b.soc_max - b.soc_min) * b.capacity_kwh * std::sqrt(b.round_trip_efficiency)
                  : 0.0;
  window_.clear();
  std::size_t head = 0;
  int64_t next_source = index_of(from) - kBackH;

  const int64_t horizon = std::max(from, std::min(to, now_hour_ + kLookaheadS));
  double price = 0, carbon = 0;
  for (int64_t a = from; a < horizon;) {
    const int64_t end = std::min(horizon, floor_hour(a) + kHour);
    const double w = static_cast<double>(end - a);
    const int64_t k = index_of(a);
    BatteryOffer battery;
    if (has_battery) {
      for (; next_source < k; ++next_source) {
        if (next_source < 0) continue;
        Source s;
        s.index = next_source;
        s.kwh =
            stored_kwh(net(hs[static_cast<std::size_t>(next_source)], {}), b.round_trip_efficiency);
        s.weight = energy::weighted_price(s.kwh.price_per_kwh, s.kwh.carbon_g_per_kwh,
                                          carbon_price_usd_per_t_);
        while (window_.size() > head && window_.back().weight >= s.weight) window_.pop_back();
        window_.push_back(s);
      }
      while (head < window_.size() && window_[head].index < k - kBackH) ++head;
      if (head < window_.size()) {
        battery.stored = window_[head].kwh;
        battery.max_kwh = std::min(b.max_discharge_kw, left_kwh * kHour / w);
      }
    }
    const NetHour h = net(hs[static_cast<std::size_t>(k)], battery);
    left_kwh = std::max(0.0, left_kwh - h.battery_share * job_kw * w / kHour);
    price += w * h.price_per_kwh;
    carbon += w * h.carbon_g_per_kwh;
    a = end;
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
