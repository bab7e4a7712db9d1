#include "greensched/energy/controller.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "greensched/energy/dispatch_lp.hpp"
#include "greensched/trace/quantiles.hpp"

namespace greensched::energy {
namespace {

constexpr double kGramsPerTonne = 1e6;

ControllerRun run_none(const std::vector<HourInput>& hours, const BatterySpec& spec,
                       const ControllerOptions& options) {
  ControllerRun run;
  for (std::size_t t = options.history_h; t < hours.size(); ++t) {
    const HourInput& in = hours[t];
    HourOutput h = settle_hour(in, {}, options);
    h.soc = spec.initial_soc;
    record_hour(run, h, options);
  }
  return run;
}

Result<ControllerRun> run_greedy(const std::vector<HourInput>& hours, const BatterySpec& spec,
                                 const ControllerOptions& options) {
  std::vector<double> window;
  return run_with_battery(
      hours, spec, options, [&](std::size_t t, const Battery&) -> Result<BatteryRequest> {
        const HourInput& in = hours[t];
        BatteryRequest request;
        const double surplus = in.generation_kwh - in.demand_kwh;
        if (surplus > 0) request.charge_kwh = surplus;
        // Price thresholds from past hours only; none yet in the first hour.
        const std::size_t first = t > static_cast<std::size_t>(options.greedy_window_h)
                                      ? t - static_cast<std::size_t>(options.greedy_window_h)
                                      : 0;
        // Prices with the carbon price added, as settle_hour and the LP weigh an import.
        window.clear();
        for (std::size_t j = first; j < t; ++j) {
          window.push_back(effective_import_price(hours[j], options));
        }
        if (window.empty()) return request;
        const double price = effective_import_price(in, options);
        if (price <= trace::quantile(window, options.greedy_low_quantile)) {
          // One hour at full power.
          request.charge_kwh = std::max(request.charge_kwh, spec.max_charge_kw);
        } else if (surplus < 0 && price >= trace::quantile(window, options.greedy_high_quantile)) {
          request.discharge_kwh = -surplus;
        }
        return request;
      });
}

}  // namespace

Result<ControllerKind> parse_controller(std::string_view name) {
  if (name == "none") return ControllerKind::kNone;
  if (name == "greedy") return ControllerKind::kGreedy;
  if (name == "mpc") return ControllerKind::kMpc;
  if (name == "oracle") return ControllerKind::kOracle;
  return Error{
      fmt::format("unknown energy controller '{}' (expected none, greedy, mpc, oracle)", name)};
}

std::string_view controller_name(ControllerKind kind) {
  switch (kind) {
    case ControllerKind::kNone:
      return "none";
    case ControllerKind::kGreedy:
      return "greedy";
    case ControllerKind::kMpc:
      return "mpc";
    case ControllerKind::kOracle:
      return "oracle";
  }
  return "?";
}

double weighted_price(double price_usd_per_kwh, double carbon_g_per_kwh,
                      double carbon_price_usd_per_t) {
  return price_usd_per_kwh + carbon_price_usd_per_t * carbon_g_per_kwh / kGramsPerTonne;
}

double effective_import_price(const HourInput& in, const ControllerOptions& options) {
  return weighted_price(in.price_usd_per_kwh, in.carbon_g_per_kwh, options.carbon_price_usd_per_t);
}

HourOutput settle_hour(const HourInput& in, const Battery::Flows& flows,
                       const ControllerOptions& options) {
  HourOutput h;
  h.charge_kwh = flows.charge_kwh;
  h.discharge_kwh = flows.discharge_kwh;
  const double load = std::max(0.0, in.demand_kwh + flows.charge_kwh - flows.discharge_kwh);
  constexpr double kUnbounded = std::numeric_limits<double>::infinity();

  // Generation goes to the uses worth most first; stable sort keeps use > export > curtail
  // on ties.
  enum Use { kOnSite, kExport, kCurtail };
  struct Outlet {
    Use use;
    double worth;
    double room;
  };
  std::array<Outlet, 3> outlets{
      {{kOnSite, effective_import_price(in, options), load},
       {kExport, in.export_price_usd_per_kwh, options.allow_export ? kUnbounded : 0.0},
       {kCurtail, 0.0, kUnbounded}}};
  std::stable_sort(outlets.begin(), outlets.end(),
                   [](const Outlet& a, const Outlet& b) { return a.worth > b.worth; });
  double left = std::max(0.0, in.generation_kwh);
  for (const Outlet& o : outlets) {
    const double take = std::min(left, o.room);
    left -= take;
    if (o.use == kOnSite) h.onsite_used_kwh = take;
    if (o.use == kExport) h.export_kwh = take;
    if (o.use == kCurtail) h.curtailed_kwh = take;
  }
  h.import_kwh = std::max(0.0, load - h.onsite_used_kwh);
  h.cost_usd = h.import_kwh * in.price_usd_per_kwh - h.export_kwh * in.export_price_usd_per_kwh;
  h.carbon_kg = h.import_kwh * in.carbon_g_per_kwh / 1000.0;
  // On-site use includes generation stored in the battery: all of it that is not sold or shed.
  return h;
}

Battery::Flows apply_battery(Battery& battery, const HourInput& in, double charge_kwh,
                             double discharge_kwh) {
  const double demand = std::max(0.0, in.demand_kwh);
  charge_kwh = std::isfinite(charge_kwh) ? std::max(0.0, charge_kwh) : 0.0;
  discharge_kwh = std::isfinite(discharge_kwh) ? std::max(0.0, discharge_kwh) : 0.0;
  discharge_kwh = std::min(discharge_kwh, demand + charge_kwh);
  Battery::Flows f = battery.limit(charge_kwh, discharge_kwh, 1.0);
  if (f.discharge_kwh > demand + f.charge_kwh) {
    // The window trimmed the charge below what the discharge needed: discharge alone.
    f = battery.limit(0.0, std::min(discharge_kwh, demand), 1.0);
  }
  return battery.step(f.charge_kwh, f.discharge_kwh, 1.0);
}

Result<ControllerRun> run_with_battery(const std::vector<HourInput>& hours, const BatterySpec& spec,
                                       const ControllerOptions& options,
                                       const BatteryStrategy& strategy) {
  auto made = Battery::make(spec);
  if (!made.ok()) return Error{made.error()};
  Battery& battery = made.value();
  ControllerRun run;
  for (std::size_t t = options.history_h; t < hours.size(); ++t) {
    auto request = strategy(t, battery);
    if (!request.ok()) return Error{request.error()};
    const Battery::Flows flows =
        apply_battery(battery, hours[t], request.value().charge_kwh, request.value().discharge_kwh);
    HourOutput h = settle_hour(hours[t], flows, options);
    h.soc = battery.soc();
    record_hour(run, h, options);
  }
  run.full_cycles = battery.full_cycles();
  return run;
}

void record_hour(ControllerRun& run, const HourOutput& h, const ControllerOptions& options) {
  run.hours.push_back(h);
  run.cost_usd += h.cost_usd;
  run.carbon_kg += h.carbon_kg;
  run.objective_usd += h.cost_usd + options.carbon_price_usd_per_t * h.carbon_kg / 1000.0;
  run.import_kwh += h.import_kwh;
  run.export_kwh += h.export_kwh;
  run.curtailed_kwh += h.curtailed_kwh;
}

Status validate_inputs(const std::vector<HourInput>& hours, const ControllerOptions& o) {
  const auto bad = [](std::size_t i, std::string_view field, double v, std::string_view need) {
    return Error{fmt::format("energy controller: hour {}: {} {} is not {}", i, field, v, need)};
  };
  for (std::size_t i = 0; i < hours.size(); ++i) {
    const HourInput& in = hours[i];
    if (!(std::isfinite(in.demand_kwh) && in.demand_kwh >= 0)) {
      return bad(i, "demand_kwh", in.demand_kwh, "a number >= 0");
    }
    if (!(std::isfinite(in.generation_kwh) && in.generation_kwh >= 0)) {
      return bad(i, "generation_kwh", in.generation_kwh, "a number >= 0");
    }
    if (!std::isfinite(in.price_usd_per_kwh)) {
      return bad(i, "price_usd_per_kwh", in.price_usd_per_kwh, "finite");
    }
    if (!(std::isfinite(in.carbon_g_per_kwh) && in.carbon_g_per_kwh >= 0)) {
      return bad(i, "carbon_g_per_kwh", in.carbon_g_per_kwh, "a number >= 0");
    }
    if (!std::isfinite(in.export_price_usd_per_kwh)) {
      return bad(i, "export_price_usd_per_kwh", in.export_price_usd_per_kwh, "finite");
    }
  }
  if (!(std::isfinite(o.carbon_price_usd_per_t) && o.carbon_price_usd_per_t >= 0)) {
    return Error{fmt::format("energy controller: carbon_price_usd_per_t {} is not >= 0",
                             o.carbon_price_usd_per_t)};
  }
  if (o.mpc_horizon_h < 1 || o.forecast_days < 1 || o.greedy_window_h < 1) {
    return Error{fmt::format(
        "energy controller: mpc_horizon_h {}, forecast_days {}, greedy_window_h {} must be >= 1",
        o.mpc_horizon_h, o.forecast_days, o.greedy_window_h)};
  }
  if (o.history_h > 0 && o.history_h >= hours.size()) {
    return Error{fmt::format("energy controller: history_h {} leaves none of the {} hours given",
                             o.history_h, hours.size())};
  }
  if (o.mpc_known_price_h < 0) {
    return Error{
        fmt::format("energy controller: mpc_known_price_h {} must be >= 0", o.mpc_known_price_h)};
  }
  if (!(o.greedy_low_quantile >= 0 && o.greedy_low_quantile <= o.greedy_high_quantile &&
        o.greedy_high_quantile <= 1)) {
    return Error{
        fmt::format("energy controller: need 0 <= greedy_low_quantile ({}) <= "
                    "greedy_high_quantile ({}) <= 1",
                    o.greedy_low_quantile, o.greedy_high_quantile)};
  }
  return Status::Ok();
}

Result<ControllerRun> run_controller(ControllerKind kind, const std::vector<HourInput>& hours,
                                     const BatterySpec& battery, const ControllerOptions& options) {
  if (auto st = validate(battery); !st.ok()) return Error{st.message()};
  if (auto st = validate_inputs(hours, options); !st.ok()) return Error{st.message()};
  switch (kind) {
    case ControllerKind::kNone:
      return run_none(hours, battery, options);
    case ControllerKind::kGreedy:
      return run_greedy(hours, battery, options);
    case ControllerKind::kMpc:
      return run_mpc(hours, battery, options);
    case ControllerKind::kOracle:
      return run_oracle(hours, battery, options);
  }
  return Error{"energy controller: unknown kind"};
}

}  // namespace greensched::energy
