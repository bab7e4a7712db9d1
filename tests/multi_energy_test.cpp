// Multi-cluster sites with their own energy: the fleet file's energy block, the hourly site
// demand a replay yields, the net marginal price and carbon agents see, and the site energy
// controllers run on a replay's demand (hand-computed cases, then properties on a small fleet).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "greensched/energy/price_series.hpp"
#include "greensched/energy/weather.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/net_signal.hpp"
#include "greensched/multi/site_controller.hpp"
#include "greensched/report/energy_writer.hpp"
#include "greensched/report/multi_writer.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "greensched/trace/workload.hpp"
#include "multi_fixtures.hpp"
#include "test_data.hpp"

namespace greensched::multi {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

using fixtures::job;
using fixtures::tiny_power_model;
using fixtures::two_sites;

// The three jobs of FleetCarbon.HandComputedTwoSitesThreeJobs, all on site a.
Result<MultiResult> three_jobs_on_a(const Fleet& fleet) {
  std::vector<PodSpec> pods = {job("j1", 2000, 1, 1000, 0, 3600),
                               job("j2", 2000, 1, 500, 1800, 5400),
                               job("j3", 4000, 0, 0, 3600, 7200)};
  const uint32_t shapes = trace::assign_shape_ids(pods);
  MultiOptions options;
  options.agent = "lowest-carbon-now";
  options.power_model = tiny_power_model();
  options.data_gb_per_job = 0;
  return run_fleet(fleet, pods, shapes, options);
}

TEST(MultiEnergyFile, ParsesABlockWithoutFiles) {
  std::optional<TimeSeries> price;
  auto e = parse_site_energy(nlohmann::json::parse(R"({"battery": {"kwh": 400, "kw": 100,
      "efficiency": 0.81, "soc_min": 0.2, "soc_max": 0.8}, "export_price": 0.02})"),
                             "f.json: sites[0].energy", "", price);
  ASSERT_TRUE(e.ok()) << e.error();
  EXPECT_DOUBLE_EQ(e.value().battery.capacity_kwh, 400);
  EXPECT_DOUBLE_EQ(e.value().battery.max_charge_kw, 100);
  EXPECT_DOUBLE_EQ(e.value().battery.max_discharge_kw, 100);
  EXPECT_DOUBLE_EQ(e.value().battery.round_trip_efficiency, 0.81);
  EXPECT_DOUBLE_EQ(e.value().battery.initial_soc, 0.2);
  EXPECT_TRUE(e.value().allow_export);
  EXPECT_DOUBLE_EQ(e.value().export_price_usd_per_kwh, 0.02);
  EXPECT_FALSE(price.has_value());
  EXPECT_DOUBLE_EQ(e.value().generation_kwh(0), 0.0);
  // Without export_price the surplus is curtailed.
  auto curtail = parse_site_energy(nlohmann::json::parse("{}"), "w", ".", price);
  ASSERT_TRUE(curtail.ok());
  EXPECT_FALSE(curtail.value().allow_export);
}

TEST(MultiEnergyFile, RefusesMalformedBlocksNamingFileAndKey) {
  const struct {
    const char* block;
    const char* error;
  } cases[] = {
      {R"({"solar": 1})", "f.json: sites[0].energy.solar: unknown key"},
      {R"({"pv_kw": "big"})", "f.json: sites[0].energy.pv_kw: is string, expected a number"},
      {R"({"pv_kw": -1})", "f.json: sites[0].energy.pv_kw: -1 is outside"},
      {R"({"pv_kw": 100})", "f.json: sites[0].energy.weather: missing"},
      {R"({"cooling": true})", "f.json: sites[0].energy.weather: missing"},
      {R"({"battery": {"kwh": 10, "kw": 5, "soc_min": 0.9, "soc_max": 0.2}})",
       "f.json: sites[0].energy.battery: battery: need 0 <= soc_min"},
      {R"({"battery": {"kwh": 10, "volts": 5}})", "f.json: sites[0].energy.battery.volts: unknown"},
      {R"({"battery": 5})", "f.json: sites[0].energy.battery: is number, expected an object"},
      {R"({"cooling": {"base_pue": 0.5}})", "f.json: sites[0].energy.cooling.base_pue: 0.5"},
      {R"({"weather": "nope.json"})", "f.json: sites[0].energy.weather: nope.json"},
      {R"({"price": "nope.csv"})", "f.json: sites[0].energy.price: nope.csv"},
      {R"({"price": 3})", "f.json: sites[0].energy.price: is number, expected a non-empty path"},
      {R"([1])", "f.json: sites[0].energy: is array, expected an object"},
  };
  for (const auto& c : cases) {
    std::optional<TimeSeries> price;
    auto e =
        parse_site_energy(nlohmann::json::parse(c.block), "f.json: sites[0].energy", "", price);
    ASSERT_FALSE(e.ok()) << c.block;
    EXPECT_TRUE(has(e.error(), c.error)) << c.block << " -> " << e.error();
  }
  // A price in the block and one on the site: which would count is unclear, so it is refused.
  const std::string prices = energy::price_file(testing::shared_data_dir(), "DE-LU");
  if (std::filesystem::exists(prices)) {
    std::optional<TimeSeries> price = TimeSeries(0, 3600, {0.1});
    auto e = parse_site_energy(nlohmann::json{{"price", prices}}, "w", ".", price);
    ASSERT_FALSE(e.ok());
    EXPECT_TRUE(has(e.error(), "w.price: the site has a `price` already")) << e.error();
  }
}

TEST(MultiEnergyFile, ReadsWeatherAndPricesFromSharedData) {
  const std::string data = testing::shared_data_dir();
  GREENSCHED_REQUIRE_SHARED_FILE(energy::weather_file(data, "SG"));
  GREENSCHED_REQUIRE_SHARED_FILE(energy::price_file(data, "SG"));
  std::optional<TimeSeries> price;
  auto e =
      parse_site_energy(nlohmann::json::parse(R"({"pv_kw": 1000, "wind_kw": 500, "cooling": true,
          "weather": "energy/weather2023/SG_2023.json",
          "price": "energy/prices2023/SG_electricity_prices_2023.csv"})"),
                        "w", data, price);
  ASSERT_TRUE(e.ok()) << e.error();
  ASSERT_TRUE(price.has_value());
  EXPECT_EQ(price->values().size(), 8760U);
  EXPECT_EQ(e.value().pv_kwh.values().size(), 8760U);
  // Singapore (UTC+8): no sun at 20:00 UTC (04:00 local), some at 04:00 UTC (noon local).
  const int64_t jan2 = 1672617600;  // 2023-01-02T00:00Z
  EXPECT_DOUBLE_EQ(e.value().pv_kwh.at(jan2 + 20 * 3600), 0.0);
  EXPECT_GT(e.value().pv_kwh.at(jan2 + 4 * 3600), 0.0);
  EXPECT_LE(e.value().pv_kwh.at(jan2 + 4 * 3600), 1000.0);
  EXPECT_LE(e.value().wind_kwh.at(jan2), 500.0);
  EXPECT_GE(e.value().pue.at(jan2), 1.05);
}

