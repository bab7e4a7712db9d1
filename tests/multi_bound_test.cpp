// The fleet bound (multi/fleet_bound.hpp) on hand-solved cases, and the home sites it shares
// with the fleet simulator (multi/fleet_jobs.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "greensched/multi/fleet_bound.hpp"
#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/whole_job_bound.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "greensched/trace/workload.hpp"
#include "multi_fixtures.hpp"

namespace greensched::multi {
namespace {

using fixtures::job;

// Sites a and b of the fixture (one T4 node of 2 GPUs each: 260 W at full power, 0.13 kWh per
// GPU-hour), over three hours. Intensity a: 300, 200, 100; b: 100, 400, 400; later hours 1000.
// Per GPU-hour: a0 39 g, a1 26, a2 13, b0 13, b1 52, b2 52.
Fleet three_hour_fleet() {
  Fleet fleet = fixtures::two_sites(0, 0);
  fleet.sites[0].carbon = TimeSeries(fleet.start_s, 3600, {300, 200, 100, 1000, 1000, 1000});
  fleet.sites[1].carbon = TimeSeries(fleet.start_s, 3600, {100, 400, 400, 1000, 1000, 1000});
  for (SiteSpec& s : fleet.sites) s.network = NetworkCost{1000.0, 0.0, 0.0};
  return fleet;
}

// j1: BE, 2 GPUs in hour 0; j2: LS, 1 GPU in hour 0; j3: BE, 1 GPU in hour 1.
std::vector<PodSpec> three_jobs() {
  return {job("j1", 1000, 2, 1000, 0, 3600), job("j2", 1000, 1, 1000, 0, 3600, Qos::kLS),
          job("j3", 1000, 1, 1000, 3600, 7200)};
}

FleetBoundOptions options(int64_t slack_h, double data_gb) {
  FleetBoundOptions o;
  o.be_slack_s = slack_h * 3600;
  o.data_gb_per_job = data_gb;
  o.site_fill = {1.0, 1.0};
  o.power_model = fixtures::tiny_power_model();
  return o;
}

Result<FleetBoundResult> solve(const Fleet& fleet, const std::vector<int>& homes,
                               const FleetBoundOptions& o) {
  const std::vector<PodSpec> pods = three_jobs();
  return fleet_bound(fleet, pods, homes, o);
}

// j1 home a, j2 home b, j3 home b. At home: j1 2 x 39, j2 13, j3 52 = 143 g. With 2 h of slack
// and free moves the cheap cells b0 and a2 (two GPUs each) take everything: j2 b0, j1 b0 and
// a2, j3 a2 = 4 x 13 = 52 g. Without slack j1 has b0 (one GPU left) and a0, j3 a1: 13 + 39 +
// 13 + 26 = 91 g.
TEST(FleetBound, HandSolvedTwoSitesThreeHours) {
  const Fleet fleet = three_hour_fleet();
  auto r = solve(fleet, {0, 1, 1}, options(2, 0));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().local.carbon_kg, 0.143, 1e-9);
  EXPECT_NEAR(r.value().carbon.carbon_kg, 0.052, 1e-9);
  EXPECT_NEAR(r.value().carbon_vs_local_pct(), 100.0 * (52.0 / 143.0 - 1.0), 1e-6);
  EXPECT_NEAR(r.value().gpu_hours, 4.0, 1e-9);
  EXPECT_NEAR(r.value().carbon.energy_kwh, 0.52, 1e-9);
  EXPECT_NEAR(r.value().unserved_gpu_hours, 0.0, 1e-9);
  EXPECT_FALSE(r.value().cost.has_value());  // no prices

