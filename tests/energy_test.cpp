// energy/: hand-computed model values, battery and controller properties, and the readers on
// the real 2023 files (pinned hours) and on malformed files.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "greensched/core/utc_time.hpp"
#include "greensched/energy/battery.hpp"
#include "greensched/energy/controller.hpp"
#include "greensched/energy/cooling.hpp"
#include "greensched/energy/dispatch_lp.hpp"
#include "greensched/energy/price_series.hpp"
#include "greensched/energy/solar.hpp"
#include "greensched/energy/weather.hpp"
#include "greensched/energy/wind.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace greensched::energy {
namespace {

constexpr int64_t k2023 = 1672531200;  // 2023-01-01 00:00:00 UTC

// ---- civil time ----

TEST(EnergyCivilTime, ParsesStampsWithAndWithoutOffsets) {
  EXPECT_EQ(parse_offset_time("2023-01-01 00:00:00+00:00").value(), k2023);
  EXPECT_EQ(parse_offset_time("2023-01-01T00:30").value(), k2023 + 1800);
  EXPECT_EQ(parse_offset_time("2023-01-01T06:00:00+05:30").value(), k2023 + 1800);
  EXPECT_EQ(parse_offset_time("2023-01-01 01:00:00-01:00").value(), k2023 + 7200);
  EXPECT_EQ(parse_offset_time("2023-03-01T00:00Z").value(), k2023 + 59 * 86400);
  EXPECT_EQ(parse_offset_time("2024-02-29 00:00").value(), k2023 + 424 * 86400);  // leap day
  EXPECT_EQ(format_utc_time(k2023 + 3661), "2023-01-01 01:01:01");
  for (const char* bad : {"", "2023-01-01", "2023-02-29 00:00", "2023-01-01 24:00",
                          "2023-01-01 00:00:00+0100", "2023-01-01 00:00 x", "20230101T0000"}) {
    const auto r = parse_offset_time(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().find("expected YYYY-MM-DD"), std::string::npos) << r.error();
  }
}

// ---- solar ----

// 2023-03-20 (the March equinox is at 21:24 UTC that day). At longitude 0 the NOAA equation
// of time is -8.16 min, so solar noon is 12:08:10 UTC; Spencer's declination then is
// -0.459 deg.
constexpr int64_t kEquinoxNoonUtc = k2023 + 78 * 86400 + 12 * 3600 + 8 * 60 + 10;

TEST(EnergySolar, EquinoxSolarNoonZenithIsLatitudeMinusDeclination) {
  for (double lat : {0.0, 50.0}) {
    const SunPosition sun = sun_position(lat, 0.0, kEquinoxNoonUtc);
    EXPECT_NEAR(sun.equation_of_time_min, -8.16, 0.01);
    EXPECT_NEAR(sun.declination_deg, -0.459, 0.002);
    EXPECT_NEAR(sun.hour_angle_deg, 0.0, 0.01);
    EXPECT_NEAR(sun.zenith_deg, std::abs(lat - sun.declination_deg), 0.01) << lat;
    EXPECT_NEAR(sun.declination_deg, 0.0, 0.5);  // it is an equinox
  }
  // The same instant 15 degrees east is an hour past solar noon.
  EXPECT_NEAR(sun_position(0.0, 15.0, kEquinoxNoonUtc).hour_angle_deg, 15.0, 0.01);
}

TEST(EnergySolar, EquinoxSolarNoonOutputMatchesHandValues) {
  // 100 kW peak, 14 % losses, -0.4 %/C, NOCT 45 C, 25 C air, clear sky.
  //   lat 0:  z = 0.459 deg, cos z = 0.99997, GHI = 1098 * 0.99997 * exp(-0.057 / 0.99997)
  //           = 1037.12 W/m2; T_cell = 25 + 25/800 * 1037.12 = 57.41 C;
  //           P = 100 * 1.03712 * (1 - 0.004 * 32.41) * 0.86 = 77.63 kW.
  //   lat 50: z = 50.459 deg, cos z = 0.63693, GHI = 639.15 W/m2; T_cell = 44.97 C;
  //           P = 100 * 0.63915 * (1 - 0.004 * 19.97) * 0.86 = 50.58 kW.
  PvSite site;
  site.peak_kw = 100;
  site.latitude_deg = 0;
  EXPECT_NEAR(clear_sky_ghi_haurwitz(sun_position(0, 0, kEquinoxNoonUtc).cos_zenith), 1037.12,
              0.05);
  EXPECT_NEAR(pv_output_kw(site, kEquinoxNoonUtc, 0, 25), 77.63, 0.01);
  site.latitude_deg = 50;
  EXPECT_NEAR(clear_sky_ghi_haurwitz(sun_position(50, 0, kEquinoxNoonUtc).cos_zenith), 639.15,
              0.05);
  EXPECT_NEAR(pv_output_kw(site, kEquinoxNoonUtc, 0, 25), 50.58, 0.01);
  // Kasten-Czeplak at 50 % cloud: 639.15 * (1 - 0.75 * 0.5^3.4) = 593.74 W/m2.
  EXPECT_NEAR(cloudy_ghi_kasten_czeplak(639.15, 0.5), 593.74, 0.01);
  EXPECT_NEAR(cloudy_ghi_kasten_czeplak(1000, 1.0), 250.0, 1e-9);
  EXPECT_LT(pv_output_kw(site, kEquinoxNoonUtc, 100, 25),
            pv_output_kw(site, kEquinoxNoonUtc, 50, 25));
}

TEST(EnergySolar, ZeroAtNight) {
  PvSite site;
  site.peak_kw = 100;
  site.latitude_deg = 50;
  const int64_t midnight = kEquinoxNoonUtc - 12 * 3600;
  EXPECT_GT(sun_position(50, 0, midnight).zenith_deg, 90);
  EXPECT_EQ(pv_output_kw(site, midnight, 0, 10), 0.0);
  EXPECT_EQ(pv_energy_kwh(site, midnight - 1800, 0, 10), 0.0);
  EXPECT_EQ(clear_sky_ghi_haurwitz(-0.2), 0.0);
  // Over the noon hour the hourly energy is close to the noon power.
  EXPECT_NEAR(pv_energy_kwh(site, kEquinoxNoonUtc - 1800, 0, 25), 50.58, 0.5);
}

// ---- wind ----

TEST(EnergyWind, PowerCurveHandValues) {
  WindTurbine t;  // 2000 kW, cut-in 3, rated 12, cut-out 25 m/s
  EXPECT_EQ(turbine_power_kw(t, 2.9), 0.0);
  EXPECT_EQ(turbine_power_kw(t, 12.0), 2000.0);
  EXPECT_EQ(turbine_power_kw(t, 20.0), 2000.0);
  EXPECT_EQ(turbine_power_kw(t, 25.0), 0.0);  // at cut-out the turbine stops
  EXPECT_EQ(turbine_power_kw(t, 30.0), 0.0);
  // 2000 * (7.5^3 - 27) / (1728 - 27) = 2000 * 394.875 / 1701 = 464.286 kW
  EXPECT_NEAR(turbine_power_kw(t, 7.5), 464.286, 0.001);
  EXPECT_NEAR(turbine_power_kw(t, 3.0), 0.0, 1e-12);
}

TEST(EnergyWind, HubHeightPowerLaw) {
  // 5 * (80 / 10)^(1/7) = 5 * 1.34590 = 6.7295 m/s
  EXPECT_NEAR(hub_speed_ms(5.0, 80.0, 1.0 / 7.0), 6.7295, 1e-4);
  EXPECT_EQ(hub_speed_ms(5.0, 10.0, 1.0 / 7.0), 5.0);
  EXPECT_EQ(hub_speed_ms(-1.0, 80.0, 1.0 / 7.0), 0.0);
  WindTurbine t;
  EXPECT_NEAR(wind_output_kw(t, 5.0), turbine_power_kw(t, 6.7295), 0.01);
}

// ---- battery ----

BatterySpec spec_10kwh() {
  BatterySpec s;
  s.capacity_kwh = 10;
  s.max_charge_kw = 5;
  s.max_discharge_kw = 10;
  s.round_trip_efficiency = 0.81;  // 0.9 each way
  s.soc_min = 0.1;
  s.soc_max = 0.9;
  s.initial_soc = 0.1;
  return s;
}

TEST(EnergyBattery, ChargeDischargeHandValues) {
  Battery b = Battery::make(spec_10kwh()).value();
  EXPECT_DOUBLE_EQ(b.charge(20, 1), 5.0);  // power limit; stores 4.5 -> 5.5 kWh
  EXPECT_DOUBLE_EQ(b.stored_kwh(), 5.5);
  EXPECT_NEAR(b.charge(5, 1), 3.5 / 0.9, 1e-12);  // 3.5 kWh of room left
  EXPECT_DOUBLE_EQ(b.soc(), 0.9);
  EXPECT_NEAR(b.discharge(100, 1), 7.2, 1e-12);  // (9 - 1) * 0.9, under the 10 kW limit
  EXPECT_DOUBLE_EQ(b.soc(), 0.1);
  EXPECT_EQ(b.discharge(1, 1), 0.0);
  EXPECT_NEAR(b.full_cycles(), 1.0, 1e-12);  // 8 kWh drawn / 8 kWh usable
  EXPECT_EQ(b.charge(-3, 1), 0.0);
  EXPECT_EQ(b.charge(std::numeric_limits<double>::quiet_NaN(), 1), 0.0);
}

TEST(EnergyBattery, RejectsBadSpecs) {
  BatterySpec s = spec_10kwh();
  s.soc_min = 0.95;
  EXPECT_FALSE(Battery::make(s).ok());
  s = spec_10kwh();
  s.round_trip_efficiency = 0;
  EXPECT_FALSE(Battery::make(s).ok());
  s = spec_10kwh();
  s.initial_soc = 0.95;
  const auto r = Battery::make(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("initial_soc"), std::string::npos) << r.error();
}

TEST(EnergyBattery, RandomSequencesStayInWindowAndConserveEnergy) {
  std::mt19937_64 rng(20230101);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 20; ++trial) {
    BatterySpec s;
    s.capacity_kwh = 1 + 99 * u(rng);
    s.max_charge_kw = 50 * u(rng);
    s.max_discharge_kw = 50 * u(rng);
    s.round_trip_efficiency = 0.5 + 0.5 * u(rng);
    s.soc_min = 0.3 * u(rng);
    s.soc_max = 0.7 + 0.3 * u(rng);
    s.initial_soc = s.soc_min + (s.soc_max - s.soc_min) * u(rng);
    Battery b = Battery::make(s).value();
    const double eta = std::sqrt(s.round_trip_efficiency);
    const double start = b.stored_kwh();
    double in = 0, out = 0;
    for (int i = 0; i < 5000; ++i) {
      const double kw = -5 + 80 * u(rng);
      const double hours = 2 * u(rng);
      const int kind = static_cast<int>(3 * u(rng));
      if (kind == 0) {
        const double got = b.charge(kw, hours);
        ASSERT_GE(got, 0);
        ASSERT_LE(got, std::max(0.0, kw) * hours + 1e-12);
        ASSERT_LE(got, s.max_charge_kw * hours + 1e-12);
        in += got;
      } else if (kind == 1) {
        const double got = b.discharge(kw, hours);
        ASSERT_GE(got, 0);
        ASSERT_LE(got, s.max_discharge_kw * hours + 1e-12);
        out += got;
      } else {
        const Battery::Flows f = b.step(kw * hours, (80 * u(rng) - 5) * hours, hours);
        const double share =
            (s.max_charge_kw > 0 ? f.charge_kwh / (s.max_charge_kw * hours) : 0) +
            (s.max_discharge_kw > 0 ? f.discharge_kwh / (s.max_discharge_kw * hours) : 0);
        ASSERT_LE(share, 1 + 1e-9);
        in += f.charge_kwh;
        out += f.discharge_kwh;
      }
      ASSERT_GE(b.soc(), s.soc_min) << trial << " " << i;
      ASSERT_LE(b.soc(), s.soc_max) << trial << " " << i;
    }
    EXPECT_NEAR(b.stored_kwh() - start, eta * in - out / eta, 1e-6 * (1 + in + out)) << trial;
    EXPECT_NEAR(b.total_charged_kwh(), in, 1e-9 * (1 + in));
    EXPECT_NEAR(b.total_discharged_kwh(), out, 1e-9 * (1 + out));
  }
}

