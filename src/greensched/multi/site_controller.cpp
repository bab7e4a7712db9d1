#include "greensched/multi/site_controller.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "greensched/core/utc_time.hpp"

namespace greensched::multi {
namespace {

// On-site generation in the hour holding epoch second t, kWh.
struct Generation {
  double pv = 0, wind = 0;
};
Generation generation_at(const SiteSpec& site, int64_t t) {
  if (!site.energy) return {};
  return {site.energy->pv_kwh.empty() ? 0.0 : site.energy->pv_kwh.at(t),
          site.energy->wind_kwh.empty() ? 0.0 : site.energy->wind_kwh.at(t)};
}

// The hour's figures at a site: its demand, generation, price, carbon, feed-in.
energy::HourInput site_hour(const SiteSpec& site, int64_t t, double demand_kwh,
                            const Generation& generation) {
  energy::HourInput in;
  in.demand_kwh = std::max(0.0, demand_kwh);
  in.generation_kwh = generation.pv + generation.wind;
  in.price_usd_per_kwh = site.price ? site.price->at(t) : 0.0;
  in.carbon_g_per_kwh = site.carbon.at(t);
  in.export_price_usd_per_kwh = site.energy ? site.energy->export_price_usd_per_kwh : 0.0;
  return in;
}

SiteEnergyHours site_inputs(const SiteSpec& site, const std::vector<double>& demand,
                            int64_t hour0_s, std::size_t history_h,
                            std::vector<energy::HourInput>& inputs) {
  SiteEnergyHours out;
  out.demand_kwh = demand;
  inputs.clear();
  // The past before the window, for the forecasts: the series' own hours (generation, price
  // and carbon are known once past), with the window's first demand held (persistence).
  for (std::size_t k = history_h; k > 0 && !demand.empty(); --k) {
    const int64_t t = hour0_s - 3600 * static_cast<int64_t>(k);
    inputs.push_back(site_hour(site, t, demand.front(), generation_at(site, t)));
  }
  for (std::size_t h = 0; h < demand.size(); ++h) {
    const int64_t t = hour0_s + 3600 * static_cast<int64_t>(h);
    const Generation generation = generation_at(site, t);
    const energy::HourInput in = site_hour(site, t, demand[h], generation);
    out.pv_kwh.push_back(generation.pv);
    out.wind_kwh.push_back(generation.wind);
    out.price_usd_per_kwh.push_back(in.price_usd_per_kwh);
    out.carbon_g_per_kwh.push_back(in.carbon_g_per_kwh);
    inputs.push_back(in);
  }
  return out;
}

// The learned forecasts of hours t .. t + ahead.size() - 1 of site i (hour 0 at hour0_s) over
// the seasonal-naive ones, where a model has them: horizons within its range, and the site's
// series with the model's history complete at the hour.
Status learned_ahead(const MpcForecastModels& m, std::size_t i, int64_t now, bool weighs_carbon,
                     std::vector<energy::HourInput>& ahead) {
  if (now < m.window_start_s) {
    return Error{fmt::format("learned forecast issued at {}, before the window's start {}",
                             format_utc_time(now), format_utc_time(m.window_start_s))};
  }
  const auto apply = [&](const std::optional<forecast::LearnedModel>& model,
                         const std::vector<forecast::Series>& series,
                         double energy::HourInput::*field, double floor) -> Status {
    if (!model || i >= series.size() || series[i].values.empty()) return Status::Ok();
    const forecast::Series& s = series[i];
    if (forecast::known_count(s, now) < forecast::kMinHistoryH) return Status::Ok();
    std::vector<int> horizons;
    for (std::size_t k = 0; k < ahead.size(); ++k) {
      const int h = static_cast<int>(k) + 1;
      if (h > model->max_horizon_h() ||
          forecast::target_index(forecast::known_count(s, now), h) >= s.size()) {
        break;
      }
      horizons.push_back(h);
    }
    if (horizons.empty()) return Status::Ok();
    auto f = model->forecast({&s, nullptr}, now, horizons);
    if (!f.ok()) return f.status();
    for (std::size_t k = 0; k < horizons.size(); ++k) {
      ahead[k].*field = std::max(floor, f.value()[k]);
    }
    return Status::Ok();
  };
  // Without a carbon price the plan does not depend on carbon: no carbon forecast is needed.
  if (weighs_carbon) {
    if (Status s = apply(m.carbon, m.carbon_series, &energy::HourInput::carbon_g_per_kwh, 0.0);
        !s.ok()) {
      return s;
    }
  }
  return apply(m.price, m.price_series, &energy::HourInput::price_usd_per_kwh,
               -std::numeric_limits<double>::infinity());
}

}  // namespace

std::size_t history_wanted_h(const energy::ControllerOptions& options) {
  return static_cast<std::size_t>(
      std::max({0, 24 * options.forecast_days, options.greedy_window_h}));
}

std::size_t site_history_h(const SiteSpec& site, int64_t hour0_s, std::size_t wanted_h) {
  std::size_t h = wanted_h;
  const auto limit = [&](const TimeSeries& s) {
    if (s.empty()) return;
    h = std::min(h, static_cast<std::size_t>(s.history_s(hour0_s) / 3600));
  };
  limit(site.carbon);
  if (site.price) limit(*site.price);
  if (site.energy) {
    limit(site.energy->pv_kwh);
    limit(site.energy->wind_kwh);
  }
  return h;
}

std::string short_history_note(const Fleet& fleet, int64_t hour0_s,
                               const energy::ControllerOptions& options) {
  const std::size_t wanted = history_wanted_h(options);
  std::string sites;
  std::size_t fewest = wanted;
  for (const SiteSpec& site : fleet.sites) {
    const std::size_t h = site_history_h(site, hour0_s, wanted);
    if (h >= wanted) continue;
    sites += fmt::format("{}{} {} h", sites.empty() ? "" : ", ", site.name, h);
    fewest = std::min(fewest, h);
  }
  if (sites.empty()) return {};
  return fmt::format(
      "energy controllers: {} h of history wanted before the window's start {}, the series hold "
      "fewer ({}): mpc's seasonal-naive forecast averages the past days there are ({}), greedy "
      "ranks the past prices there are",
      wanted, format_utc_time(hour0_s), sites,
      fewest >= 24 ? "at least one"
                   : (fewest > 0 ? "none at first: the mean of the past hours"
                                 : "none at first: the mean of the past hours, idle in the "
                                   "window's first hour"));
}

Result<EnergyResult> run_site_controllers(const Fleet& fleet, const MultiResult& run,
                                          energy::ControllerKind kind,
                                          const energy::ControllerOptions& options,
                                          const GenerationForecastOptions& generation,
                                          const MpcForecastModels* learned) {
  if (Status s = validate(generation); !s.ok()) return Error{s.message()};
  if (learned != nullptr) {
    // No look-ahead: the models saw nothing at or after the window's start.
    if (learned->window_start_s > run.energy_hour0_s) {
      return Error{fmt::format("learned forecasts for a window from {}, the run's starts at {}",
                               format_utc_time(learned->window_start_s),
                               format_utc_time(run.energy_hour0_s))};
    }
    for (const auto* model : {&learned->carbon, &learned->price}) {
      if (!*model) continue;
      if (Status s = check_trained_before(**model, run.energy_hour0_s,
                                          fmt::format("{} forecast", (*model)->kind()));
          !s.ok()) {
        return Error{s.message()};
      }
    }
  }
  EnergyResult result;
  result.controller = std::string(energy::controller_name(kind));
  result.carbon_kg = run.carbon_kg;
  double drawn_kwh = 0, usable_kwh = 0;
  std::vector<energy::HourInput> inputs;
  for (std::size_t i = 0; i < fleet.sites.size(); ++i) {
    const SiteSpec& site = fleet.sites[i];
    static const std::vector<double> kNone;
    const std::vector<double>& demand =
        i < run.site_hourly_kwh.size() ? run.site_hourly_kwh[i] : kNone;
    // As many past hours as the forecasts and greedy's window read, of those the data holds.
    const std::size_t history =
        demand.empty() ? 0 : site_history_h(site, run.energy_hour0_s, history_wanted_h(options));
    SiteEnergyHours hours = site_inputs(site, demand, run.energy_hour0_s, history, inputs);
    energy::ControllerOptions o = options;
    o.history_h = history;
    o.allow_export = site.energy && site.energy->allow_export;
    o.hour0_utc_s = run.energy_hour0_s - 3600 * static_cast<int64_t>(history);
    o.utc_offset_s = site.energy ? site.energy->utc_offset_s : 0;
    const GenerationForecast forecast =
        site.energy ? GenerationForecast(*site.energy, generation, static_cast<int>(i))
                    : GenerationForecast();
    o.generation_forecast = [&forecast, hour0 = o.hour0_utc_s](std::size_t t, std::size_t h) {
      return forecast.kwh(hour0 + 3600 * static_cast<int64_t>(t),
                          hour0 + 3600 * static_cast<int64_t>(h));
    };
    if (learned != nullptr) {
      o.mpc_forecast = [learned, i, hour0 = o.hour0_utc_s,
                        weighs_carbon = o.carbon_price_usd_per_t != 0](
                           std::size_t t, std::vector<energy::HourInput>& ahead) -> Status {
        return learned_ahead(*learned, i, hour0 + 3600 * static_cast<int64_t>(t), weighs_carbon,
                             ahead);
      };
    }
    const energy::BatterySpec battery = site.energy ? site.energy->battery : energy::BatterySpec{};
    auto ran = energy::run_controller(kind, inputs, battery, o);
    if (!ran.ok()) return Error{fmt::format("site {}: {}", site.name, ran.error())};
    hours.run = std::move(ran.value());
    const energy::ControllerRun& r = hours.run;
    result.cost_usd += r.cost_usd;
    result.grid_import_kwh += r.import_kwh;
    result.export_kwh += r.export_kwh;
    result.curtailed_kwh += r.curtailed_kwh;
    for (const energy::HourOutput& h : r.hours) result.onsite_kwh_used += h.onsite_used_kwh;
    for (std::size_t t = history; t < inputs.size(); ++t) {
      result.generation_kwh += inputs[t].generation_kwh;
    }
    const double usable = (battery.soc_max - battery.soc_min) * battery.capacity_kwh;
    drawn_kwh += r.full_cycles * usable;
    usable_kwh += usable;
    // Sites with their own energy report the carbon of what they import; the others keep the
    // replay's own figure (the same energy at the same intensity, integrated exactly).
    if (site.energy && i < run.site_carbon_kg.size()) {
      result.carbon_kg += r.carbon_kg - run.site_carbon_kg[i];
    }
    result.sites.push_back(std::move(hours));
  }
  result.self_consumption_pct =
      result.generation_kwh > 0 ? 100.0 * result.onsite_kwh_used / result.generation_kwh : 0.0;
  result.battery_cycles = usable_kwh > 0 ? drawn_kwh / usable_kwh : 0.0;
  return result;
}

}  // namespace greensched::multi