TEST(MultiNetSignal, SurplusHourCostsTheExportPriceAndEmitsNothing) {
  // Generation 10 kWh, demand 4: the job's 2 kWh come from the surplus.
  NetHour h = net_hour(10, 4, 2, 0.20, 300, true, 0.05);
  EXPECT_DOUBLE_EQ(h.price_per_kwh, 0.05);
  EXPECT_DOUBLE_EQ(h.carbon_g_per_kwh, 0.0);
  // Surplus curtailed: the kWh forgoes nothing.
  h = net_hour(10, 4, 2, 0.20, 300, false, 0.05);
  EXPECT_DOUBLE_EQ(h.price_per_kwh, 0.0);
  // Surplus of 1 kWh for a 2 kWh job: half from it, half from the grid.
  h = net_hour(5, 4, 2, 0.20, 300, true, 0.05);
  EXPECT_DOUBLE_EQ(h.price_per_kwh, 0.5 * 0.05 + 0.5 * 0.20);
  EXPECT_DOUBLE_EQ(h.carbon_g_per_kwh, 150);
  // No surplus: the grid.
  h = net_hour(3, 4, 2, 0.20, 300, true, 0.05);
  EXPECT_DOUBLE_EQ(h.price_per_kwh, 0.20);
  EXPECT_DOUBLE_EQ(h.carbon_g_per_kwh, 300);
  // A job of no size: any surplus covers it.
  EXPECT_DOUBLE_EQ(net_hour(4.5, 4, 0, 0.2, 300, true, 0.05).carbon_g_per_kwh, 0.0);
}

// The site's actual generation: the agents' view under --generation-forecast exact.
GenerationForecast exact(const SiteSpec& site) {
  GenerationForecastOptions o;
  o.kind = GenerationForecastKind::kExact;
  return site.energy ? GenerationForecast(*site.energy, o, 0) : GenerationForecast();
}

TEST(MultiNetSignal, MeanOverHoursOfTheRun) {
  SiteSpec site;
  const int64_t t0 = 1672531200;
  site.carbon = TimeSeries(t0, 3600, {300});
  site.price = TimeSeries(t0, 3600, {0.2});
  SiteEnergy e;
  e.pv_kwh = TimeSeries(t0, 3600, {10, 0});  // sunny, dark, sunny, ...
  e.allow_export = true;
  e.export_price_usd_per_kwh = 0.05;
  site.energy = e;
  const auto oracle = make_oracle_forecaster();
  NetSignalCache cache;
  // Demand 4 kW, a 2 kW job over two hours: hour 0 from the surplus, hour 1 from the grid.
  SignalView v = cache.mean(site, 0, *oracle, exact(site), t0, t0, t0 + 7200, 4, 2);
  EXPECT_NEAR(v.price_per_kwh, (0.05 + 0.2) / 2, 1e-12);
  EXPECT_NEAR(v.carbon_g_per_kwh, 150, 1e-9);
  // Half an hour in the sun, then a full dark hour: weights 1800 and 3600.
  v = cache.mean(site, 0, *oracle, exact(site), t0, t0 + 1800, t0 + 7200, 4, 2);
  EXPECT_NEAR(v.carbon_g_per_kwh, 300.0 * 3600 / 5400, 1e-9);
  // Beyond the weather lookahead only the grid counts.
  const int64_t far = t0 + NetSignalCache::kLookaheadS + 7200;
  v = cache.mean(site, 0, *oracle, exact(site), t0, far, far + 7200, 4, 2);
  EXPECT_NEAR(v.carbon_g_per_kwh, 300, 1e-9);
}

TEST(MultiNetSignal, BatteryServesWhatTheSurplusLeavesWhenItWeighsLess) {
  // A kWh charged in an hour at 0.081 USD and 810 g, round trip 0.81: 0.1 USD and 1000 g.
  const NetHour stored = stored_kwh(NetHour{0.081, 810}, 0.81);
  EXPECT_NEAR(stored.price_per_kwh, 0.1, 1e-12);
  EXPECT_NEAR(stored.carbon_g_per_kwh, 1000, 1e-9);
  // No surplus, grid 0.30 and 300 g: the battery's 1 kWh serves half of a 2 kWh job.
  const BatteryOffer one{NetHour{0.1, 100}, 1};
  NetHour h = net_hour(3, 4, 2, 0.30, 300, true, 0.05, one, 0);
  EXPECT_NEAR(h.battery_share, 0.5, 1e-12);
  EXPECT_NEAR(h.price_per_kwh, 0.5 * 0.1 + 0.5 * 0.30, 1e-12);
  EXPECT_NEAR(h.carbon_g_per_kwh, 0.5 * 100 + 0.5 * 300, 1e-9);
  // Room for 5 kWh: all of it.
  const BatteryOffer five{NetHour{0.1, 100}, 5};
  h = net_hour(3, 4, 2, 0.30, 300, true, 0.05, five, 0);
  EXPECT_NEAR(h.price_per_kwh, 0.1, 1e-12);
  EXPECT_NEAR(h.carbon_g_per_kwh, 100, 1e-9);
  // 1 kWh of surplus first (forgoing 0.05), the battery the other half.
  h = net_hour(5, 4, 2, 0.30, 300, true, 0.05, five, 0);
  EXPECT_NEAR(h.battery_share, 0.5, 1e-12);
  EXPECT_NEAR(h.price_per_kwh, 0.5 * 0.05 + 0.5 * 0.1, 1e-12);
  EXPECT_NEAR(h.carbon_g_per_kwh, 50, 1e-9);
  // A job of no size: the battery takes all that the surplus leaves.
  EXPECT_NEAR(net_hour(3, 4, 0, 0.30, 300, true, 0.05, one, 0).price_per_kwh, 0.1, 1e-12);
  // Dearer than the grid: the grid.
  h = net_hour(3, 4, 2, 0.30, 300, true, 0.05, BatteryOffer{NetHour{0.4, 0}, 5}, 0);
  EXPECT_DOUBLE_EQ(h.battery_share, 0.0);
  EXPECT_DOUBLE_EQ(h.price_per_kwh, 0.30);
  // Cheap but dirty (0.1 USD, 900 g) against a clean grid at 0.15: taken on price alone; at
  // 100 USD/t it weighs 0.19 > 0.15 and the grid serves.
  const BatteryOffer dirty{NetHour{0.1, 900}, 5};
  h = net_hour(3, 4, 2, 0.15, 0, true, 0.05, dirty, 0);
  EXPECT_NEAR(h.price_per_kwh, 0.1, 1e-12);
  EXPECT_NEAR(h.carbon_g_per_kwh, 900, 1e-9);
  h = net_hour(3, 4, 2, 0.15, 0, true, 0.05, dirty, 100);
  EXPECT_DOUBLE_EQ(h.price_per_kwh, 0.15);
  EXPECT_DOUBLE_EQ(h.carbon_g_per_kwh, 0.0);
}