// ---- cooling ----

TEST(EnergyCooling, PueHandValuesAndBounds) {
  const CoolingModel m;  // 1.1 base, 18 C, 0.015 /C, 60 %, 0.002 /%, [1.05, 1.8], 1.4
  ASSERT_TRUE(validate(m).ok());
  EXPECT_DOUBLE_EQ(pue(m, 10, 50), 1.1);
  EXPECT_NEAR(pue(m, 28, 50), 1.25, 1e-12);
  EXPECT_NEAR(pue(m, 28, 80), 1.29, 1e-12);
  EXPECT_DOUBLE_EQ(pue(m, 90, 100), 1.8);
  EXPECT_DOUBLE_EQ(pue(m, std::numeric_limits<double>::quiet_NaN(), 50), 1.4);
  CoolingModel bad;
  bad.min_pue = 0.9;
  EXPECT_FALSE(validate(bad).ok());
}

// ---- controllers ----

std::vector<HourInput> three_hours() {
  std::vector<HourInput> h(3);
  const double prices[] = {0.1, 0.5, 0.3};
  for (int i = 0; i < 3; ++i) {
    h[i].demand_kwh = 10;
    h[i].price_usd_per_kwh = prices[i];
    h[i].carbon_g_per_kwh = 400;
  }
  return h;
}