  // Where the work runs, every job homed at b: at home b holds all 4 GPU-hours; the bound
  // runs 2 at b0 and 2 at a2, the only cells at 13 g. Each site has 2 GPUs over the 4 hours
  // work may run in (hours 0 and 1, and up to 2 h of slack).
  auto all_b = solve(fleet, {1, 1, 1}, options(2, 0));
  ASSERT_TRUE(all_b.ok()) << all_b.error();
  EXPECT_EQ(all_b.value().site_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_NEAR(all_b.value().carbon.carbon_kg, 0.052, 1e-9);
  ASSERT_EQ(all_b.value().local.site_gpu_hours.size(), 2u);
  ASSERT_EQ(all_b.value().carbon.site_gpu_hours.size(), 2u);
  EXPECT_NEAR(all_b.value().local.site_gpu_hours[0], 0.0, 1e-9);
  EXPECT_NEAR(all_b.value().local.site_gpu_hours[1], 4.0, 1e-9);
  EXPECT_NEAR(all_b.value().carbon.site_gpu_hours[0], 2.0, 1e-9);
  EXPECT_NEAR(all_b.value().carbon.site_gpu_hours[1], 2.0, 1e-9);
  EXPECT_NEAR(all_b.value().local.site_alloc_pct[1], 50.0, 1e-9);
  EXPECT_NEAR(all_b.value().carbon.site_alloc_pct[0], 25.0, 1e-9);

  auto none = solve(fleet, {0, 1, 1}, options(0, 0));
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_NEAR(none.value().carbon.carbon_kg, 0.091, 1e-9);
  EXPECT_NEAR(none.value().carbon.gpu_hours_shifted, 0.0, 1e-9);
}

// A job without GPUs (4 of the node's 16 vCPU: a quarter of its one 120 W socket, 0.03 kW)
// draws 9 g in a0, 6 in a1, 3 in a2, 3 in b0 and 12 in b1 and b2, and takes no GPU: at home
// in a0 it adds 9 g to the every-job-at-home 143, and the bound runs it in b0 or a2 beside
// the GPU work's 52 g. As LS work whose 100 GB cannot reach b within 600 s it stays at a,
// starting up to its 600 s bound late: 3000 s of a0 and 600 s of a1, 7.5 + 1 = 8.5 g.
TEST(FleetBound, JobsWithoutGpusDrawTheirCpuFloor) {
  Fleet fleet = three_hour_fleet();
  std::vector<PodSpec> pods = three_jobs();
  pods.push_back(job("c1", 4000, 0, 0, 0, 3600));
  auto r = fleet_bound(fleet, pods, std::vector<int>{0, 1, 1, 0}, options(2, 0));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().local.carbon_kg, 0.152, 1e-9);
  EXPECT_NEAR(r.value().carbon.carbon_kg, 0.055, 1e-9);
  EXPECT_NEAR(r.value().cpu_only_saving_kg, 0.006, 1e-9);
  EXPECT_NEAR(r.value().gpu_hours, 4.0, 1e-9);  // GPU work only

  for (SiteSpec& s : fleet.sites) s.network = NetworkCost{1.0, 0.0, 1.0};
  pods.back().qos = Qos::kLS;
  FleetBoundOptions scheduled = options(2, 100);
  scheduled.schedule = true;
  auto stuck = fleet_bound(fleet, pods, std::vector<int>{0, 1, 1, 0}, scheduled);
  ASSERT_TRUE(stuck.ok()) << stuck.error();
  EXPECT_NEAR(stuck.value().cpu_only_saving_kg, 0.0005, 1e-9);
  // The schedule read off the bound's prices, per pod: the job without GPUs at a, 600 s late.
  ASSERT_EQ(stuck.value().schedule.size(), pods.size());
  EXPECT_EQ(stuck.value().schedule[3].site, 0);
  EXPECT_EQ(stuck.value().schedule[3].delay_s, 600);
  for (const WholeJobStart& at : stuck.value().schedule) EXPECT_GE(at.site, 0);
  EXPECT_TRUE(r.value().schedule.empty());  // not asked
}

// j2 now at home a with 100 GB that take 801 s to reach b (1 Gbps): beyond its 600 s bound it
// stays at a0 (39), while j1 takes both GPUs of b0 (26) and j3 a2 (13): 78 g. Allowing 900 s
// lets j2 reach b0 too: 52 g again.
TEST(FleetBound, LatencySensitiveWorkMovesOnlyWhereItsDataArrivesInTime) {
  Fleet fleet = three_hour_fleet();
  for (SiteSpec& s : fleet.sites) s.network = NetworkCost{1.0, 0.0, 1.0};
  auto stuck = solve(fleet, {0, 0, 1}, options(2, 100));
  ASSERT_TRUE(stuck.ok()) << stuck.error();
  EXPECT_NEAR(stuck.value().local.carbon_kg, (78.0 + 39.0 + 52.0) / 1000.0, 1e-9);
  EXPECT_NEAR(stuck.value().carbon.carbon_kg, 0.078, 1e-9);
  FleetBoundOptions later = options(2, 100);
  later.ls_bound_s = 900;
  auto moved = solve(fleet, {0, 0, 1}, later);
  ASSERT_TRUE(moved.ok()) << moved.error();
  EXPECT_NEAR(moved.value().carbon.carbon_kg, 0.052, 1e-9);
}

// Moves pay transfer energy: 64 GB per job at 0.001 kWh/GB is 0.032 kWh per GPU-hour of j1 and
// 0.064 of j3, at the destination's intensity in the slice's hour. j1 may run at a2 13, a1 26
// or b0 13 + 3.2; j3 at b1 or b2 52 (home), a2 13 + 12.8 or a1 26 + 12.8; j2 at b0 13. With one
// GPU left at b0 and two at a2, the best is j1 at a2 and b0, j3 at a2: 13 + 16.2 + 25.8 + 13 =
// 68 g, with 0.096 kWh of transfer; two GPU-hours moved and two shifted.
TEST(FleetBound, MovesPayTransferEnergy) {
  Fleet fleet = three_hour_fleet();
  for (SiteSpec& s : fleet.sites) s.network = NetworkCost{1000.0, 0.001, 0.0};
  auto r = solve(fleet, {0, 1, 1}, options(2, 64));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().carbon.carbon_kg, 0.068, 1e-9);
  EXPECT_NEAR(r.value().carbon.transfer_kwh, 0.096, 1e-9);
  EXPECT_NEAR(r.value().carbon.energy_kwh, 0.52 + 0.096, 1e-9);
  EXPECT_NEAR(r.value().carbon.gpu_hours_moved, 2.0, 1e-9);
  EXPECT_NEAR(r.value().carbon.gpu_hours_shifted, 2.0, 1e-9);
}