// A site with 72 hours of grid prices (0.30 USD/kWh) and carbon (300 g/kWh) from t0 but for
// the hours given, no generation unless given, and a 20 kWh battery (10 kW, round trip 0.81,
// 0.1-0.9: 16 kWh usable, 14.4 kWh back out of it).
constexpr int64_t kT0 = 1672531200;  // 2023-01-01T00:00Z

SiteSpec battery_site(const std::vector<std::pair<int, double>>& prices,
                      const std::vector<std::pair<int, double>>& carbon,
                      const std::vector<std::pair<int, double>>& pv = {}) {
  std::vector<double> p(72, 0.30), c(72, 300), g(72, 0);
  for (const auto& [h, v] : prices) p[h] = v;
  for (const auto& [h, v] : carbon) c[h] = v;
  for (const auto& [h, v] : pv) g[h] = v;
  SiteSpec site;
  site.price = TimeSeries(kT0, 3600, p);
  site.carbon = TimeSeries(kT0, 3600, c);
  SiteEnergy e;
  e.pv_kwh = TimeSeries(kT0, 3600, g);
  e.battery.capacity_kwh = 20;
  e.battery.max_charge_kw = e.battery.max_discharge_kw = 10;
  e.battery.round_trip_efficiency = 0.81;
  e.allow_export = true;
  e.export_price_usd_per_kwh = 0.0081;
  site.energy = e;
  return site;
}

TEST(MultiNetSignal, BatteryStoresFromTheBestHourOfTheDayBefore) {
  // Now is hour 24. Hour 20, four hours ago, cost 0.081 at 810 g: a kWh stored then is 0.1
  // USD and 1000 g. A job over hours 26 and 27 (forecast from the past: 0.30 each, 300 g)
  // gets it from the battery; without the battery it pays the grid.
  const SiteSpec site = battery_site({{20, 0.081}, {27, 0.50}}, {{20, 810}});
  SiteSpec no_battery = site;
  no_battery.energy->battery.capacity_kwh = 0;
  const auto past = make_same_hour_forecaster();
  const int64_t now = kT0 + 24 * 3600, from = now + 2 * 3600, to = now + 4 * 3600;
  NetSignalCache cache;
  SignalView v = cache.mean(no_battery, 0, *past, exact(no_battery), now, from, to, 4, 2);
  EXPECT_NEAR(v.price_per_kwh, 0.30, 1e-12);
  EXPECT_NEAR(v.carbon_g_per_kwh, 300, 1e-9);
  v = cache.mean(site, 1, *past, exact(site), now, from, to, 4, 2);
  EXPECT_NEAR(v.price_per_kwh, 0.1, 1e-12);
  EXPECT_NEAR(v.carbon_g_per_kwh, 1000, 1e-9);
  // A 10 kW job: hour 26 takes 10 kWh from the battery, hour 27 the 4.4 left of its 14.4
  // (a share of 0.44) and the rest from the grid.
  v = cache.mean(site, 1, *past, exact(site), now, from, to, 4, 10);
  EXPECT_NEAR(v.price_per_kwh, (0.1 + (0.44 * 0.1 + 0.56 * 0.30)) / 2, 1e-12);
  EXPECT_NEAR(v.carbon_g_per_kwh, (1000 + (0.44 * 1000 + 0.56 * 300)) / 2, 1e-9);
  // A 20 kW job: the 10 kW discharge limit serves half of hour 26, then 4.4 of hour 27's 20.
  v = cache.mean(site, 1, *past, exact(site), now, from, to, 4, 20);
  EXPECT_NEAR(v.price_per_kwh, ((0.5 * 0.1 + 0.5 * 0.30) + (0.22 * 0.1 + 0.78 * 0.30)) / 2, 1e-12);
  EXPECT_NEAR(v.carbon_g_per_kwh, ((0.5 * 1000 + 0.5 * 300) + (0.22 * 1000 + 0.78 * 300)) / 2,
              1e-9);
  // Under the controllers' carbon price of 300 USD/t the stored kWh weighs 0.1 + 0.3 = 0.4,
  // the grid 0.30 + 0.09 = 0.39: the grid serves.
  NetSignalCache priced(300);
  v = priced.mean(site, 1, *past, exact(site), now, from, to, 4, 2);
  EXPECT_NEAR(v.price_per_kwh, 0.30, 1e-12);
  EXPECT_NEAR(v.carbon_g_per_kwh, 300, 1e-9);
}