BatterySpec shifting_battery() {
  BatterySpec s;
  s.capacity_kwh = 10;
  s.max_charge_kw = 10;
  s.max_discharge_kw = 10;
  s.round_trip_efficiency = 0.81;
  s.soc_min = 0;
  s.soc_max = 1;
  s.initial_soc = 0;
  return s;
}

TEST(EnergyController, OracleMatchesHandSolvedThreeHours) {
  // Prices 0.1, 0.5, 0.3 $/kWh, 10 kWh demand each hour, an empty 10 kWh battery with 10 kW
  // limits and 0.9 each way. A kWh stored in hour 0 costs 0.1 / 0.9 and returns 0.9 kWh;
  // worth it against both later hours, best against 0.5. The 10 kW limit caps the charge at
  // 10 kWh (9 stored), and 8.1 kWh comes back in hour 1:
  //   cost = 20 * 0.1 + (10 - 8.1) * 0.5 + 10 * 0.3 = 2 + 0.95 + 3 = 5.95 (none: 9.0).
  const auto run = run_controller(ControllerKind::kOracle, three_hours(), shifting_battery());
  ASSERT_TRUE(run.ok()) << run.error();
  const ControllerRun& r = run.value();
  EXPECT_NEAR(r.cost_usd, 5.95, 1e-6);
  EXPECT_NEAR(r.hours[0].import_kwh, 20, 1e-6);
  EXPECT_NEAR(r.hours[0].charge_kwh, 10, 1e-6);
  EXPECT_NEAR(r.hours[0].soc, 0.9, 1e-6);
  EXPECT_NEAR(r.hours[1].discharge_kwh, 8.1, 1e-6);
  EXPECT_NEAR(r.hours[1].import_kwh, 1.9, 1e-6);
  EXPECT_NEAR(r.hours[1].soc, 0.0, 1e-6);
  EXPECT_NEAR(r.hours[2].import_kwh, 10, 1e-6);
  EXPECT_NEAR(r.carbon_kg, (20 + 1.9 + 10) * 0.4, 1e-6);
  // The LP's own optimum is the same number.
  const auto plan = solve_dispatch_lp(three_hours(), shifting_battery(), 0, {}, 0);
  ASSERT_TRUE(plan.ok());
  EXPECT_NEAR(plan.value().objective_usd, 5.95, 1e-6);

  const auto none = run_controller(ControllerKind::kNone, three_hours(), shifting_battery());
  EXPECT_NEAR(none.value().cost_usd, 9.0, 1e-9);
  const auto greedy = run_controller(ControllerKind::kGreedy, three_hours(), shifting_battery());
  EXPECT_GE(greedy.value().cost_usd, 5.95 - 1e-9);
}

TEST(EnergyController, CarbonPriceShiftsTheOptimum) {
  // With carbon at 400 g/kWh in hour 0 and 0 g/kWh in hour 1 and a carbon price of
  // 1000 $/t (0.4 $/kWh in hour 0), storing in hour 0 costs (0.1 + 0.4) / 0.9 = 0.556 per
  // stored kWh, which returns 0.9 * 0.5 = 0.45: the oracle no longer shifts.
  auto hours = three_hours();
  hours[1].carbon_g_per_kwh = 0;
  hours[2].carbon_g_per_kwh = 0;
  ControllerOptions o;
  o.carbon_price_usd_per_t = 1000;
  const auto r = run_controller(ControllerKind::kOracle, hours, shifting_battery(), o).value();
  EXPECT_NEAR(r.hours[0].charge_kwh, 0, 1e-6);
  EXPECT_NEAR(r.cost_usd, 9.0, 1e-6);
  EXPECT_NEAR(r.objective_usd, 9.0 + 1000 * 4.0 / 1000, 1e-6);  // 4 kg in hour 0
}

