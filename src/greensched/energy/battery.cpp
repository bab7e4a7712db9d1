#include "greensched/energy/battery.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace greensched::energy {
namespace {

double non_negative(double v) {
  return std::isfinite(v) && v > 0 ? v : 0.0;
}

}  // namespace

Status validate(const BatterySpec& s) {
  const auto finite_non_negative = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!finite_non_negative(s.capacity_kwh)) {
    return Error{fmt::format("battery: capacity_kwh {} is not a number >= 0", s.capacity_kwh)};
  }
  if (!finite_non_negative(s.max_charge_kw) || !finite_non_negative(s.max_discharge_kw)) {
    return Error{fmt::format("battery: max_charge_kw {} / max_discharge_kw {} must be >= 0",
                             s.max_charge_kw, s.max_discharge_kw)};
  }
  if (!(s.round_trip_efficiency > 0 && s.round_trip_efficiency <= 1)) {
    return Error{fmt::format("battery: round_trip_efficiency {} is outside (0, 1]",
                             s.round_trip_efficiency)};
  }
  if (!(s.soc_min >= 0 && s.soc_min <= s.soc_max && s.soc_max <= 1)) {
    return Error{
        fmt::format("battery: need 0 <= soc_min ({}) <= soc_max ({}) <= 1", s.soc_min, s.soc_max)};
  }
  if (!(s.initial_soc >= s.soc_min && s.initial_soc <= s.soc_max)) {
    return Error{fmt::format("battery: initial_soc {} is outside [soc_min {}, soc_max {}]",
                             s.initial_soc, s.soc_min, s.soc_max)};
  }
  return Status::Ok();
}

Result<Battery> Battery::make(const BatterySpec& spec) {
  if (auto st = validate(spec); !st.ok()) return Error{st.message()};
  return Battery(spec);
}

Battery::Battery(const BatterySpec& spec)
    : spec_(spec),
      eta_(std::sqrt(spec.round_trip_efficiency)),
      stored_kwh_(spec.initial_soc * spec.capacity_kwh) {}

Battery::Flows Battery::limit(double charge_kwh, double discharge_kwh, double hours) const {
  Flows f;
  if (!(hours > 0) || !std::isfinite(hours) || !(spec_.capacity_kwh > 0)) return f;
  const double charge_cap = spec_.max_charge_kw * hours;
  const double discharge_cap = spec_.max_discharge_kw * hours;
  f.charge_kwh = std::min(non_negative(charge_kwh), charge_cap);
  f.discharge_kwh = std::min(non_negative(discharge_kwh), discharge_cap);
  // Time-sharing within the step.
  const double share = (charge_cap > 0 ? f.charge_kwh / charge_cap : 0) +
                       (discharge_cap > 0 ? f.discharge_kwh / discharge_cap : 0);
  if (share > 1) {
    f.charge_kwh /= share;
    f.discharge_kwh /= share;
  }
  // The end state must lie in the window; the start state always does.
  const double end = stored_kwh_ + eta_ * f.charge_kwh - f.discharge_kwh / eta_;
  if (end > max_kwh()) {
    f.charge_kwh = std::max(0.0, f.charge_kwh - (end - max_kwh()) / eta_);
  } else if (end < min_kwh()) {
    f.discharge_kwh = std::max(0.0, f.discharge_kwh - (min_kwh() - end) * eta_);
  }
  return f;
}

Battery::Flows Battery::step(double charge_kwh, double discharge_kwh, double hours) {
  const Flows f = limit(charge_kwh, discharge_kwh, hours);
  // The clamp only absorbs rounding in the trims above.
  stored_kwh_ =
      std::clamp(stored_kwh_ + eta_ * f.charge_kwh - f.discharge_kwh / eta_, min_kwh(), max_kwh());
  charged_kwh_ += f.charge_kwh;
  discharged_kwh_ += f.discharge_kwh;
  drawn_kwh_ += f.discharge_kwh / eta_;
  return f;
}

double Battery::charge(double kw, double hours) {
  return step(non_negative(kw) * non_negative(hours), 0, hours).charge_kwh;
}

double Battery::discharge(double kw, double hours) {
  return step(0, non_negative(kw) * non_negative(hours), hours).discharge_kwh;
}

double Battery::soc() const {
  if (!(spec_.capacity_kwh > 0)) return spec_.initial_soc;
  return std::clamp(stored_kwh_ / spec_.capacity_kwh, spec_.soc_min, spec_.soc_max);
}

double Battery::full_cycles() const {
  const double usable = usable_kwh();
  return usable > 0 ? drawn_kwh_ / usable : 0.0;
}

}  // namespace greensched::energy