TEST(MultiNetSignal, BatterySourcesAreTheDayBeforeTheHourAsForecastNow) {
  const int64_t now = kT0 + 24 * 3600;
  const auto past = make_same_hour_forecaster();
  const auto oracle = make_oracle_forecaster();
  {
    // Hour 25 will cost 0.0081. The past-only forecast says 0.30 (hour 1): the battery's
    // best source for hour 26 is hour 20. An oracle would store in hour 25 (0.01 USD).
    const SiteSpec site = battery_site({{20, 0.081}, {25, 0.0081}}, {{20, 810}});
    NetSignalCache cache;
    SignalView v =
        cache.mean(site, 0, *past, exact(site), now, now + 2 * 3600, now + 3 * 3600, 4, 2);
    EXPECT_NEAR(v.price_per_kwh, 0.1, 1e-12);
    NetSignalCache seer;
    v = seer.mean(site, 0, *oracle, exact(site), now, now + 2 * 3600, now + 3 * 3600, 4, 2);
    EXPECT_NEAR(v.price_per_kwh, 0.01, 1e-12);
    EXPECT_NEAR(v.carbon_g_per_kwh, 300 / 0.81, 1e-9);
    // Hour 25 lies after a job in hour 24: never its source.
    v = seer.mean(site, 0, *oracle, exact(site), now, now, now + 3600, 4, 2);
    EXPECT_NEAR(v.price_per_kwh, 0.1, 1e-12);
  }
  {
    // Hour 20 is within the 24 hours before hour 44, not before hour 45.
    const SiteSpec site = battery_site({{20, 0.081}}, {{20, 810}});
    NetSignalCache cache;
    SignalView v =
        cache.mean(site, 0, *oracle, exact(site), now, now + 20 * 3600, now + 21 * 3600, 4, 2);
    EXPECT_NEAR(v.price_per_kwh, 0.1, 1e-12);
    v = cache.mean(site, 0, *oracle, exact(site), now, now + 21 * 3600, now + 22 * 3600, 4, 2);
    EXPECT_NEAR(v.price_per_kwh, 0.30, 1e-12);
  }
  {
    // 100 kWh of sun in hour 22 for a 4 kW demand: stored, it costs the feed-in it forwent
    // (0.0081 / 0.81 = 0.01) and emits nothing.
    const SiteSpec site = battery_site({}, {}, {{22, 100}});
    NetSignalCache cache;
    SignalView v =
        cache.mean(site, 0, *past, exact(site), now, now + 2 * 3600, now + 3 * 3600, 4, 2);
    EXPECT_NEAR(v.price_per_kwh, 0.01, 1e-12);
    EXPECT_NEAR(v.carbon_g_per_kwh, 0.0, 1e-9);
  }
}

TEST(MultiSiteDemand, HourlyFacilityEnergyOfTheReplay) {
  // Site a: [0,1800) 200 W, [1800,3600) 260 W -> 0.23 kWh; [3600,5400) 200 W, [5400,7200)
  // 140 W -> 0.17 kWh. Site b idles at 35 W: 0.035 kWh each hour.
  const Fleet fleet = two_sites(100, 300);
  auto r = three_jobs_on_a(fleet);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().energy_hour0_s, fleet.start_s);
  ASSERT_EQ(r.value().site_hourly_kwh.size(), 2U);
  ASSERT_EQ(r.value().site_hourly_kwh[0].size(), 2U);
  EXPECT_NEAR(r.value().site_hourly_kwh[0][0], 0.23, 1e-12);
  EXPECT_NEAR(r.value().site_hourly_kwh[0][1], 0.17, 1e-12);
  EXPECT_NEAR(r.value().site_hourly_kwh[1][0], 0.035, 1e-12);
  EXPECT_NEAR(r.value().site_hourly_kwh[1][1], 0.035, 1e-12);
}

// Site a's energy in the two-hour cases: 0.1 kWh of sun in hour 0, none in hour 1, and a
// 1 kWh battery (soc 0.1-0.9, 1 kW, round trip 0.9) that starts at its floor.
SiteEnergy sun_then_none_and_small_battery(int64_t start_s) {
  SiteEnergy e;
  e.pv_kwh = TimeSeries(start_s, 3600, {0.1, 0.0});
  e.battery.capacity_kwh = 1;
  e.battery.max_charge_kw = e.battery.max_discharge_kw = 1;
  e.battery.round_trip_efficiency = 0.9;
  return e;
}

TEST(MultiSiteController, HandComputedNoneAndOracleOnTwoHours) {
  // Site a gets 0.1 kWh of sun in hour 0, none in hour 1; grid 0.1 then 0.3 USD/kWh; a 1 kWh
  // battery (0.1-0.9, 1 kW, round trip 0.9) starts at 0.1 kWh, its floor.
  Fleet fleet = two_sites(100, 300);
  SiteSpec& a = fleet.sites[0];
  a.price = TimeSeries(fleet.start_s, 3600, {0.1, 0.3});
  a.energy = sun_then_none_and_small_battery(fleet.start_s);
  auto r = three_jobs_on_a(fleet);
  ASSERT_TRUE(r.ok()) << r.error();
  // none: import 0.13 at 0.1 and 0.17 at 0.3.
  auto none = run_site_controllers(fleet, r.value(), energy::ControllerKind::kNone);
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_NEAR(none.value().cost_usd, 0.13 * 0.1 + 0.17 * 0.3, 1e-9);
  EXPECT_NEAR(none.value().grid_import_kwh, 0.30 + 0.07, 1e-9);
  EXPECT_NEAR(none.value().self_consumption_pct, 100.0, 1e-9);
  // Carbon: site a imports 0.30 kWh at 100 g (30 g, not the replay's 40); site b keeps 21 g.
  EXPECT_NEAR(none.value().carbon_kg, 0.030 + 0.021, 1e-12);
  // oracle: charge in hour 0 what covers hour 1's 0.17 kWh: 0.17 / 0.9 kWh more at 0.1.
  auto oracle = run_site_controllers(fleet, r.value(), energy::ControllerKind::kOracle);
  ASSERT_TRUE(oracle.ok()) << oracle.error();
  EXPECT_NEAR(oracle.value().cost_usd, (0.13 + 0.17 / 0.9) * 0.1, 1e-6);
  EXPECT_NEAR(oracle.value().battery_cycles, 0.17 / std::sqrt(0.9) / 0.8, 1e-6);
  ASSERT_EQ(oracle.value().sites[0].run.hours.size(), 2U);
  EXPECT_NEAR(oracle.value().sites[0].run.hours[1].discharge_kwh, 0.17, 1e-6);
  // Two controllers give two summary rows, with the controller's carbon and cost.
  MultiResult both = r.value();
  both.energy = {none.value(), oracle.value()};
  std::ostringstream csv;
  report::write_multi_summary_csv(csv, std::span<const MultiResult>(&both, 1));
  const std::string text = csv.str();
  EXPECT_TRUE(has(text, ",controller,cost_usd,grid_import_kwh,onsite_kwh_used,")) << text;
  EXPECT_TRUE(has(text, "lowest-carbon-now,0.470,0.051,")) << text;
  EXPECT_TRUE(has(text, ",none,0.06,")) << text;
  EXPECT_TRUE(has(text, ",oracle,0.03,")) << text;
}