TEST(EnergyController, GreedyWithACarbonPriceSkipsTheCheapDirtyHour) {
  // Prices 0.15, 0.10, 0.30 $/kWh; the cheap hour 1 is dirty (800 g/kWh), hours 0 and 2 are
  // clean. Without a carbon price greedy charges 10 kWh in hour 1 (0.10 <= the 25 % quantile
  // of {0.15}) and discharges 8.1 kWh in hour 2 (0.30 >= the 75 % quantile of {0.15, 0.10}):
  //   cost 10 * 0.15 + 20 * 0.10 + 1.9 * 0.30 = 4.07, carbon 20 * 0.8 = 16 kg.
  // At 100 $/t hour 1 weighs 0.10 + 0.08 = 0.18 > 0.15: no charge, nothing to discharge:
  //   cost 1.5 + 1.0 + 3.0 = 5.5, carbon 10 * 0.8 = 8 kg.
  auto hours = three_hours();
  hours[0].price_usd_per_kwh = 0.15;
  hours[0].carbon_g_per_kwh = 0;
  hours[1].price_usd_per_kwh = 0.10;
  hours[1].carbon_g_per_kwh = 800;
  hours[2].price_usd_per_kwh = 0.30;
  hours[2].carbon_g_per_kwh = 0;
  const auto cost_only = run_controller(ControllerKind::kGreedy, hours, shifting_battery());
  ASSERT_TRUE(cost_only.ok()) << cost_only.error();
  EXPECT_NEAR(cost_only.value().hours[1].charge_kwh, 10, 1e-9);
  EXPECT_NEAR(cost_only.value().hours[2].discharge_kwh, 8.1, 1e-9);
  EXPECT_NEAR(cost_only.value().cost_usd, 4.07, 1e-9);
  EXPECT_NEAR(cost_only.value().carbon_kg, 16, 1e-9);
  ControllerOptions o;
  o.carbon_price_usd_per_t = 100;
  const auto priced = run_controller(ControllerKind::kGreedy, hours, shifting_battery(), o);
  ASSERT_TRUE(priced.ok()) << priced.error();
  EXPECT_NEAR(priced.value().hours[1].charge_kwh, 0, 1e-9);
  EXPECT_NEAR(priced.value().cost_usd, 5.5, 1e-9);
  EXPECT_NEAR(priced.value().carbon_kg, 8, 1e-9);
  EXPECT_NEAR(priced.value().objective_usd, 5.5 + 100 * 8.0 / 1000, 1e-9);
}

TEST(EnergyController, SettlementExportsCurtailsAndImportsAtLeastCost) {
  HourInput in;
  in.demand_kwh = 10;
  in.generation_kwh = 15;
  in.price_usd_per_kwh = 0.2;
  in.export_price_usd_per_kwh = 0.05;
  in.carbon_g_per_kwh = 300;
  ControllerOptions o;
  HourOutput h = settle_hour(in, {}, o);
  EXPECT_DOUBLE_EQ(h.onsite_used_kwh, 10);
  EXPECT_DOUBLE_EQ(h.export_kwh, 5);
  EXPECT_DOUBLE_EQ(h.import_kwh, 0);
  EXPECT_DOUBLE_EQ(h.cost_usd, -0.25);
  o.allow_export = false;
  h = settle_hour(in, {}, o);
  EXPECT_DOUBLE_EQ(h.curtailed_kwh, 5);
  EXPECT_DOUBLE_EQ(h.cost_usd, 0);
  // A negative grid price: sell all generation, buy the demand (paid 1 $), earn 0.75 $.
  o.allow_export = true;
  in.price_usd_per_kwh = -0.1;
  h = settle_hour(in, {}, o);
  EXPECT_DOUBLE_EQ(h.export_kwh, 15);
  EXPECT_DOUBLE_EQ(h.import_kwh, 10);
  EXPECT_DOUBLE_EQ(h.cost_usd, -1.75);
  EXPECT_DOUBLE_EQ(h.carbon_kg, 3.0);
  // Battery flows change the load the generation meets: 10 + 4 - 0 = 14.
  in.price_usd_per_kwh = 0.2;
  h = settle_hour(in, {4, 0}, o);
  EXPECT_DOUBLE_EQ(h.onsite_used_kwh, 14);
  EXPECT_DOUBLE_EQ(h.export_kwh, 1);
}

// Random hourly inputs with a daily shape, negative prices included.
std::vector<HourInput> random_hours(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<HourInput> hours(static_cast<std::size_t>(n));
  const double peak_gen = 30 * u(rng);
  for (int t = 0; t < n; ++t) {
    HourInput& h = hours[static_cast<std::size_t>(t)];
    const double day = std::sin(2 * M_PI * (t % 24 - 6) / 24.0);
    h.demand_kwh = 5 + 10 * u(rng);
    h.generation_kwh = std::max(0.0, day) * peak_gen * u(rng);
    h.price_usd_per_kwh = 0.15 + 0.1 * std::cos(2 * M_PI * (t % 24 - 19) / 24.0) +
                          0.1 * (u(rng) - 0.5) - (u(rng) < 0.05 ? 0.3 : 0.0);
    h.carbon_g_per_kwh = 100 + 500 * u(rng);
    h.export_price_usd_per_kwh = u(rng) < 0.5 ? 0.03 : 0.08 * u(rng) - 0.02;
  }
  return hours;
}

TEST(EnergyController, NoControllerBeatsTheOracleAndAllKeepTheBattery) {
  std::mt19937_64 rng(16);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 12; ++trial) {
    const auto hours = random_hours(rng, 72);
    BatterySpec s;
    s.capacity_kwh = 5 + 40 * u(rng);
    s.max_charge_kw = 2 + 18 * u(rng);
    s.max_discharge_kw = 2 + 18 * u(rng);
    s.round_trip_efficiency = 0.7 + 0.3 * u(rng);
    s.soc_min = 0.2 * u(rng);
    s.soc_max = 0.8 + 0.2 * u(rng);
    s.initial_soc = s.soc_min + (s.soc_max - s.soc_min) * u(rng);
    ControllerOptions o;
    o.allow_export = u(rng) < 0.7;
    o.carbon_price_usd_per_t = u(rng) < 0.5 ? 0.0 : 100 * u(rng);
    const auto oracle = run_controller(ControllerKind::kOracle, hours, s, o);
    ASSERT_TRUE(oracle.ok()) << oracle.error();
    const double bound = oracle.value().objective_usd;
    const auto plan = solve_dispatch_lp(hours, s, s.initial_soc * s.capacity_kwh, o, 0);
    ASSERT_TRUE(plan.ok());
    EXPECT_NEAR(bound, plan.value().objective_usd, 1e-6 * (1 + std::abs(bound))) << trial;
    for (ControllerKind kind : {ControllerKind::kNone, ControllerKind::kGreedy,
                                ControllerKind::kMpc, ControllerKind::kOracle}) {
      const auto run = run_controller(kind, hours, s, o);
      ASSERT_TRUE(run.ok()) << run.error();
      const ControllerRun& r = run.value();
      EXPECT_GE(r.objective_usd, bound - 1e-6 * (1 + std::abs(bound)))
          << controller_name(kind) << " trial " << trial;
      ASSERT_EQ(r.hours.size(), hours.size());
      for (std::size_t t = 0; t < hours.size(); ++t) {
        const HourOutput& h = r.hours[t];
        const HourInput& in = hours[t];
        ASSERT_GE(h.soc, s.soc_min) << controller_name(kind) << " hour " << t;
        ASSERT_LE(h.soc, s.soc_max) << controller_name(kind) << " hour " << t;
        EXPECT_NEAR(in.generation_kwh + h.import_kwh + h.discharge_kwh,
                    in.demand_kwh + h.charge_kwh + h.export_kwh + h.curtailed_kwh, 1e-9);
        EXPECT_NEAR(h.onsite_used_kwh + h.export_kwh + h.curtailed_kwh, in.generation_kwh, 1e-9);
        EXPECT_GE(h.import_kwh, 0);
        EXPECT_GE(h.export_kwh, 0);
        EXPECT_GE(h.curtailed_kwh, 0);
        if (!o.allow_export) {
          EXPECT_EQ(h.export_kwh, 0);
        }
      }
    }
  }
}