// With prices the bound also solves for cost: here price follows intensity / 1000 USD/kWh at a
// and is flat 0.2 at b, so the least-cost schedule differs from the least-carbon one.
TEST(FleetBound, CostBoundWhereEverySiteHasPrices) {
  Fleet fleet = three_hour_fleet();
  fleet.sites[0].price = TimeSeries(fleet.start_s, 3600, {0.3, 0.2, 0.1, 1, 1, 1});
  fleet.sites[1].price = TimeSeries(fleet.start_s, 3600, {0.2, 0.2, 0.2, 1, 1, 1});
  auto r = solve(fleet, {0, 1, 1}, options(2, 0));
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(r.value().cost.has_value());
  // At home: j1 2 x 0.039, j2 0.026, j3 0.026 = 0.13 USD. Least cost: a2 (0.013) takes two
  // GPU-hours, the other two pay 0.026 anywhere else that is free: 0.078 USD.
  EXPECT_NEAR(r.value().local.cost_usd, 0.13, 1e-9);
  EXPECT_NEAR(r.value().cost->cost_usd, 0.078, 1e-9);
  EXPECT_NEAR(r.value().cost_vs_local_pct(), 100.0 * (0.078 / 0.13 - 1.0), 1e-6);
}

// A capacity share below 1 binds: with half of each site (1 GPU), j1's two GPU-hours and j3's
// one compete with j2 for b0 and a2, one GPU each: j2 b0, then a2 and the next best a1 (26)
// and a0 (39) or b-hours: 13 + 13 + 26 + 39 = 91 g.
TEST(FleetBound, SiteCapacityShareBinds) {
  const Fleet fleet = three_hour_fleet();
  FleetBoundOptions o = options(2, 0);
  o.site_fill = {0.5, 0.5};
  auto r = solve(fleet, {0, 1, 1}, o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().carbon.carbon_kg, 0.091, 1e-9);
}