TEST(MultiSiteController, GreenCostCarbonControllersWeighTheCarbonPrice) {
  // As above, but the grid costs 0.10 USD/kWh at 600 g/kWh in hour 0 and 0.13 at 0 g in
  // hour 1. For green-cost the oracle minimises cost: a kWh stored in hour 0 costs 0.10 / 0.9
  // = 0.111 < 0.13, so it charges 0.17 / 0.9 kWh more in the dirty hour: site a emits
  // (0.13 + 0.17 / 0.9) * 600 g. For green-cost-carbon (100 USD/t by default) hour 0 weighs
  // 0.10 + 0.06 = 0.16, stored 0.178 > 0.13: no shift, (0.23 - 0.1) * 600 g = 78 g. Site b
  // (1000 g/kWh) keeps the jobs on a.
  Fleet fleet = two_sites(100, 1000);
  SiteSpec& a = fleet.sites[0];
  a.price = TimeSeries(fleet.start_s, 3600, {0.10, 0.13});
  a.carbon = TimeSeries(fleet.start_s, 3600, {600, 0});
  a.energy = sun_then_none_and_small_battery(fleet.start_s);
  auto r = three_jobs_on_a(fleet);
  ASSERT_TRUE(r.ok()) << r.error();
  const AgentOptions agent_options;
  EXPECT_DOUBLE_EQ(controller_carbon_price_usd_per_t("green-cost", agent_options), 0.0);
  EXPECT_DOUBLE_EQ(controller_carbon_price_usd_per_t("local", agent_options), 0.0);
  energy::ControllerOptions cost, cost_carbon;
  cost.carbon_price_usd_per_t = controller_carbon_price_usd_per_t("green-cost", agent_options);
  cost_carbon.carbon_price_usd_per_t =
      controller_carbon_price_usd_per_t("green-cost-carbon", agent_options);
  EXPECT_DOUBLE_EQ(cost_carbon.carbon_price_usd_per_t, 100.0);
  auto cheap = run_site_controllers(fleet, r.value(), energy::ControllerKind::kOracle, cost);
  auto clean = run_site_controllers(fleet, r.value(), energy::ControllerKind::kOracle, cost_carbon);
  ASSERT_TRUE(cheap.ok()) << cheap.error();
  ASSERT_TRUE(clean.ok()) << clean.error();
  const energy::ControllerRun& cheap_a = cheap.value().sites[0].run;
  const energy::ControllerRun& clean_a = clean.value().sites[0].run;
  EXPECT_NEAR(cheap_a.carbon_kg, (0.13 + 0.17 / 0.9) * 0.6, 1e-6);
  EXPECT_NEAR(cheap_a.cost_usd, (0.13 + 0.17 / 0.9) * 0.10, 1e-6);
  EXPECT_NEAR(clean_a.carbon_kg, 0.13 * 0.6, 1e-6);
  EXPECT_NEAR(clean_a.cost_usd, 0.13 * 0.10 + 0.17 * 0.13, 1e-6);
  EXPECT_LT(clean.value().carbon_kg, cheap.value().carbon_kg - 0.1);
  EXPECT_GT(clean.value().cost_usd, cheap.value().cost_usd);
}

// Site a with ten days of hourly data from the fleet's start: a daily price shape with a
// cheap 03:00 on day 0, carbon, sun and a 10 kWh battery; `spiked_end` changes the last two
// days' price (2 USD/kWh in hours 1-3) and carbon (1000 g/kWh).
Fleet ten_days_at_a(bool spiked_end) {
  Fleet fleet = two_sites(100, 300);
  std::vector<double> price(240), carbon(240), sun(240);
  for (int t = 0; t < 240; ++t) {
    const int h = t % 24;
    price[t] = 0.10 + 0.05 * std::cos((h - 19) * 3.14159265358979 / 12);
    carbon[t] = 300 + 10 * h;
    sun[t] = h >= 7 && h < 17 ? 3.0 * std::sin((h - 7) * 3.14159265358979 / 10) : 0.0;
    if (t == 3) price[t] = 0.01;
    if (spiked_end && t >= 192) {
      if (h >= 1 && h <= 3) price[t] = 2.0;
      carbon[t] = 1000;
    }
  }
  SiteSpec& a = fleet.sites[0];
  a.price = TimeSeries(fleet.start_s, 3600, price);
  a.carbon = TimeSeries(fleet.start_s, 3600, carbon);
  SiteEnergy e;
  e.pv_kwh = TimeSeries(fleet.start_s, 3600, sun);
  e.battery.capacity_kwh = 10;
  e.battery.max_charge_kw = e.battery.max_discharge_kw = 5;
  e.allow_export = true;
  e.export_price_usd_per_kwh = 0.01;
  a.energy = e;
  return fleet;
}

// A replay's demand by hand: 24 hours from hour0_s, 2 kWh an hour at site a, 0.5 at b.
MultiResult one_day_of_demand(int64_t hour0_s) {
  MultiResult run;
  run.energy_hour0_s = hour0_s;
  run.site_hourly_kwh = {std::vector<double>(24, 2.0), std::vector<double>(24, 0.5)};
  run.site_carbon_kg = {0.0, 0.0};
  return run;
}

void expect_same_plan(const energy::ControllerRun& x, const energy::ControllerRun& y,
                      const std::string& what) {
  ASSERT_EQ(x.hours.size(), y.hours.size()) << what;
  for (std::size_t t = 0; t < x.hours.size(); ++t) {
    EXPECT_EQ(x.hours[t].charge_kwh, y.hours[t].charge_kwh) << what << " hour " << t;
    EXPECT_EQ(x.hours[t].discharge_kwh, y.hours[t].discharge_kwh) << what << " hour " << t;
    EXPECT_EQ(x.hours[t].import_kwh, y.hours[t].import_kwh) << what << " hour " << t;
  }
}