TEST(EnergyController, MpcSeesOnlyThePast) {
  // Changing the future cannot change what mpc did before it.
  std::mt19937_64 rng(7);
  auto hours = random_hours(rng, 60);
  BatterySpec s = shifting_battery();
  const auto before = run_controller(ControllerKind::kMpc, hours, s).value();
  for (std::size_t t = 40; t < hours.size(); ++t) hours[t].price_usd_per_kwh += 1.0;
  const auto after = run_controller(ControllerKind::kMpc, hours, s).value();
  for (std::size_t t = 0; t <= 40; ++t) {
    EXPECT_DOUBLE_EQ(before.hours[t].charge_kwh, after.hours[t].charge_kwh) << t;
    EXPECT_DOUBLE_EQ(before.hours[t].discharge_kwh, after.hours[t].discharge_kwh) << t;
  }
}

// The seasonal-naive forecast averages the past days there are: with 2 days of history and
// forecast_days 7, hour k of the first plan (at hour 48) is the mean of hours k and 24 + k:
// prices k / 100 and 0.5 + k / 100 give 0.25 + k / 100, carbon 100 and 300 give 200. With no
// history the first hour idles and the plan at hour 1 holds hour 0's values for every hour
// (no same hour yet: the mean of the past, one hour).
TEST(EnergyController, MpcForecastAveragesTheDaysOfHistoryThereAre) {
  std::vector<HourInput> hours(72);
  for (std::size_t t = 0; t < hours.size(); ++t) {
    const double k = static_cast<double>(t % 24);
    hours[t] = HourInput{5.0, 0.0, (t >= 24 && t < 48 ? 0.5 : 0.0) + k / 100, 0.0, 0.0};
    hours[t].carbon_g_per_kwh = t < 24 ? 100.0 : (t < 48 ? 300.0 : 900.0);
  }
  ControllerOptions o;
  o.forecast_days = 7;
  o.history_h = 48;
  std::vector<std::vector<HourInput>> seen(hours.size());
  o.mpc_forecast = [&](std::size_t t, std::vector<HourInput>& ahead) {
    seen[t] = ahead;
    return Status::Ok();
  };
  ASSERT_TRUE(run_controller(ControllerKind::kMpc, hours, shifting_battery(), o).ok());
  ASSERT_EQ(seen[48].size(), 24U);
  for (std::size_t k = 0; k < 24; ++k) {
    EXPECT_NEAR(seen[48][k].price_usd_per_kwh, 0.25 + static_cast<double>(k) / 100, 1e-12) << k;
    EXPECT_NEAR(seen[48][k].carbon_g_per_kwh, 200.0, 1e-12) << k;
  }
  for (std::size_t t = 0; t < 48; ++t) EXPECT_TRUE(seen[t].empty()) << t;  // history: no plan
  // No history: hour 0 idles; at hour 1 every hour ahead is hour 0's.
  o.history_h = 0;
  for (auto& v : seen) v.clear();
  const auto none = run_controller(ControllerKind::kMpc, hours, shifting_battery(), o).value();
  EXPECT_TRUE(seen[0].empty());
  EXPECT_EQ(none.hours[0].charge_kwh, 0.0);
  EXPECT_EQ(none.hours[0].discharge_kwh, 0.0);
  ASSERT_EQ(seen[1].size(), 24U);
  for (const HourInput& f : seen[1]) {
    EXPECT_DOUBLE_EQ(f.price_usd_per_kwh, 0.0);
    EXPECT_DOUBLE_EQ(f.carbon_g_per_kwh, 100.0);
  }
}

// A day-ahead auction publishes the next local day's prices at 12:00 local time: at a site one
// hour ahead of UTC, from 2023-01-01T00:00Z, the first hour (01:00 local) knows the 23 hours left
// of today; at 11:00 local, 13; at 12:00 local (hour 11), today's 12 and tomorrow's 24.
TEST(EnergyController, DayAheadPricesArePublishedAtLocalNoon) {
  ControllerOptions o;
  o.hour0_utc_s = 1672531200;
  o.utc_offset_s = 3600;
  EXPECT_EQ(o.day_ahead_known_h(0), 23);
  EXPECT_EQ(o.day_ahead_known_h(10), 13);
  EXPECT_EQ(o.day_ahead_known_h(11), 36);
  EXPECT_EQ(o.day_ahead_known_h(22), 25);  // 23:00 local
  EXPECT_EQ(o.day_ahead_known_h(23), 24);  // 00:00 local: the new today is known, not tomorrow
  o.utc_offset_s = -8 * 3600;              // 16:00 local the day before at hour 0
  EXPECT_EQ(o.day_ahead_known_h(0), 32);
}