// A job runs at one site from start to end, without a pause: l, LS, 1 GPU for hours 0-2, costs 39 +
// 26 + 13 = 78 g at a and 13 + 52 + 52 = 117 at b; hour by hour the cheaper cells would make 52.
// From 00:30 to 02:30, starting at once, it is 0.5 GPU-hours at a0, a whole hour at a1 and 0.5 at
// a2: 19.5 + 26 + 6.5 = 52 g at a (84.5 at b), where the day-block LP alone lets its partial
// first and last hours go to b0 and a2 (6.5 + 26 + 6.5 = 39 g).
TEST(FleetBound, AJobRunsAtOneSite) {
  const Fleet fleet = three_hour_fleet();
  const std::vector<PodSpec> whole = {job("l", 1000, 1, 1000, 0, 3 * 3600, Qos::kLS)};
  auto r = fleet_bound(fleet, whole, std::vector<int>{0}, options(0, 0));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().local.carbon_kg, 0.078, 1e-9);
  EXPECT_NEAR(r.value().carbon.carbon_kg, 0.078, 1e-9);
  const std::vector<PodSpec> offset = {job("l", 1000, 1, 1000, 1800, 9000, Qos::kLS)};
  FleetBoundOptions at_once = options(0, 0);
  at_once.ls_bound_s = 0;
  auto o = fleet_bound(fleet, offset, std::vector<int>{0}, at_once);
  ASSERT_TRUE(o.ok()) << o.error();
  EXPECT_NEAR(o.value().carbon.carbon_kg, 0.052, 1e-9);
  EXPECT_NEAR(o.value().carbon.day_lp_carbon_kg, 0.039, 1e-9);
  EXPECT_FALSE(o.value().carbon.day_blocks);
  // At home already: the bound saves nothing, the day-block LP alone 13 g.
  EXPECT_NEAR(o.value().saving_kg(), 0.0, 1e-9);
  EXPECT_NEAR(o.value().day_lp_saving_kg(), 0.052 - 0.039, 1e-9);
  // Within its 600 s start bound it may start at 00:40: a third of a0 (13), a1 (26) and two
  // thirds of a2 (8.67): 47.67 g.
  auto late = fleet_bound(fleet, offset, std::vector<int>{0}, options(0, 0));
  ASSERT_TRUE(late.ok()) << late.error();
  EXPECT_NEAR(late.value().carbon.carbon_kg, (13.0 + 26.0 + 26.0 / 3.0) / 1000.0, 1e-9);
}

// The three-hour fleet's grams per GPU-hour as whole-job costs, one GPU per site, transfers free.
WholeJobCosts three_hour_costs() {
  WholeJobCosts costs;
  costs.per_gpu_hour = {{39, 26, 13}, {13, 52, 52}};
  costs.per_transfer_kwh = {{0, 0, 0}, {0, 0, 0}};
  costs.kwh_per_gb = {0, 0};
  costs.capacity = {1, 1};
  costs.unserved_per_gpu_hour = 1e6;
  return costs;
}

// Two such jobs (00:30 to 02:30, LS, home a) with one GPU per site: whole, one runs at a (52 g)
// and the other at b (84.5 g), 136.5 g. The dual says the same: at a price of 32.5 g on a1's
// GPU-hour either site costs a job 84.5, and 2 x 84.5 - 32.5 x 1 GPU = 136.5. From prices of 0
// the subgradient steps climb toward it and never pass it.
TEST(FleetBound, WholeJobDualBoundHandSolved) {
  const WholeJobCosts costs = three_hour_costs();
  const WholeJob j{
      .home = 0, .ls = true, .allowed = 0b11, .gpus = 1, .submit_s = 1800, .end_s = 9000};
  const std::vector<WholeJob> jobs = {j, j};
  const std::vector<std::vector<double>> at_optimum = {{0, 32.5, 0}, {0, 0, 0}};
  EXPECT_NEAR(whole_job_bound(jobs, costs, at_optimum, 0).objective, 136.5, 1e-9);
  // With no prices both take a: 104 g, below the optimum, as a bound must be.
  EXPECT_NEAR(whole_job_bound(jobs, costs, {}, 0).objective, 104.0, 1e-9);
  const WholeJobBoundResult climbed = whole_job_bound(jobs, costs, {}, 300);
  EXPECT_GT(climbed.objective, 130.0);
  EXPECT_LE(climbed.objective, 136.5 + 1e-9);
  // It gives the prices at which it found its best: priced so, the jobs give that bound again,
  // and a price sits on a1, the hour both jobs want (the only one that binds).
  ASSERT_EQ(climbed.lambda.size(), 2u);
  ASSERT_EQ(climbed.lambda[0].size(), 3u);
  EXPECT_NEAR(whole_job_bound(jobs, costs, climbed.lambda, 0).objective, climbed.objective, 1e-9);
  EXPECT_GT(climbed.lambda[0][1], 20.0);
  EXPECT_EQ(whole_job_bound(jobs, costs, at_optimum, 0).lambda, at_optimum);
}