TEST(MultiSiteController, HistoryIsTheHoursTheSeriesHoldBeforeTheWindow) {
  const Fleet fleet = ten_days_at_a(false);
  const SiteSpec& a = fleet.sites[0];
  EXPECT_EQ(site_history_h(a, fleet.start_s, 168), 0U);
  EXPECT_EQ(site_history_h(a, fleet.start_s + 48 * 3600, 168), 48U);
  EXPECT_EQ(site_history_h(a, fleet.start_s + 48 * 3600 + 1800, 168), 48U);
  EXPECT_EQ(site_history_h(a, fleet.start_s + 200 * 3600, 168), 168U);
  // Past the end the series repeats and the replay has gone through it: all of it is past.
  EXPECT_EQ(site_history_h(a, fleet.start_s + 250 * 3600, 168), 168U);
  // The latest series to start bounds it: sun from hour 30 leaves 18 of 48 hours.
  SiteSpec late = a;
  late.energy->pv_kwh = TimeSeries(fleet.start_s + 30 * 3600, 3600, {1.0, 2.0});
  EXPECT_EQ(site_history_h(late, fleet.start_s + 48 * 3600, 168), 18U);
  // Site b's carbon is one sample from the start: a single-sample series still starts there.
  EXPECT_EQ(site_history_h(fleet.sites[1], fleet.start_s + 5 * 3600, 168), 5U);
  energy::ControllerOptions o;
  o.forecast_days = 7;
  EXPECT_EQ(history_wanted_h(o), 168U);
  const std::string note = short_history_note(fleet, fleet.start_s + 48 * 3600, o);
  EXPECT_TRUE(has(note, "168 h of history wanted")) << note;
  EXPECT_TRUE(has(note, "a 48 h, b 48 h")) << note;
  EXPECT_EQ(short_history_note(fleet, fleet.start_s + 200 * 3600, o), "");
}

// A window at the series' first hour: before it nothing is known, so the plan of the first
// day cannot depend on the series' last days (which a cyclic read would take as its past).
TEST(MultiSiteController, WindowAtTheSeriesStartReadsNothingOfItsEnd) {
  const Fleet plain = ten_days_at_a(false);
  const Fleet spiked = ten_days_at_a(true);
  const MultiResult run = one_day_of_demand(plain.start_s);
  energy::ControllerOptions o;
  o.forecast_days = 7;
  o.carbon_price_usd_per_t = 100;
  for (auto kind : {energy::ControllerKind::kMpc, energy::ControllerKind::kGreedy}) {
    const std::string name(energy::controller_name(kind));
    auto x = run_site_controllers(plain, run, kind, o);
    auto y = run_site_controllers(spiked, run, kind, o);
    ASSERT_TRUE(x.ok()) << x.error();
    ASSERT_TRUE(y.ok()) << y.error();
    expect_same_plan(x.value().sites[0].run, y.value().sites[0].run, name);
    EXPECT_EQ(x.value().cost_usd, y.value().cost_usd) << name;
  }
  // With nothing before it, mpc idles in the window's first hour.
  auto mpc = run_site_controllers(spiked, run, energy::ControllerKind::kMpc, o);
  ASSERT_TRUE(mpc.ok()) << mpc.error();
  EXPECT_EQ(mpc.value().sites[0].run.hours[0].charge_kwh, 0.0);
  EXPECT_EQ(mpc.value().sites[0].run.hours[0].discharge_kwh, 0.0);
}

// Two days of data before the window: mpc asked for 7 days of history gets those 2, so it
// plans exactly as when asked for 2 (the mean over the days there are), and not as with 1.
TEST(MultiSiteController, TwoDaysOfDataGiveTwoDaysOfHistory) {
  const Fleet fleet = ten_days_at_a(false);
  const MultiResult run = one_day_of_demand(fleet.start_s + 48 * 3600);
  energy::ControllerOptions o;
  const auto plan = [&](int days) {
    o.forecast_days = days;
    auto r = run_site_controllers(fleet, run, energy::ControllerKind::kMpc, o);
    EXPECT_TRUE(r.ok()) << r.error();
    return r.ok() ? r.value().sites[0].run : energy::ControllerRun{};
  };
  const energy::ControllerRun seven = plan(7), two = plan(2), one = plan(1);
  expect_same_plan(seven, two, "7 days against 2");
  EXPECT_NE(two.cost_usd, one.cost_usd);  // day 0's cheap 03:00 counts in the 2-day mean
}

// A small built-in fleet whose first two sites have sun (a day curve), a battery and prices.
Fleet sunny_builtin_fleet() {
  Fleet fleet = builtin_fleet();
  std::vector<double> sun(24, 0.0), price(24, 0.0);
  for (int h = 0; h < 24; ++h) {
    sun[h] = h >= 6 && h < 18 ? 40.0 * std::sin((h - 6) * 3.14159265358979 / 12) : 0.0;
    price[h] = 0.08 + 0.06 * std::cos((h - 19) * 3.14159265358979 / 12);
  }
  for (std::size_t i = 0; i < fleet.sites.size(); ++i) {
    SiteSpec& s = fleet.sites[i];
    s.price = TimeSeries(fleet.start_s, 3600, price);
    if (i >= 2) continue;
    SiteEnergy e;
    e.pv_kwh = TimeSeries(fleet.start_s + 3600 * static_cast<int64_t>(i), 3600, sun);
    e.battery.capacity_kwh = 60;
    e.battery.max_charge_kw = e.battery.max_discharge_kw = 15;
    e.allow_export = true;
    e.export_price_usd_per_kwh = 0.01;
    s.energy = e;
  }
  return fleet;
}