// mpc with day-ahead prices sees the coming prices (here a spike 20 hours ahead, known once
// published) that the past-only mpc cannot: it charges for it and pays less.
TEST(EnergyController, MpcWithDayAheadPricesPaysLess) {
  std::vector<HourInput> hours(72);
  for (std::size_t t = 0; t < hours.size(); ++t) {
    hours[t] = HourInput{10.0, 0.0, 0.1, 300.0, 0.0};
  }
  for (std::size_t t = 44; t < 48; ++t) hours[t].price_usd_per_kwh = 1.0;  // day 2, 20-23 h
  const BatterySpec s = shifting_battery();
  ControllerOptions past;
  ControllerOptions ahead;
  ahead.mpc_day_ahead = true;
  ahead.hour0_utc_s = 1672531200;
  const auto p = run_controller(ControllerKind::kMpc, hours, s, past).value();
  const auto a = run_controller(ControllerKind::kMpc, hours, s, ahead).value();
  EXPECT_LT(a.cost_usd, p.cost_usd - 1.0);
}

// The hour as it happens: in hour 1 the sun gives 30 kWh that the past-only forecast (hour 0's
// 0 kWh) did not expect. The plan is idle (flat prices: storing loses the round trip), but the
// 20 kWh the site does not need would be exported at 0.01 USD/kWh while a stored kWh is worth
// eta_d x 0.1 = 0.0949 USD: the battery takes them, 10 + 20 x sqrt(0.9) = 28.97 kWh stored,
// nothing exported. At a feed-in price of 0.098, above that worth, the surplus is exported;
// at that price without export (curtailment earns nothing) it is stored again.
TEST(EnergyController, MpcStoresTheGenerationItsForecastMissed) {
  const std::vector<HourInput> hours = {
      {10.0, 0.0, 0.1, 300.0, 0.01}, {10.0, 30.0, 0.1, 300.0, 0.01}, {10.0, 0.0, 0.1, 300.0, 0.01}};
  BatterySpec s;
  s.capacity_kwh = 100;
  s.max_charge_kw = s.max_discharge_kw = 50;
  s.round_trip_efficiency = 0.9;
  s.soc_min = 0.1;
  s.soc_max = 0.9;
  s.initial_soc = 0.1;
  const ControllerRun kept = run_controller(ControllerKind::kMpc, hours, s).value();
  EXPECT_NEAR(kept.hours[1].charge_kwh, 20.0, 1e-9);
  EXPECT_NEAR(kept.hours[1].soc, (10.0 + 20.0 * std::sqrt(0.9)) / 100.0, 1e-9);
  EXPECT_NEAR(kept.hours[1].export_kwh, 0.0, 1e-9);
  EXPECT_NEAR(kept.hours[1].import_kwh, 0.0, 1e-9);
  std::vector<HourInput> dear = hours;
  for (HourInput& h : dear) h.export_price_usd_per_kwh = 0.098;
  const ControllerRun sold = run_controller(ControllerKind::kMpc, dear, s).value();
  EXPECT_NEAR(sold.hours[1].charge_kwh, 0.0, 1e-9);
  EXPECT_NEAR(sold.hours[1].export_kwh, 20.0, 1e-9);
  EXPECT_NEAR(sold.hours[1].soc, 0.1, 1e-9);
  // Where the site may not export, the surplus would be curtailed, worth nothing: stored.
  ControllerOptions no_export;
  no_export.allow_export = false;
  const ControllerRun kept_anyway =
      run_controller(ControllerKind::kMpc, dear, s, no_export).value();
  EXPECT_NEAR(kept_anyway.hours[1].charge_kwh, 20.0, 1e-9);
  EXPECT_NEAR(kept_anyway.hours[1].curtailed_kwh, 0.0, 1e-9);
}

// History before the span: read by the forecasts, not run or booked. Prices are 0.05 USD/kWh
// at night (0-5 h) and 0.5 at 18-21 h every day; with two past days mpc knows the pattern from
// the window's first hour and pays less over the window than with none, while `none`, which
// reads nothing, books the same window either way.
TEST(EnergyController, HistoryIsReadNotBooked) {
  std::vector<HourInput> all(72);
  for (std::size_t t = 0; t < all.size(); ++t) {
    const std::size_t h = t % 24;
    all[t] = HourInput{10.0, 0.0, h < 6 ? 0.05 : h >= 18 && h < 22 ? 0.5 : 0.1, 300.0, 0.0};
  }
  const std::vector<HourInput> window(all.begin() + 48, all.end());
  const BatterySpec s = shifting_battery();
  ControllerOptions with;
  with.history_h = 48;
  const auto mpc_with = run_controller(ControllerKind::kMpc, all, s, with).value();
  const auto mpc_without = run_controller(ControllerKind::kMpc, window, s).value();
  ASSERT_EQ(mpc_with.hours.size(), 24u);
  EXPECT_LT(mpc_with.cost_usd, mpc_without.cost_usd - 1.0);
  const auto none_with = run_controller(ControllerKind::kNone, all, s, with).value();
  const auto none_without = run_controller(ControllerKind::kNone, window, s).value();
  ASSERT_EQ(none_with.hours.size(), 24u);
  EXPECT_DOUBLE_EQ(none_with.cost_usd, none_without.cost_usd);
  const auto oracle_with = run_controller(ControllerKind::kOracle, all, s, with).value();
  const auto oracle_without = run_controller(ControllerKind::kOracle, window, s).value();
  EXPECT_NEAR(oracle_with.cost_usd, oracle_without.cost_usd, 1e-9);
  with.history_h = 72;  // nothing left to run
  EXPECT_FALSE(run_controller(ControllerKind::kMpc, all, s, with).ok());
}

TEST(EnergyController, RejectsBadInputs) {
  auto hours = three_hours();
  hours[1].demand_kwh = -1;
  auto r = run_controller(ControllerKind::kMpc, hours, shifting_battery());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("hour 1: demand_kwh -1"), std::string::npos) << r.error();
  hours = three_hours();
  hours[2].price_usd_per_kwh = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(run_controller(ControllerKind::kOracle, hours, shifting_battery()).ok());
  ControllerOptions o;
  o.mpc_horizon_h = 0;
  EXPECT_FALSE(run_controller(ControllerKind::kMpc, three_hours(), shifting_battery(), o).ok());
  EXPECT_TRUE(parse_controller("oracle").ok());
  EXPECT_FALSE(parse_controller("lp").ok());
}