// The schedule read off those prices: at 32.5 g on a1 either site costs a job 84.5 g, and the
// first takes a (the earlier site among equals). Within the capacities the second finds a1
// taken and goes to b; a third finds hour 1 full at both and has no start (site -1). Alone,
// each takes a. No schedule unless asked.
TEST(FleetBound, WholeJobScheduleFirstComeFirstPlaced) {
  const WholeJobCosts costs = three_hour_costs();
  const WholeJob j{
      .home = 0, .ls = true, .allowed = 0b11, .gpus = 1, .submit_s = 1800, .end_s = 9000};
  const std::vector<std::vector<double>> at_optimum = {{0, 32.5, 0}, {0, 0, 0}};
  const auto sites_of = [](const WholeJobBoundResult& r) {
    std::vector<int> sites;
    for (const WholeJobStart& at : r.schedule) {
      EXPECT_EQ(at.delay_s, 0);  // an LS job with no start bound starts at once
      sites.push_back(at.site);
    }
    return sites;
  };
  EXPECT_EQ(
      sites_of(whole_job_bound({j, j, j}, costs, at_optimum, 0, WholeJobSchedule::kWithinCapacity)),
      (std::vector<int>{0, 1, -1}));
  EXPECT_EQ(sites_of(whole_job_bound({j, j, j}, costs, at_optimum, 0, WholeJobSchedule::kAlone)),
            (std::vector<int>{0, 0, 0}));
  EXPECT_TRUE(whole_job_bound({j, j}, costs, at_optimum, 0).schedule.empty());
  // A BE job of an hour (00:30 to 01:30) with an hour of slack, at a only and no prices: now it
  // costs 39 x 0.5 + 26 x 0.5 = 32.5 g, from 01:00 26 g, from 01:30 26 x 0.5 + 13 x 0.5 =
  // 19.5 g: the schedule starts it an hour late.
  WholeJobCosts slack = costs;
  slack.be_slack_s = 3600;
  const WholeJob be{.home = 0, .allowed = 0b01, .gpus = 1, .submit_s = 1800, .end_s = 5400};
  const WholeJobBoundResult late = whole_job_bound({be}, slack, {}, 0, WholeJobSchedule::kAlone);
  ASSERT_EQ(late.schedule.size(), 1u);
  EXPECT_EQ(late.schedule[0].site, 0);
  EXPECT_EQ(late.schedule[0].delay_s, 3600);
}

// A BE job starts up to its slack late, at whichever second costs least, and runs without a
// pause; a move pays its transfer at the cheapest hour its dispatch could fall in. e, BE, 1 GPU
// in hour 0, home a (39 g), with an hour of slack runs at a1 (26) or, moving 10 GB at 0.1
// kWh/GB (1 kWh at b: 100 or 400 g/kWh), at b0: 13 + 100 = 113. So 26; with transfer free, 13.
// From 00:30 to 01:30 at a, with a1 at 10 g: starting at 01:00 costs 10, at 00:30 or 01:30
// 24.5.
TEST(FleetBound, WholeJobBoundDelaysBeJobsAndPaysTransfers) {
  WholeJobCosts costs = three_hour_costs();
  costs.per_transfer_kwh = {{300, 200, 100}, {100, 400, 400}};
  costs.kwh_per_gb = {0.1, 0.1};
  costs.be_slack_s = 3600;
  const WholeJob e{.home = 0, .allowed = 0b11, .data_gb = 10, .gpus = 1, .end_s = 3600};
  EXPECT_NEAR(whole_job_bound({e}, costs, {}, 0).objective, 26.0, 1e-9);
  costs.kwh_per_gb = {0, 0};
  EXPECT_NEAR(whole_job_bound({e}, costs, {}, 0).objective, 13.0, 1e-9);
  costs.per_gpu_hour[0] = {39, 10, 39};
  const WholeJob half{.home = 0, .allowed = 0b01, .gpus = 1, .submit_s = 1800, .end_s = 5400};
  EXPECT_NEAR(whole_job_bound({half}, costs, {}, 0).objective, 10.0, 1e-9);
  costs.be_slack_s = 0;
  EXPECT_NEAR(whole_job_bound({half}, costs, {}, 0).objective, 24.5, 1e-9);
}