std::string summary_for(const Fleet& fleet, const std::vector<PodSpec>& pods, uint32_t shapes) {
  std::vector<MultiResult> results;
  for (const char* agent : {"local", "green-cost"}) {
    MultiOptions options;
    options.agent = agent;
    options.be_slack_s = 4 * 3600;
    options.power_down_idle_s = 1800;
    auto r = run_fleet(fleet, pods, shapes, options);
    EXPECT_TRUE(r.ok()) << r.error();
    if (!r.ok()) return {};
    for (auto kind : {energy::ControllerKind::kNone, energy::ControllerKind::kGreedy,
                      energy::ControllerKind::kMpc, energy::ControllerKind::kOracle}) {
      auto e = run_site_controllers(fleet, r.value(), kind);
      EXPECT_TRUE(e.ok()) << e.error();
      r.value().energy.push_back(std::move(e.value()));
    }
    const auto& energy = r.value().energy;
    for (const EnergyResult& e : energy) {
      EXPECT_LE(energy[3].cost_usd, e.cost_usd + 1e-6 * (1 + std::abs(e.cost_usd)))
          << agent << " " << e.controller;
      EXPECT_GE(e.self_consumption_pct, 0.0);
      EXPECT_LE(e.self_consumption_pct, 100.0 + 1e-9);
    }
    EXPECT_GT(energy[0].generation_kwh, 0.0);
    EXPECT_DOUBLE_EQ(energy[0].battery_cycles, 0.0);
    EXPECT_GT(energy[3].battery_cycles, 0.0);
    results.push_back(std::move(r.value()));
  }
  std::ostringstream csv;
  report::write_multi_summary_csv(csv, results);
  report::write_energy_timeline_csv(csv, fleet, results);
  return csv.str();
}

TEST(MultiSiteController, OracleCheapestPerAgentAndRunsRepeatExactly) {
  trace::Workload w = trace::builtin_openb_workload();
  std::vector<PodSpec> pods;
  for (std::size_t i = 0; i < w.pods.size(); i += 20) pods.push_back(w.pods[i]);
  // A day of arrivals, each job at most 12 h: the controllers (mpc solves an LP each hour)
  // settle a day and a half rather than the weeks the longest built-in lifetimes would span.
  trace::assign_synthetic_times(pods, 7, 1);
  for (PodSpec& p : pods) p.deletion_time = std::min(p.deletion_time, p.creation_time + 12 * 3600);
  const uint32_t shapes = trace::assign_shape_ids(pods);
  const Fleet fleet = sunny_builtin_fleet();
  const std::string first = summary_for(fleet, pods, shapes);
  const std::string second = summary_for(fleet, pods, shapes);
  EXPECT_EQ(first, second);
  // 2 agents x 4 controllers rows, one per agent and controller.
  std::istringstream lines(first);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line) && !has(line, "agent,controller,site")) rows += 1;
  EXPECT_EQ(rows, 1 + 2 * 4);
}

// green-cost's run of one job on `fleet`: no slack, no data to move.
Result<MultiResult> green_cost_one_job(const Fleet& fleet, PodSpec pod) {
  std::vector<PodSpec> pods = {std::move(pod)};
  const uint32_t shapes = trace::assign_shape_ids(pods);
  MultiOptions options;
  options.agent = "green-cost";
  options.power_model = tiny_power_model();
  options.data_gb_per_job = 0;
  options.be_slack_s = 0;
  return run_fleet(fleet, pods, shapes, options);
}

TEST(MultiNetSignal, GreenCostGoesWhereTheSurplusIs) {
  // Site a's grid costs 0.30 but it has had 10 kWh of sun each hour for a day, for a site
  // idling at 35 W; site b's grid costs 0.10 with no sun. Equal carbon. green-cost sends a
  // one-hour job to a (net 0.01 USD/kWh, the feed-in it forgoes); without the sun it goes to
  // b. (At the series' first hour no sun has been seen yet and the past-only forecast expects
  // none: GenerationForecast.NothingBeforeTheSeriesStartIsRead.)
  for (const bool sun : {true, false}) {
    Fleet fleet = two_sites(200, 200);
    fleet.sites[0].price = TimeSeries(fleet.start_s, 3600, {0.30});
    fleet.sites[1].price = TimeSeries(fleet.start_s, 3600, {0.10});
    SiteEnergy e;
    e.pv_kwh = TimeSeries(fleet.start_s, 3600, {sun ? 10.0 : 0.0});
    e.allow_export = true;
    e.export_price_usd_per_kwh = 0.01;
    fleet.sites[0].energy = e;
    auto r = green_cost_one_job(fleet, job("j1", 2000, 1, 1000, 86400, 90000));
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r.value().decisions[0].site, sun ? 0 : 1) << r.value().decisions[0].reason;
    EXPECT_TRUE(has(r.value().decisions[0].reason, "USD")) << r.value().decisions[0].reason;
  }
}

TEST(MultiNetSignal, GreenCostCountsWhatTheBatteryStoredEarlier) {
  // Site a's grid cost 0.05 USD/kWh in hour 0 and costs 0.30 since; site b's 0.20. A job
  // submitted in hour 2 for one hour: with a battery (round trip 0.9) at a, a kWh stored in
  // hour 0 costs 0.05 / 0.9 = 0.056 and green-cost sends it to a; without one, to b.
  for (const bool battery : {true, false}) {
    Fleet fleet = two_sites(200, 200);
    fleet.sites[0].price = TimeSeries(fleet.start_s, 3600, {0.05, 0.30, 0.30, 0.30});
    fleet.sites[1].price = TimeSeries(fleet.start_s, 3600, {0.20});
    SiteEnergy e;
    if (battery) {
      e.battery.capacity_kwh = 10;
      e.battery.max_charge_kw = e.battery.max_discharge_kw = 10;
      e.battery.round_trip_efficiency = 0.9;
    }
    fleet.sites[0].energy = e;
    auto r = green_cost_one_job(fleet, job("j1", 2000, 1, 1000, 7200, 10800));
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r.value().decisions[0].site, battery ? 0 : 1) << r.value().decisions[0].reason;
  }
}

}  // namespace
}  // namespace greensched::multi