// ---- readers ----

class EnergyReader : public ::testing::Test {
 protected:
  std::string write(const std::string& name, std::string_view text) {
    return scratch_.write(name, text);
  }
  // The price reader must fail with "path:line: " and mention `what`.
  void price_fails_at(std::string_view text, int line, std::string_view what) {
    const std::string path = write("p.csv", text);
    const auto r = read_price_series(path);
    ASSERT_FALSE(r.ok()) << text;
    const std::string prefix = fmt::format("{}:{}: ", path, line);
    EXPECT_EQ(r.error().rfind(prefix, 0), 0u) << r.error() << " (expected " << prefix << ")";
    EXPECT_NE(r.error().find(what), std::string::npos) << r.error();
  }
  // The weather reader must fail with "path: key: " and mention `what`.
  void weather_fails_at(std::string_view text, std::string_view key, std::string_view what) {
    const std::string path = write("w.json", text);
    const auto r = read_weather(path);
    ASSERT_FALSE(r.ok()) << text;
    const std::string prefix = fmt::format("{}: {}", path, key);
    EXPECT_EQ(r.error().rfind(prefix, 0), 0u) << r.error() << " (expected " << prefix << ")";
    EXPECT_NE(r.error().find(what), std::string::npos) << r.error();
  }
  testing::ScratchDir scratch_;
};

constexpr std::string_view kPriceHeader = "Datetime (UTC),Datetime (Local),Price (USD/MWh)\n";

TEST_F(EnergyReader, PricesInUsdPerKwhKeepNegatives) {
  const std::string path = write("p.csv", fmt::format("{}{}", kPriceHeader,
                                                      "2023-01-01 00:00:00+00:00,x,-3.5\n"
                                                      "2023-01-01 01:00:00+00:00,x,120\n"));
  const auto r = read_price_series(path);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().usd_per_kwh.start_s, k2023);
  EXPECT_EQ(r.value().stamp_offset_s, 0);
  ASSERT_EQ(r.value().usd_per_kwh.size(), 2u);
  EXPECT_DOUBLE_EQ(r.value().usd_per_kwh.values[0], -0.0035);
  EXPECT_DOUBLE_EQ(*r.value().usd_per_kwh.at(k2023 + 3599), -0.0035);
  EXPECT_DOUBLE_EQ(*r.value().usd_per_kwh.at(k2023 + 3600), 0.12);
  EXPECT_FALSE(r.value().usd_per_kwh.at(k2023 + 7200).has_value());
}

TEST_F(EnergyReader, PricesStampedAtHalfPastAreFlooredToTheHour) {
  const std::string path = write("p.csv", fmt::format("{}{}", kPriceHeader,
                                                      "2023-01-01 00:30:00+00:00,x,45\n"
                                                      "2023-01-01 01:30:00+00:00,x,60\n"));
  const auto r = read_price_series(path);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().usd_per_kwh.start_s, k2023);
  EXPECT_EQ(r.value().stamp_offset_s, 1800);
}

TEST_F(EnergyReader, MalformedPriceFilesAreRefusedWithFileAndLine) {
  const std::string h(kPriceHeader);
  price_fails_at("Datetime (UTC),Price\n2023-01-01 00:00:00,1\n", 1, "Price (USD/MWh)");
  price_fails_at(h + "2023-01-01 00:00:00+00:00,x,1\n2023-01-01 01:00:00+00:00,x,abc\n", 3,
                 "not a number");
  price_fails_at(h + "2023-01-01 00:00:00+00:00,x,1\n2023-01-01 00:30:00+00:00,x,2\n", 3,
                 "past the hour");
  price_fails_at(h + "2023-01-01 00:00:00+00:00,x,1\n2023-01-01 02:00:00+00:00,x,2\n", 3,
                 "not one hour after");
  price_fails_at(h + "2023-01-01 01:00:00+00:00,x,1\n2023-01-01 01:00:00+00:00,x,2\n", 3,
                 "not one hour after");
  price_fails_at(h + "2023-01-01 00:00:00+00:00,x,1\n2023-01-01 01:00:00+00:00,x\n", 3, "2 fields");
  price_fails_at(h + "yesterday,x,1\n", 2, "bad time");
  price_fails_at(h + "2023-01-01 00:00:00+01:00,x,1\n", 2, "not UTC");
  price_fails_at(h + "2023-01-01 00:00:00+00:00,x,inf\n", 2, "not a number");

  const std::string empty = write("empty.csv", h);
  const auto r = read_price_series(empty);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), empty + ": no data rows after the header");
  const auto missing = read_price_series(scratch_.file("nope.csv"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("nope.csv: cannot open"), std::string::npos);
}

TEST_F(EnergyReader, RealDeLuPricesPinnedHour) {
  const std::string path = price_file(::greensched::testing::shared_data_dir(), "DE-LU");
  GREENSCHED_REQUIRE_SHARED_FILE(path);
  const auto r = read_price_series(path);
  ASSERT_TRUE(r.ok()) << r.error();
  const HourlySeries& s = r.value().usd_per_kwh;
  EXPECT_EQ(s.size(), 8760u);
  EXPECT_EQ(s.start_s, k2023);
  EXPECT_EQ(r.value().stamp_offset_s, 0);
  // Line 4383: 2023-07-02 13:00:00+00:00, -484.39918 $/MWh (the year's minimum).
  const int64_t t = k2023 + 182 * 86400 + 13 * 3600;
  ASSERT_TRUE(s.at(t).has_value());
  EXPECT_DOUBLE_EQ(*s.at(t), -484.39918 / 1000);
  // Line 2: 2023-01-01 00:00:00+00:00, -3.3622368 $/MWh.
  EXPECT_DOUBLE_EQ(s.values[0], -3.3622368 / 1000);
}