// What runs past the measured window is not measured, in the bound as in the simulator: a BE
// job in the window's last hour (b2, 52 g) with an hour of slack costs nothing in it.
TEST(FleetBound, WorkShiftedPastTheWindowIsNotMeasured) {
  const Fleet fleet = three_hour_fleet();
  const std::vector<PodSpec> last = {job("e", 1000, 1, 1000, 2 * 3600, 3 * 3600)};
  FleetBoundOptions o = options(1, 0);
  o.measure_to_s = 3 * 3600;
  auto r = fleet_bound(fleet, last, std::vector<int>{1}, o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().local.carbon_kg, 0.052, 1e-9);
  EXPECT_NEAR(r.value().carbon.carbon_kg, 0.0, 1e-9);
  EXPECT_NEAR(r.value().carbon.gpu_hours_shifted, 1.0, 1e-9);
}

TEST(FleetBound, BadInputIsAnError) {
  const Fleet fleet = three_hour_fleet();
  FleetBoundOptions o = options(2, 0);
  EXPECT_FALSE(solve(fleet, {0, 1}, o).ok());     // a home per job
  EXPECT_FALSE(solve(fleet, {0, 1, 2}, o).ok());  // site 2 of 2
  o.site_fill = {1.0};
  EXPECT_FALSE(solve(fleet, {0, 1, 1}, o).ok());
  o.site_fill = {1.0, 1.5};
  EXPECT_FALSE(solve(fleet, {0, 1, 1}, o).ok());
}

// The bound sees the jobs where the simulator put them: fleet_home_sites draws run_fleet's
// home sites for any seed.
TEST(FleetBound, HomeSitesAreTheSimulatorsOwn) {
  const Fleet fleet = fixtures::two_sites(100, 200);
  std::vector<PodSpec> pods;
  for (int i = 0; i < 40; ++i) {
    pods.push_back(job(("p" + std::to_string(i)).c_str(), 1000, 1, 500, i * 60, i * 60 + 30));
  }
  const uint32_t shapes = trace::assign_shape_ids(pods);
  for (uint64_t seed : {1u, 42u, 7u}) {
    MultiOptions o;
    o.seed = seed;
    o.power_model = fixtures::tiny_power_model();
    auto r = run_fleet(fleet, pods, shapes, o);
    ASSERT_TRUE(r.ok()) << r.error();
    const std::vector<int> homes = fleet_home_sites(fleet, pods.size(), seed);
    int at_b = 0;
    for (std::size_t j = 0; j < pods.size(); ++j) {
      EXPECT_EQ(homes[j], r.value().decisions[j].home_site) << "seed " << seed << " job " << j;
      at_b += homes[j];
    }
    EXPECT_GT(at_b, 5);  // both sites are drawn
    EXPECT_LT(at_b, 35);
  }
}

// A site's capacity and its draw per allocated GPU come from a replay of its own scheduler with
// more work offered than it can run.
TEST(FleetBound, SiteCapacityIsMeasuredByReplays) {
  const Fleet fleet = builtin_fleet();
  trace::Workload w = trace::builtin_openb_workload();
  trace::assign_synthetic_times(w.pods, 42, 28);
  const uint32_t shapes = trace::assign_shape_ids(w.pods);
  auto fill = measure_site_capacity(fleet, w.pods, shapes, power::PowerModel::builtin(), 42, 1);
  ASSERT_TRUE(fill.ok()) << fill.error();
  ASSERT_EQ(fill.value().size(), fleet.sites.size());
  // Saturated, FGD packs the site's GPUs nearly full, but not quite: some requests fit no
  // node's leftovers. The four sites are alike: one replay.
  // Each allocated GPU draws its share of its node's power: less than the GPUs' full-power
  // figure (which has every CPU core busy too), more than the idle share alone.
  auto figures = power::PowerModel::builtin().resolve(fleet.sites[0].nodes, fleet.models);
  ASSERT_TRUE(figures.ok()) << figures.error();
  const double full_kw = full_gpu_it_watts(fleet.sites[0].nodes, figures.value()) / 1000.0;
  for (const SiteCapacity& c : fill.value()) {
    EXPECT_GT(c.fill, 0.9);
    EXPECT_LT(c.fill, 1.0);
    EXPECT_EQ(c.fill, fill.value().front().fill);
    EXPECT_LT(c.gpu_kw, full_kw);
    EXPECT_GT(c.gpu_kw, 0.5 * full_kw);
  }
}

}  // namespace
}  // namespace greensched::multi
