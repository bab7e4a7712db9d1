// Both sides of the fleet bound on hand-solved cases: the feasible schedule and its local search
// (multi/whole_job_schedule.hpp), the tightened dual's CPU rows and node-type pools
// (multi/whole_job_bound.hpp, multi/fleet_node_types.hpp), the calibrated fill
// (multi/site_fill.hpp), and the order dual <= optimum <= schedule on random small cases.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "greensched/core/rng.hpp"
#include "greensched/multi/fleet_bound.hpp"
#include "greensched/multi/fleet_node_types.hpp"
#include "greensched/multi/site_fill.hpp"
#include "greensched/multi/whole_job_bound.hpp"
#include "greensched/multi/whole_job_schedule.hpp"
#include "greensched/multi/whole_job_starts.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "greensched/trace/workload.hpp"
#include "multi_fixtures.hpp"

namespace greensched::multi {
namespace {

// Two sites, one hour: a GPU-hour costs 10 at a and 11 at b; a GB moved to b costs 1; one GPU
// per site.
WholeJobCosts one_hour_costs() {
  WholeJobCosts costs;
  costs.per_gpu_hour = {{10}, {11}};
  costs.per_transfer_kwh = {{0}, {1}};
  costs.kwh_per_gb = {0, 1};
  costs.capacity = {1, 1};
  costs.unserved_per_gpu_hour = 1e6;
  return costs;
}

WholeJob hour_job(uint32_t allowed, double data_gb) {
  return WholeJob{.home = 0,
                  .ls = true,
                  .allowed = allowed,
                  .data_gb = data_gb,
                  .gpus = 1,
                  .submit_s = 0,
                  .end_s = 3600};
}

// j1 (no data) costs 10 at a, 11 at b; j2 (19 GB) 10 at a, 11 + 19 = 30 at b. First come,
// first placed: j1 takes a, j2 goes to b: 40. The optimum swaps them: j1 at b, j2 at a, 21.
// Taking one job out and back in finds nothing (a is full); the ejection of j1 finds it.
TEST(WholeJobSearch, EjectionFindsTheOptimumFirstComeMisses) {
  const WholeJobCosts costs = one_hour_costs();
  const std::vector<WholeJob> jobs = {hour_job(0b11, 0), hour_job(0b11, 19)};
  const WholeJobBoundResult first =
      whole_job_bound(jobs, costs, {}, 0, WholeJobSchedule::kWithinCapacity);
  ASSERT_EQ(first.schedule.size(), 2u);
  EXPECT_EQ(first.schedule[0].site, 0);
  EXPECT_EQ(first.schedule[1].site, 1);
  EXPECT_EQ(whole_job_costs(jobs, costs, first.schedule), (std::vector<double>{10, 30}));
  const FeasibleWholeJobSchedule f = improve_whole_job_schedule(jobs, costs, first.schedule);
  EXPECT_NEAR(f.start_cost, 40.0, 1e-9);
  EXPECT_NEAR(f.cost, 21.0, 1e-9);
  EXPECT_EQ(f.unplaced, 0u);
  EXPECT_EQ(f.start[0].site, 1);
  EXPECT_EQ(f.start[1].site, 0);
  EXPECT_GE(f.moves, 1u);
  // The dual knows the optimum: at a price of 1 on a's hour j1 is indifferent, j2 stays: 21.
  EXPECT_NEAR(whole_job_bound(jobs, costs, {{1.0}, {0.0}}, 0).objective, 21.0, 1e-9);
}

// j2 may run only at a. First come, j1 took a and j2 has no room; the repair evicts j1 to b
// (11) and places j2 (10): 21. A third job for a alone finds no room at all: it stays unplaced,
// with its GPU-hour reported.
TEST(WholeJobSearch, RepairPlacesEveryJobItCanAndReportsTheRest) {
  const WholeJobCosts costs = one_hour_costs();
  std::vector<WholeJob> jobs = {hour_job(0b11, 0), hour_job(0b01, 0)};
  const WholeJobBoundResult first =
      whole_job_bound(jobs, costs, {}, 0, WholeJobSchedule::kWithinCapacity);
  EXPECT_EQ(first.schedule[1].site, -1);
  const FeasibleWholeJobSchedule f = improve_whole_job_schedule(jobs, costs, first.schedule);
  EXPECT_EQ(f.start_unplaced, 1u);
  EXPECT_NEAR(f.start_unserved_gpu_hours, 1.0, 1e-12);
  EXPECT_EQ(f.unplaced, 0u);
  EXPECT_NEAR(f.cost, 21.0, 1e-9);
  jobs.push_back(hour_job(0b01, 0));
  const FeasibleWholeJobSchedule stuck = improve_whole_job_schedule(jobs, costs, {});
  EXPECT_EQ(stuck.unplaced, 1u);
  EXPECT_NEAR(stuck.unserved_gpu_hours, 1.0, 1e-12);
  EXPECT_NEAR(stuck.cost, 21.0, 1e-9);
}

// A BE job that fits its cheapest hour only a little later: a's hours cost 30, 10, 10; one GPU.
// j1 (0:00-1:00, no slack) holds hour 0; j2 (0:00-1:00, 2 h slack) started first at once would
// not fit, and the search starts it at 01:00 (10).
TEST(WholeJobSearch, ShiftsWithinTheSlackWhereThereIsRoom) {
  WholeJobCosts costs;
  costs.per_gpu_hour = {{30, 10, 10}};
  costs.per_transfer_kwh = {{0, 0, 0}};
  costs.kwh_per_gb = {0};
  costs.capacity = {1};
  costs.be_slack_s = 7200;
  costs.unserved_per_gpu_hour = 1e6;
  const WholeJob j1{.home = 0, .ls = true, .allowed = 1, .gpus = 1, .end_s = 3600};
  const WholeJob j2{.home = 0, .allowed = 1, .gpus = 1, .end_s = 3600};
  const FeasibleWholeJobSchedule f = improve_whole_job_schedule({j1, j2}, costs, {});
  EXPECT_NEAR(f.cost, 40.0, 1e-9);
  EXPECT_EQ(f.start[1].delay_s, 3600);
}

// CPU rows: a GPU job at a (LS, a only, 1 GPU, 4 cores, 13) fills a's 4 cores; a job without
// GPUs (1 kW floor, 2 cores) costs 10 at a and 20 at b. Without CPU rows it runs at a: 23.
// With them a is full and it goes to its second-best site: 33, the dual's value at any CPU
// price of 5 or more on a (13 + min(10 + 2 mu, 20) + 4 mu - 4 mu), and the search's.
TEST(WholeJobSearch, CpuRowsSendAJobWithoutGpusToItsSecondSite) {
  WholeJobCosts costs;
  costs.per_gpu_hour = {{13}, {13}};
  costs.per_transfer_kwh = {{0}, {0}};
  costs.kwh_per_gb = {0, 0};
  costs.capacity = {1, 1};
  costs.per_cpu_kwh = {{10}, {20}};
  costs.unserved_per_gpu_hour = 1e6;
  const WholeJob gpu{.home = 0, .ls = true, .allowed = 0b01, .gpus = 1, .end_s = 3600, .cpus = 4};
  const WholeJob cpu{
      .home = 0, .ls = true, .allowed = 0b11, .gpus = 0, .end_s = 3600, .floor_kw = 1, .cpus = 2};
  EXPECT_NEAR(whole_job_bound({gpu, cpu}, costs, {}, 0).objective, 23.0, 1e-9);
  costs.cpu_capacity = {4, 4};
  EXPECT_NEAR(whole_job_bound_from({gpu, cpu}, costs, {{}, {{5.0}, {0.0}}}, 0).objective, 33.0,
              1e-9);
  const WholeJobBoundResult climbed = whole_job_bound({gpu, cpu}, costs, {}, 200);
  EXPECT_NEAR(climbed.objective, 33.0, 1e-9);
  ASSERT_EQ(climbed.mu.size(), 2u);
  EXPECT_GE(climbed.mu[0][0], 5.0 - 1e-9);
  const FeasibleWholeJobSchedule f = improve_whole_job_schedule({gpu, cpu}, costs, {});
  EXPECT_NEAR(f.cost, 33.0, 1e-9);
  EXPECT_EQ(f.start[1].site, 1);
  EXPECT_EQ(f.start[1].pool, -1);
}

// Node types: site a has two pools of one GPU (types 0 and 1), b one of two GPUs (type 0). j1
// (home a) and j2 (home b) fit type 0 only. A GPU-hour costs 10 at a, 15 at b, and j1 pays 5
// more to move. By site (2 GPUs each) both run at a: 20. By type only one fits a: j1 at a, j2
// at b, 25 (moving into a is free), the dual's value at any price from 5 to 10 on a's type 0 (and
// the search's).
TEST(WholeJobSearch, GpuCapacityPerNodeType) {
  WholeJobCosts costs;
  costs.per_gpu_hour = {{10}, {15}};
  costs.per_transfer_kwh = {{1}, {1}};
  costs.kwh_per_gb = {0, 1};
  costs.capacity = {2, 2};
  costs.unserved_per_gpu_hour = 1e6;
  const WholeJob j1{
      .home = 0, .ls = true, .allowed = 0b11, .data_gb = 5, .gpus = 1, .end_s = 3600, .types = 1};
  WholeJob j2 = j1;
  j2.home = 1;
  EXPECT_NEAR(whole_job_bound({j1, j2}, costs, {}, 0).objective, 20.0, 1e-9);
  costs.pool_site = {0, 0, 1};
  costs.pool_type = {0, 1, 0};
  costs.pool_capacity = {1, 1, 2};
  EXPECT_NEAR(whole_job_bound({j1, j2}, costs, {{7.0}, {0.0}, {0.0}}, 0).objective, 25.0, 1e-9);
  EXPECT_NEAR(whole_job_bound({j1, j2}, costs, {}, 200).objective, 25.0, 1e-9);
  const FeasibleWholeJobSchedule f = improve_whole_job_schedule({j1, j2}, costs, {});
  EXPECT_NEAR(f.cost, 25.0, 1e-9);
  EXPECT_EQ(f.start[0].pool, 0);
  EXPECT_EQ(f.start[1].pool, 2);
}

// A pod fits the node types whose empty node takes it.
TEST(WholeJobSearch, NodeTypesAPodFits) {
  Fleet fleet = fixtures::two_sites(100, 200);
  const GpuModelId v100 = *fleet.models.intern("V100");
  fleet.sites[1].nodes.push_back(NodeSpec{"b/n1", 64000, 262144, 8, v100});
  auto types = fleet_node_types(fleet);
  ASSERT_TRUE(types.ok()) << types.error();
  ASSERT_EQ(types.value().types.size(), 2u);
  EXPECT_EQ(types.value().gpus[0], (std::vector<double>{2, 0}));
  EXPECT_EQ(types.value().gpus[1], (std::vector<double>{2, 8}));
  EXPECT_EQ(types.value().site_cores, (std::vector<double>{16, 80}));
  EXPECT_EQ(fitting_types(types.value(), fixtures::job("small", 1000, 1, 1000, 0, 1)), 0b11u);
  EXPECT_EQ(fitting_types(types.value(), fixtures::job("wide", 1000, 4, 1000, 0, 1)), 0b10u);
  EXPECT_EQ(fitting_types(types.value(), fixtures::job("cpu", 32000, 0, 0, 0, 1)), 0b10u);
}

// The fleet: a GPU job at a takes all 16 cores of its node for an hour (LS, 1 GPU: 13 g at a
// at 100 g/kWh, 26 at b), a job without GPUs (4 cores, 0.03 kW: 3 g at a, 6 at b) wants a too.
// The plain dual runs both at a (16 g); the tight one finds a's cores full: above 16, at most
// the optimum 19 (the GPU job at a, the other at b). The feasible schedule is that optimum.
TEST(WholeJobSearch, FleetBoundReportsBothSides) {
  Fleet fleet = fixtures::two_sites(100, 200);
  for (SiteSpec& s : fleet.sites) s.network = NetworkCost{1000.0, 0.0, 0.0};
  const std::vector<PodSpec> pods = {fixtures::job("g", 16000, 1, 1000, 0, 3600, Qos::kLS),
                                     fixtures::job("c", 4000, 0, 0, 0, 3600, Qos::kLS)};
  FleetBoundOptions o;
  o.ls_bound_s = 0;
  o.be_slack_s = 0;
  o.data_gb_per_job = 0;
  o.site_fill = {1.0, 1.0};
  o.power_model = fixtures::tiny_power_model();
  auto r = fleet_bound(fleet, pods, std::vector<int>{0, 0}, o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().carbon.carbon_kg, 0.016, 1e-9);
  ASSERT_TRUE(r.value().feasible.has_value());
  EXPECT_NEAR(r.value().feasible->carbon_kg, 0.016, 1e-9);  // CPU is not modelled there
  EXPECT_EQ(r.value().feasible->unplaced_jobs, 0u);
  // Where it runs the work: the GPU job's hour at a, half of a's 2 GPUs over the one hour.
  ASSERT_EQ(r.value().feasible->site_gpu_hours.size(), 2u);
  EXPECT_NEAR(r.value().feasible->site_gpu_hours[0], 1.0, 1e-9);
  EXPECT_EQ(r.value().feasible->site_gpu_hours[1], 0.0);
  EXPECT_NEAR(r.value().feasible->site_alloc_pct[0], 50.0, 1e-9);
  ASSERT_TRUE(r.value().tight.has_value());
  EXPECT_GT(r.value().tight->carbon_kg, 0.016 + 1e-6);
  EXPECT_LE(r.value().tight->carbon_kg, 0.019 + 1e-9);
  EXPECT_EQ(r.value().tight->unfit_jobs, 0u);
  EXPECT_LT(r.value().tight_saving_kg(), r.value().saving_kg());
  // Nothing to save: no share of it.
  EXPECT_TRUE(std::isnan(share_of_bound_pct(1.0, r.value())));
  EXPECT_TRUE(std::isnan(share_of_feasible_pct(1.0, r.value())));
  EXPECT_TRUE(std::isnan(share_of_tight_bound_pct(1.0, r.value())));
  o.tight = false;
  o.feasible = false;
  auto plain = fleet_bound(fleet, pods, std::vector<int>{0, 0}, o);
  ASSERT_TRUE(plain.ok()) << plain.error();
  EXPECT_FALSE(plain.value().tight.has_value());
  EXPECT_TRUE(std::isnan(plain.value().tight_saving_kg()));
  o.tight_site_fill = {1.0};
  EXPECT_FALSE(fleet_bound(fleet, pods, std::vector<int>{0, 0}, o).ok());
}

// The busiest hour of a step function: 1 GPU for half of hour 0 and 3 for the other half is a
// mean of 2 of 4 GPUs; hour 1 holds 2 for half of it: 1 of 4.
TEST(WholeJobSearch, BusiestHourShare) {
  const std::vector<double> t = {0, 1800, 3600, 5400};
  const std::vector<double> alloc = {1, 3, 2, 0};
  EXPECT_NEAR(busiest_hour_share(t, alloc, 0, 2, 4), 0.5, 1e-12);
  EXPECT_NEAR(busiest_hour_share(t, alloc, 3600, 1, 4), 0.25, 1e-12);
  EXPECT_EQ(busiest_hour_share(t, alloc, 0, 2, 0), 0.0);
}

// The fill at a delay within the bound: found below the saturating load, with the replay's p99
// delay within the bound, and alike sites calibrated once.
TEST(WholeJobSearch, SiteFillIsCalibratedWhereJobsStartInTime) {
  const Fleet fleet = builtin_fleet();
  trace::Workload w = trace::builtin_openb_workload();
  trace::assign_synthetic_times(w.pods, 42, 28);
  const uint32_t shapes = trace::assign_shape_ids(w.pods);
  auto fill = calibrate_site_fill(fleet, w.pods, shapes, power::PowerModel::builtin(), 42, 600, 1);
  ASSERT_TRUE(fill.ok()) << fill.error();
  ASSERT_EQ(fill.value().size(), fleet.sites.size());
  for (const SiteFill& f : fill.value()) {
    EXPECT_GT(f.fill, 0.0);
    EXPECT_LE(f.fill, 1.0);
    EXPECT_LT(f.load_pct, 110.0);
    EXPECT_LE(f.p99_delay_s, 600.0);
    EXPECT_EQ(f.fill, fill.value().front().fill);
  }
}

// Random small cases: the dual is at most the best schedule over the starts the search knows
// (found by trying them all), which is at most the search's. The tightened dual (the same
// capacity split into node types, CPU rows added) started from the plain dual's prices is at
// least the plain one.
TEST(WholeJobSearch, DualBelowOptimumBelowScheduleOnRandomCases) {
  Rng rng(7);
  const auto uniform = [&](int lo, int hi) {
    return lo + static_cast<int>(rng.uniform(static_cast<uint64_t>(hi - lo + 1)));
  };
  int checked = 0;
  for (int trial = 0; trial < 60; ++trial) {
    WholeJobCosts costs;
    const int hours = 4;
    for (int s = 0; s < 2; ++s) {
      std::vector<double> row;
      for (int h = 0; h < hours; ++h) row.push_back(uniform(1, 20));
      costs.per_gpu_hour.push_back(row);
      costs.per_transfer_kwh.push_back(std::vector<double>(hours, uniform(0, 3)));
    }
    costs.kwh_per_gb = {1, 1};
    costs.capacity = {static_cast<double>(uniform(1, 2)), static_cast<double>(uniform(1, 2))};
    costs.be_slack_s = 1800 * uniform(0, 2);
    costs.ls_slack_s = 600;
    costs.unserved_per_gpu_hour = 1e4;
    std::vector<WholeJob> jobs;
    const int n = uniform(2, 4);
    for (int j = 0; j < n; ++j) {
      WholeJob job;
      job.home = uniform(0, 1);
      job.ls = uniform(0, 1) == 1;
      job.allowed = static_cast<uint32_t>(uniform(1, 3));
      job.data_gb = uniform(0, 2);
      job.gpus = 1;
      job.submit_s = 1800 * uniform(0, 3);
      job.end_s = job.submit_s + 1800 * uniform(1, 3);
      job.types = static_cast<uint32_t>(uniform(1, 3));
      jobs.push_back(job);
    }
    // Every start of every job, and the best combination within the capacities.
    WholeJobPricing pricing(costs);
    std::vector<std::vector<WholeJobStart>> starts(jobs.size());
    std::vector<std::vector<double>> start_cost(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      pricing.each_start(jobs[j], [&](std::size_t s, int pool, int64_t d, double v) {
        starts[j].push_back(WholeJobStart{static_cast<int>(s), d, pool});
        start_cost[j].push_back(v);
      });
    }
    double best = INFINITY;
    std::vector<std::size_t> pick(jobs.size(), 0);
    for (;;) {
      std::vector<std::vector<double>> used(2, std::vector<double>(hours, 0.0));
      double cost = 0;
      bool fits = true;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const WholeJobStart& at = starts[j][pick[j]];
        cost += start_cost[j][pick[j]];
        pricing.each_hour(jobs[j], at.delay_s, 1.0, [&](std::size_t h, double x) {
          auto& u = used[static_cast<std::size_t>(at.site)][h];
          u += x;
          fits = fits && u <= costs.capacity[static_cast<std::size_t>(at.site)] + 1e-9;
        });
      }
      if (fits) best = std::min(best, cost);
      std::size_t j = 0;
      while (j < jobs.size() && ++pick[j] == starts[j].size()) pick[j++] = 0;
      if (j == jobs.size()) break;
    }
    const WholeJobBoundResult dual =
        whole_job_bound(jobs, costs, {}, 300, WholeJobSchedule::kWithinCapacity);
    const FeasibleWholeJobSchedule f = improve_whole_job_schedule(jobs, costs, dual.schedule);
    if (std::isfinite(best)) {
      ++checked;
      EXPECT_LE(dual.objective, best + 1e-9) << "trial " << trial;
      EXPECT_EQ(f.unplaced, 0u) << "trial " << trial;
      EXPECT_LE(best, f.cost + 1e-9) << "trial " << trial;
    }
    // The same capacity split into two node types per site, and CPU rows of room to spare.
    WholeJobCosts typed = costs;
    std::vector<std::vector<double>> start;
    for (int s = 0; s < 2; ++s) {
      for (int t = 0; t < 2; ++t) {
        typed.pool_site.push_back(s);
        typed.pool_type.push_back(t);
        typed.pool_capacity.push_back(costs.capacity[static_cast<std::size_t>(s)] / 2);
        start.push_back(dual.lambda[static_cast<std::size_t>(s)]);
      }
    }
    typed.per_cpu_kwh = {std::vector<double>(hours, 1.0), std::vector<double>(hours, 2.0)};
    typed.cpu_capacity = {8, 8};
    std::vector<WholeJob> with_cpus = jobs;
    for (WholeJob& job : with_cpus) job.cpus = 1;
    const WholeJobBoundResult tight =
        whole_job_bound_from(with_cpus, typed, WholeJobPrices{start, {}}, 50);
    EXPECT_GE(tight.objective, dual.objective - 1e-9) << "trial " << trial;
  }
  EXPECT_GT(checked, 30);
}

}  // namespace
}  // namespace greensched::multi