TEST_F(EnergyReader, RealInWePricesStampedAtHalfPast) {
  const std::string path = price_file(::greensched::testing::shared_data_dir(), "IN-WE");
  GREENSCHED_REQUIRE_SHARED_FILE(path);
  const auto r = read_price_series(path);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().stamp_offset_s, 1800);
  EXPECT_EQ(r.value().usd_per_kwh.start_s, k2023);
  EXPECT_EQ(r.value().usd_per_kwh.size(), 8760u);
  EXPECT_DOUBLE_EQ(r.value().usd_per_kwh.values[0], 45.962554 / 1000);  // 00:30 UTC
}

std::string weather_json(std::string_view lat = "50.1", std::string_view time3 = "2023-01-01T02:00",
                         std::string_view temp1 = "2.5", std::string_view extra_key = "") {
  return fmt::format(
      R"({{"latitude":{},"longitude":8.6,"elevation":111.0,"utc_offset_seconds":3600,)"
      R"("hourly_units":{{"windspeed_10m":"km/h"}},"hourly":{{"time":["2023-01-01T00:00",)"
      R"("2023-01-01T01:00","{}"],"temperature_2m":[1.0,{},3.0],)"
      R"("relative_humidity_2m":[80,90,100],{}"windspeed_10m":[0.0,36.0,18.0]}}}})",
      lat, time3, temp1, extra_key.empty() ? R"("cloudcover":[0,50,100],)" : extra_key);
}

TEST_F(EnergyReader, WeatherOnAUtcGridInMetresPerSecond) {
  const auto r = read_weather(write("w.json", weather_json()));
  ASSERT_TRUE(r.ok()) << r.error();
  const Weather& w = r.value();
  EXPECT_DOUBLE_EQ(w.latitude_deg, 50.1);
  EXPECT_EQ(w.utc_offset_seconds, 3600);
  EXPECT_EQ(w.start_s, k2023 - 3600);  // local midnight at UTC+1
  ASSERT_EQ(w.hours(), 3u);
  EXPECT_EQ(w.time_of(2), k2023 + 3600);
  EXPECT_DOUBLE_EQ(w.temperature_c[1], 2.5);
  EXPECT_DOUBLE_EQ(w.cloud_cover_pct[1], 50);
  EXPECT_DOUBLE_EQ(w.wind_speed_10m_ms[1], 10.0);  // 36 km/h
  EXPECT_DOUBLE_EQ(w.wind_speed_10m_ms[2], 5.0);
}

TEST_F(EnergyReader, MalformedWeatherFilesAreRefusedWithFileAndKey) {
  weather_fails_at(weather_json(R"("50.1")"), "latitude", "is string, expected a number");
  weather_fails_at(weather_json("95"), "latitude", "outside");
  weather_fails_at(weather_json("50.1", "2023-01-01T03:00"), "hourly.time[2]",
                   "uniform hourly grid");
  weather_fails_at(weather_json("50.1", "2023-01-01T01:00"), "hourly.time[2]",
                   "uniform hourly grid");
  weather_fails_at(weather_json("50.1", "noon"), "hourly.time[2]", "bad time");
  weather_fails_at(weather_json("50.1", "2023-01-01T02:00", "null"), "hourly.temperature_2m[1]",
                   "is null");
  weather_fails_at(weather_json("50.1", "2023-01-01T02:00", "-120"), "hourly.temperature_2m[1]",
                   "outside");
  weather_fails_at(weather_json("50.1", "2023-01-01T02:00", "2.5", R"("x":1,)"),
                   "hourly.cloudcover", "missing");
  weather_fails_at(weather_json("50.1", "2023-01-01T02:00", "2.5", R"("cloudcover":[0,50],)"),
                   "hourly.cloudcover", "has 2 values, hourly.time has 3");
  weather_fails_at(weather_json("50.1", "2023-01-01T02:00", "2.5", R"("cloudcover":"lots",)"),
                   "hourly.cloudcover", "expected an array");
  weather_fails_at(weather_json("50.1", "2023-01-01T02:00", "2.5", R"("cloudcover":[0,50,120],)"),
                   "hourly.cloudcover[2]", "outside");
  std::string text = weather_json();
  text.replace(text.find("km/h"), 4, "m/s");
  weather_fails_at(text, "hourly_units.windspeed_10m", "expected \"km/h\"");
  text = weather_json();
  text.replace(text.find("3600"), 4, "\"1h\"");
  weather_fails_at(text, "utc_offset_seconds", "expected an integer");
  text = weather_json();
  text.replace(text.find("3600"), 4, "18446744073709551615");
  weather_fails_at(text, "utc_offset_seconds", "outside");
  weather_fails_at("[1,2]", "top level", "expected an object");
  weather_fails_at("{\"latitude\":", "not valid JSON", "JSON");
  weather_fails_at(R"({"latitude":1,"longitude":2,"elevation":3,"utc_offset_seconds":0})", "hourly",
                   "missing");
}

TEST_F(EnergyReader, RealDeLuWeatherPinnedHour) {
  const std::string path = weather_file(::greensched::testing::shared_data_dir(), "DE-LU");
  GREENSCHED_REQUIRE_SHARED_FILE(path);
  const auto r = read_weather(path);
  ASSERT_TRUE(r.ok()) << r.error();
  const Weather& w = r.value();
  EXPECT_NEAR(w.latitude_deg, 50.08787, 1e-9);
  EXPECT_NEAR(w.longitude_deg, 8.653846, 1e-9);
  EXPECT_EQ(w.utc_offset_seconds, 3600);
  EXPECT_EQ(w.hours(), 8760u);
  EXPECT_EQ(w.start_s, k2023 - 3600);  // "2023-01-01T00:00" local at UTC+1
  // hourly.time[4382] = "2023-07-02T14:00" local = 13:00 UTC: 22.2 C, 39 %, 34 %, 21.5 km/h.
  const std::size_t i = 4382;
  EXPECT_EQ(w.time_of(i), k2023 + 182 * 86400 + 13 * 3600);
  EXPECT_DOUBLE_EQ(w.temperature_c[i], 22.2);
  EXPECT_DOUBLE_EQ(w.relative_humidity_pct[i], 39);
  EXPECT_DOUBLE_EQ(w.cloud_cover_pct[i], 34);
  EXPECT_NEAR(w.wind_speed_10m_ms[i], 21.5 / 3.6, 1e-12);
}

}  // namespace
}  // namespace greensched::energy