// ---- The mpc controller on learned price and carbon forecasts (mpc_forecast.hpp) ----
namespace greensched::multi {
namespace {

constexpr int64_t kMonday = 1672617600;  // 2023-01-02T00:00Z, a Monday

// One site on 84 days of a weekly price pattern: on weekdays 0.05 USD/kWh at night and 0.40
// from 17:00 to 20:59 UTC, at weekends a flat 0.10; a flat 300 g/kWh. A 100 kWh battery.
Fleet weekly_price_site() {
  Fleet fleet;
  fleet.start_s = kMonday;
  SiteSpec s;
  s.name = "a";
  std::vector<double> price(84 * 24), carbon(84 * 24, 300.0);
  for (std::size_t i = 0; i < price.size(); ++i) {
    const std::size_t day = i / 24 % 7, hour = i % 24;
    price[i] = day >= 5 ? 0.10 : hour >= 17 && hour < 21 ? 0.40 : 0.05;
  }
  s.price = TimeSeries(kMonday, 3600, price);
  s.carbon = TimeSeries(kMonday, 3600, carbon);
  SiteEnergy e;
  e.battery.capacity_kwh = 100;
  e.battery.max_charge_kw = e.battery.max_discharge_kw = 25;
  e.battery.round_trip_efficiency = 0.9;
  s.energy = e;
  fleet.sites.push_back(std::move(s));
  return fleet;
}

// A run whose measured window starts on day `day` and lasts 14 days at 10 kWh an hour.
MultiResult window_from_day(int day) {
  MultiResult run;
  run.energy_hour0_s = kMonday + 86400 * static_cast<int64_t>(day);
  run.site_hourly_kwh = {std::vector<double>(14 * 24, 10.0)};
  run.site_carbon_kg = {0.0};
  return run;
}

forecast::TreeParams small_trees() {
  forecast::TreeParams t;
  t.trees = 60;
  t.max_depth = 4;
  t.eta = 0.3;
  return t;
}

TEST(MpcForecast, ParsesItsNames) {
  EXPECT_EQ(parse_mpc_forecast("learned").value(), MpcForecastKind::kLearned);
  EXPECT_EQ(parse_mpc_forecast("seasonal-naive").value(), MpcForecastKind::kSeasonalNaive);
  auto bad = parse_mpc_forecast("oracle");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(has(bad.error(), "unknown forecast 'oracle' (seasonal-naive|learned)"))
      << bad.error();
}

// Yesterday's prices (forecast_days 1) expect Monday as flat as Sunday and Saturday as dear as
// Friday evening; the learned model has the weekday. Trained on the 56 days before the window
// (day 56, a Monday), it pays no more than the seasonal-naive forecast over the next 14 days,
// and less than it by at least a cent a day.
TEST(MpcForecast, LearnedPaysNoMoreThanSeasonalNaiveOnAWeeklyPattern) {
  const Fleet fleet = weekly_price_site();
  const MultiResult run = window_from_day(56);
  auto models = train_mpc_forecasts(fleet, run.energy_hour0_s, 24, small_trees());
  ASSERT_TRUE(models.ok()) << models.error();
  ASSERT_TRUE(models.value().price.has_value());
  EXPECT_TRUE(models.value().missing.empty());
  EXPECT_LE(models.value().price->trained_until_s(), run.energy_hour0_s);
  const energy::ControllerOptions options;  // forecast_days 1
  auto naive = run_site_controllers(fleet, run, energy::ControllerKind::kMpc, options);
  auto learned =
      run_site_controllers(fleet, run, energy::ControllerKind::kMpc, options, {}, &models.value());
  auto none = run_site_controllers(fleet, run, energy::ControllerKind::kNone, options);
  ASSERT_TRUE(naive.ok()) << naive.error();
  ASSERT_TRUE(learned.ok()) << learned.error();
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_LT(naive.value().cost_usd, none.value().cost_usd);
  EXPECT_LT(learned.value().cost_usd, naive.value().cost_usd - 0.14);
}

// A model trained on data past the window's start would see the hours it forecasts: the
// controller refuses it, and so does loading one from a folder.
TEST(MpcForecast, RefusesAModelTrainedPastTheWindowStart) {
  const Fleet fleet = weekly_price_site();
  auto late = train_mpc_forecasts(fleet, kMonday + 70 * 86400, 24, small_trees());
  ASSERT_TRUE(late.ok()) << late.error();
  ASSERT_TRUE(late.value().price.has_value());
  // The same models over a window from day 56, before their training ended.
  MpcForecastModels moved = std::move(late.value());
  const MultiResult run = window_from_day(56);
  moved.window_start_s = run.energy_hour0_s;
  auto refused = run_site_controllers(fleet, run, energy::ControllerKind::kMpc, {}, {}, &moved);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(has(refused.error(),
                  "carbon forecast: the model was trained on data until "
                  "2023-03-13 00:00:00, after the window's start "
                  "2023-02-27 00:00:00: its forecasts would see the hours"))
      << refused.error();
  EXPECT_TRUE(check_trained_before(*moved.price, kMonday + 70 * 86400, "x").ok());

  const std::string dir = ::testing::TempDir() + "mpc-forecast-late";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(moved.price->save(dir + "/price.ubj").ok());
  auto loaded = load_mpc_forecasts(fleet, run.energy_hour0_s, dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(has(loaded.error(), "price.ubj: the model was trained on data until"))
      << loaded.error();
  auto fine = load_mpc_forecasts(fleet, kMonday + 70 * 86400, dir);
  ASSERT_TRUE(fine.ok()) << fine.error();
  EXPECT_TRUE(fine.value().price.has_value());
  EXPECT_FALSE(fine.value().carbon.has_value());  // no carbon.ubj: said, seasonal-naive
  ASSERT_EQ(fine.value().missing.size(), 1U);
  EXPECT_EQ(fine.value().missing[0].kind, "carbon");
}

// With too little history before the window (2023-01-02 in data from that day) no model is
// trained: the mpc keeps the seasonal-naive forecast and a note says so.
TEST(MpcForecast, TooLittleHistoryKeepsSeasonalNaive) {
  const Fleet fleet = weekly_price_site();
  auto m = train_mpc_forecasts(fleet, kMonday + 20 * 86400, 24, small_trees());
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_FALSE(m.value().price.has_value());
  EXPECT_FALSE(m.value().carbon.has_value());
  ASSERT_EQ(m.value().missing.size(), 2U);
  EXPECT_EQ(m.value().missing[0].kind, "carbon");
  EXPECT_EQ(m.value().missing[1].kind, "price");
  EXPECT_EQ(m.value().missing[1].why,
            "price: 480 h of history before 2023-01-22 00:00:00 "
            "leave 11 days to learn from, fewer than 14");
  const MultiResult run = window_from_day(20);
  auto naive = run_site_controllers(fleet, run, energy::ControllerKind::kMpc);
  auto learned = run_site_controllers(fleet, run, energy::ControllerKind::kMpc, {}, {}, &m.value());
  ASSERT_TRUE(learned.ok()) << learned.error();
  EXPECT_DOUBLE_EQ(learned.value().cost_usd, naive.value().cost_usd);
}

}  // namespace
}  // namespace greensched::multi
