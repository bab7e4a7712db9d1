// A stationary battery with energy bookkeeping that can never leave its state-of-charge
// window, whatever is asked of it: requests are trimmed to the power limits and the window,
// so controllers (including an LP with floating-point noise) can pass raw plans through it.
//
// Round-trip efficiency is split evenly: eta_c = eta_d = sqrt(round_trip). Charging E kWh
// from the bus stores eta_c E; delivering E kWh to the bus draws E / eta_d from the store.
#pragma once

#include "greensched/core/status.hpp"

namespace greensched::energy {

struct BatterySpec {
  double capacity_kwh = 0;
  double max_charge_kw = 0;
  double max_discharge_kw = 0;
  double round_trip_efficiency = 0.9;  // (0, 1]
  double soc_min = 0.1;                // fractions of capacity, 0 <= soc_min <= soc_max <= 1
  double soc_max = 0.9;
  double initial_soc = 0.1;  // within [soc_min, soc_max]
};

// ok, or what is wrong with the spec ("battery: soc_min 0.5 > soc_max 0.4").
Status validate(const BatterySpec& spec);

class Battery {
 public:
  // Energy exchanged with the bus in one step, kWh.
  struct Flows {
    double charge_kwh = 0;     // taken from the bus
    double discharge_kwh = 0;  // delivered to the bus
  };

  static Result<Battery> make(const BatterySpec& spec);

  // Charges at `kw` for `hours`; returns the energy actually taken from the bus (kWh).
  double charge(double kw, double hours);
  // Discharges at `kw` for `hours`; returns the energy actually delivered (kWh).
  double discharge(double kw, double hours);

  // Both directions in one step, as the LP controllers model an hour: the battery may switch
  // between charging and discharging within the step, so charge / max_charge + discharge /
  // max_discharge <= hours (time-sharing), and only the end state must lie in the window.
  // What this would accept, without changing anything: requests are clamped to >= 0, to the
  // power limits, scaled to time-sharing, then charge (if the end state is too high) or
  // discharge (if too low) is trimmed.
  Flows limit(double charge_kwh, double discharge_kwh, double hours) const;
  // Applies limit(...) and returns what was exchanged.
  Flows step(double charge_kwh, double discharge_kwh, double hours);

  const BatterySpec& spec() const { return spec_; }
  double stored_kwh() const { return stored_kwh_; }
  // stored / capacity, clamped so that rounding in the division cannot step outside the
  // window (stored_kwh itself is clamped to [min_kwh, max_kwh]).
  double soc() const;
  double min_kwh() const { return spec_.soc_min * spec_.capacity_kwh; }
  double max_kwh() const { return spec_.soc_max * spec_.capacity_kwh; }
  double usable_kwh() const { return max_kwh() - min_kwh(); }
  double charge_efficiency() const { return eta_; }
  double discharge_efficiency() const { return eta_; }
  double total_charged_kwh() const { return charged_kwh_; }        // from the bus
  double total_discharged_kwh() const { return discharged_kwh_; }  // to the bus
  // Full-cycle equivalents: energy drawn from the store / usable capacity, so one swing from
  // soc_max to soc_min is exactly one cycle whatever the efficiency.
  double full_cycles() const;

 private:
  explicit Battery(const BatterySpec& spec);

  BatterySpec spec_;
  double eta_ = 1;
  double stored_kwh_ = 0;
  double charged_kwh_ = 0;
  double discharged_kwh_ = 0;
  double drawn_kwh_ = 0;  // from the store, before discharge losses
};

}  // namespace greensched::energy
