// The work-shifting LP (multi/shift_lp.hpp) on hand-solved cases, and the rolling plan of
// green-plan (multi/capacity_plan.hpp) on a hand-made fleet.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>

#include "greensched/core/rng.hpp"

#include "greensched/multi/capacity_plan.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/multi/shift_lp.hpp"
#include "greensched/trace/workload.hpp"
#include "multi_fixtures.hpp"

namespace greensched::multi {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Two sites, three hours. Site a: capacity 2, 1, 1 GPU-hours at 10, 12, 10 per GPU-hour;
// site b: 2, 3, 2 at 30, 5, 30. Work w0 (home a, hour 0, 2 GPU-hours, may wait 1 h, moving
// costs 1 per GPU-hour) may run at a0 10, a1 12, b0 31, b1 6; w1 (home b, hour 1, 2 GPU-hours,
// no wait) at b1 5 or a1 13. By hand: w1 takes b1 twice (10), w0 takes the third GPU-hour of
// b1 (6) and a0 (10): 26. Moving a GPU-hour of w0 between a0 and b1 changes the cost by 4 either
// way, so b1's capacity is worth 4 per GPU-hour; a0 has room left and every other hour is
// unused, so their prices are 0.
TEST(ShiftLp, HandSolvedTwoSitesThreeHours) {
  const std::vector<ShiftLpSite> sites = {{{2, 1, 1}, {10, 12, 10}}, {{2, 3, 2}, {30, 5, 30}}};
  const std::vector<ShiftLpWork> work = {{0, 0, 2.0, 1, {0.0, 1.0}}, {1, 1, 2.0, 0, {1.0, 0.0}}};
  auto r = solve_shift_lp(sites, work);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().objective, 26.0, 1e-9);
  EXPECT_NEAR(r.value().unserved_gpu_hours, 0.0, 1e-9);
  ASSERT_EQ(r.value().flows.size(), 3u);
  const auto flow = [&](std::size_t i) {
    const ShiftLpFlow& f = r.value().flows[i];
    return std::tuple(f.work, f.site, f.hour, std::round(f.gpu_hours * 1e9) / 1e9);
  };
  EXPECT_EQ(flow(0), std::tuple(std::size_t{0}, 0, 0, 1.0));
  EXPECT_EQ(flow(1), std::tuple(std::size_t{0}, 1, 1, 1.0));
  EXPECT_EQ(flow(2), std::tuple(std::size_t{1}, 1, 1, 2.0));
  const auto& price = r.value().capacity_price;
  EXPECT_NEAR(price[1][1], 4.0, 1e-9);
  for (const auto& [s, h] : {std::pair{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 2}}) {
    EXPECT_NEAR(price[s][h], 0.0, 1e-9) << s << " " << h;
  }
}

TEST(ShiftLp, ShiftWindowAndForbiddenMovesAreRespected) {
  // b is free and cheap, but w may not move there (+inf: its data cannot arrive in time), and
  // a's cheap hour 2 is beyond its one hour of shift: it runs at a in hours 0 and 1 only.
  const std::vector<ShiftLpSite> sites = {{{5, 5, 5}, {20, 10, 1}}, {{5, 5, 5}, {0, 0, 0}}};
  const std::vector<ShiftLpWork> work = {{0, 0, 3.0, 1, {0.0, kInf}}};
  auto r = solve_shift_lp(sites, work);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().objective, 30.0, 1e-9);  // all three GPU-hours at a1
  for (const ShiftLpFlow& f : r.value().flows) {
    EXPECT_EQ(f.site, 0);
    EXPECT_LE(f.hour, 1);
  }
}

TEST(ShiftLp, WorkBeyondCapacityIsUnservedAtThePenalty) {
  // One site, one hour of 1 GPU-hour at cost 3, 4 GPU-hours of work: 3 unserved. The hour's
  // capacity is worth what a GPU-hour there saves: the penalty less its cost.
  ShiftLpOptions options;
  options.unserved_penalty = 100;
  auto r = solve_shift_lp({{{1}, {3}}}, {{0, 0, 4.0, 0, {0.0}}}, options);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().objective, 3.0, 1e-9);
  EXPECT_NEAR(r.value().unserved_gpu_hours, 3.0, 1e-9);
  EXPECT_NEAR(r.value().capacity_price[0][0], 97.0, 1e-9);
}

// The textbook form of the same LP, the reference for the queue form solve_shift_lp uses: one
// column per piece, site and hour of its window (plus one unserved column per piece), one row
// per piece (served in full) and per site and hour (capacity). Returns the optimal cost,
// unserved work paid at the penalty.
double one_column_per_hour_optimum(const std::vector<ShiftLpSite>& sites,
                                   const std::vector<ShiftLpWork>& work, double penalty) {
  const std::size_t hours = sites.front().capacity.size();
  std::vector<int> row, col;
  std::vector<double> value, cost;
  const auto cap_row = [&](std::size_t s, std::size_t h) {
    return static_cast<int>(work.size() + s * hours + h);
  };
  for (std::size_t w = 0; w < work.size(); ++w) {
    const std::size_t last =
        std::min(hours - 1, static_cast<std::size_t>(work[w].hour + work[w].max_shift_h));
    for (std::size_t s = 0; s <= sites.size(); ++s) {
      const bool unserved = s == sites.size();
      const double move =
          unserved || static_cast<int>(s) == work[w].home ? 0.0 : work[w].move_cost_per_gpu_hour[s];
      if (!std::isfinite(move)) continue;
      for (std::size_t h = static_cast<std::size_t>(work[w].hour);
           h <= (unserved ? work[w].hour : last); ++h) {
        const int c = static_cast<int>(cost.size());
        cost.push_back(unserved ? penalty : sites[s].cost_per_gpu_hour[h] + move);
        row.push_back(static_cast<int>(w));
        col.push_back(c);
        value.push_back(1.0);
        if (!unserved) {
          row.push_back(cap_row(s, h));
          col.push_back(c);
          value.push_back(1.0);
        }
      }
    }
  }
  const int rows = static_cast<int>(work.size() + sites.size() * hours);
  std::vector<double> lo(rows, -COIN_DBL_MAX), hi(rows), col_lo(cost.size(), 0.0),
      col_hi(cost.size(), COIN_DBL_MAX);
  for (std::size_t w = 0; w < work.size(); ++w) lo[w] = hi[w] = work[w].gpu_hours;
  for (std::size_t s = 0; s < sites.size(); ++s) {
    for (std::size_t h = 0; h < hours; ++h) hi[cap_row(s, h)] = sites[s].capacity[h];
  }
  CoinPackedMatrix matrix(true, row.data(), col.data(), value.data(),
                          static_cast<CoinBigIndex>(value.size()));
  matrix.setDimensions(rows, static_cast<int>(cost.size()));
  ClpSimplex clp;
  clp.setLogLevel(0);
  clp.loadProblem(matrix, col_lo.data(), col_hi.data(), cost.data(), lo.data(), hi.data());
  clp.dual();
  EXPECT_TRUE(clp.isProvenOptimal());
  return clp.objectiveValue();
}

// Random fleets and work with one slack for all (agreeable windows), some moves forbidden, and
// in every other trial latency-sensitive work in its own hour beside it (immediate pieces,
// outside the queue): the queue form has the textbook form's optimum, its flows keep every window
// and capacity, and a warm start from the previous hour's basis changes nothing but the work done.
TEST(ShiftLp, QueueFormHasTheOptimumOfOneColumnPerHour) {
  Rng rng(5);
  ShiftLpBasis basis;
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n_sites = 1 + rng.uniform(3), hours = 1 + rng.uniform(9);
    const int slack = static_cast<int>(rng.uniform(4));
    std::vector<ShiftLpSite> sites(n_sites);
    for (ShiftLpSite& s : sites) {
      for (std::size_t h = 0; h < hours; ++h) {
        s.capacity.push_back(std::round(10 * rng.uniform_real()));
        s.cost_per_gpu_hour.push_back(std::round(100 * rng.uniform_real()) - 10);
      }
    }
    std::vector<ShiftLpWork> work;
    for (std::size_t home = 0; home < n_sites; ++home) {
      for (std::size_t h = 0; h < hours; ++h) {
        if (rng.uniform(3) == 0) continue;
        ShiftLpWork w{static_cast<int>(home),
                      static_cast<int>(h),
                      std::round(12 * rng.uniform_real()),
                      slack,
                      {}};
        for (std::size_t s = 0; s < n_sites; ++s) {
          w.move_cost_per_gpu_hour.push_back(s == home ? 0.0
                                             : rng.uniform(4) == 0
                                                 ? kInf
                                                 : std::round(20 * rng.uniform_real()));
        }
        work.push_back(w);
        // Latency-sensitive work beside it, in its own hour (the textbook form: no shift).
        if (trial % 2 == 1 && rng.uniform(2) == 0) {
          w.gpu_hours = std::round(6 * rng.uniform_real());
          w.max_shift_h = 0;
          w.immediate = true;
          work.push_back(w);
        }
      }
    }
    ShiftLpOptions options;
    options.unserved_penalty = 500;
    const auto r = solve_shift_lp(sites, work, options);
    ASSERT_TRUE(r.ok()) << r.error();
    const double penalty = options.unserved_penalty;
    EXPECT_NEAR(r.value().objective + penalty * r.value().unserved_gpu_hours,
                one_column_per_hour_optimum(sites, work, penalty), 1e-6)
        << "trial " << trial;
    std::vector<double> served(work.size(), 0.0);
    std::vector<std::vector<double>> used(n_sites, std::vector<double>(hours, 0.0));
    for (const ShiftLpFlow& f : r.value().flows) {
      const ShiftLpWork& w = work[f.work];
      EXPECT_GE(f.hour, w.hour);
      EXPECT_LE(f.hour, std::min<int>(static_cast<int>(hours) - 1, w.hour + w.max_shift_h));
      EXPECT_TRUE(std::isfinite(w.move_cost_per_gpu_hour[f.site]));
      served[f.work] += f.gpu_hours;
      used[f.site][f.hour] += f.gpu_hours;
    }
    double unserved = 0;
    for (std::size_t w = 0; w < work.size(); ++w) {
      EXPECT_LE(served[w], work[w].gpu_hours + 1e-6);
      unserved += work[w].gpu_hours - served[w];
    }
    EXPECT_NEAR(unserved, r.value().unserved_gpu_hours, 1e-6);
    for (std::size_t s = 0; s < n_sites; ++s) {
      for (std::size_t h = 0; h < hours; ++h) EXPECT_LE(used[s][h], sites[s].capacity[h] + 1e-6);
    }
    // The same LP from the last trial's basis (a different problem: a poor start, still the
    // optimum), then from its own.
    options.basis = &basis;
    for (int again = 0; again < 2; ++again) {
      const auto warm = solve_shift_lp(sites, work, options);
      ASSERT_TRUE(warm.ok()) << warm.error();
      EXPECT_NEAR(warm.value().objective + penalty * warm.value().unserved_gpu_hours,
                  r.value().objective + penalty * r.value().unserved_gpu_hours, 1e-6);
    }
  }
}

// An immediate piece takes its hour's capacity ahead of the queue: at one site of 1 GPU-hour
// per hour over two hours, best-effort work of 2 GPU-hours (slack 1 h) and LS work of 1 GPU-hour
// in hour 1 leave 1 GPU-hour of the best-effort work unserved, and hour 1 is priced at what
// one more GPU-hour there saves: the penalty, less the hour's cost (10).
TEST(ShiftLp, ImmediateWorkRunsInItsHourBesideTheQueue) {
  const std::vector<ShiftLpSite> sites = {{{1, 1}, {10, 10}}};
  ShiftLpWork be{0, 0, 2.0, 1, {0.0}};
  ShiftLpWork ls{0, 1, 1.0, 0, {0.0}};
  ls.immediate = true;
  ShiftLpOptions options;
  options.unserved_penalty = 100;
  auto r = solve_shift_lp(sites, {be, ls}, options);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().unserved_gpu_hours, 1.0, 1e-9);
  EXPECT_NEAR(r.value().objective, 20.0, 1e-9);
  EXPECT_NEAR(r.value().capacity_price[0][1], 90.0, 1e-9);
  double ls_in_hour_1 = 0;
  for (const ShiftLpFlow& f : r.value().flows) {
    if (f.work == 1) ls_in_hour_1 += f.hour == 1 ? f.gpu_hours : -1e9;
  }
  EXPECT_NEAR(ls_in_hour_1, 1.0, 1e-9);
  ls.max_shift_h = 1;  // an immediate piece may not shift
  EXPECT_FALSE(solve_shift_lp(sites, {be, ls}, options).ok());
}

TEST(ShiftLp, WindowsThatAreNotAgreeableAreAnError) {
  // w1 is available an hour later than w0 but due two hours earlier.
  const std::vector<ShiftLpSite> sites = {{{1, 1, 1, 1}, {1, 1, 1, 1}}};
  auto r = solve_shift_lp(sites, {{0, 0, 1.0, 3, {0.0}}, {0, 1, 1.0, 0, {0.0}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("agreeable"), std::string::npos) << r.error();
}

TEST(ShiftLp, BadInputIsAnError) {
  EXPECT_FALSE(solve_shift_lp({{{1, 1}, {1}}}, {}).ok());                    // lengths differ
  EXPECT_FALSE(solve_shift_lp({{{-1}, {1}}}, {}).ok());                      // negative capacity
  EXPECT_FALSE(solve_shift_lp({{{1}, {1}}}, {{0, 1, 1.0, 0, {0.0}}}).ok());  // hour outside
  EXPECT_FALSE(solve_shift_lp({{{1}, {1}}}, {{0, 0, 1.0, 0, {}}}).ok());     // move costs
  EXPECT_FALSE(solve_shift_lp({{{1}, {1}}}, {{0, 0, NAN, 0, {0.0}}}).ok());  // NaN work
}

using fixtures::StatedLoadView;

// Sites a (100 g/kWh), b (300) and c (500); be_max_fill 0.97, so a site is saturated from a
// load of 0.96. With a at 0.965 and b, c at 0.5, b takes the overflow: after the plan's 24
// hours (no slack, no work) a GPU-hour at a is priced (300 - 100) x 0.1 = 20 g, and at b and
// c nothing. A 1-GPU job over hours 20-30 of the plan pays 6 such hours: 120 g; two GPUs,
// 240 g. Below 0.96, with every site saturated, or before the same-hour forecaster knows a day
// of the series (the plan made at their first hour), nothing is priced; the oracle knows the
// week from the start.
TEST(CapacityPlan, SaturatedSitesArePricedAtTheMarginalSiteAfterTheHorizon) {
  Fleet fleet = fixtures::two_sites(100, 300);
  SiteSpec c = fleet.sites[1];
  c.name = "c";
  c.carbon = TimeSeries(fleet.start_s, 3600, {500.0});
  fleet.sites.push_back(c);
  constexpr int64_t kNow = 24 * 3600;  // a day after the series start
  const auto plan_at = [&](std::vector<double> load, int64_t now = 24 * 3600, bool oracle = false) {
    CapacityPlan plan(PlanOptions{});
    plan.refresh(StatedLoadView(fleet, std::move(load), now, oracle), 0);
    return plan;
  };
  const CapacityPlan plan = plan_at({0.965, 0.5, 0.5});
  ASSERT_TRUE(plan.solved());
  EXPECT_NEAR(plan.price_after_horizon(0), 20.0, 1e-9);
  EXPECT_EQ(plan.price_after_horizon(1), 0.0);
  EXPECT_EQ(plan.price_after_horizon(2), 0.0);
  EXPECT_NEAR(plan.price(0, kNow + 20 * 3600, kNow + 30 * 3600, 1.0), 120.0, 1e-9);
  EXPECT_NEAR(plan.price(0, kNow + 20 * 3600, kNow + 30 * 3600, 2.0), 240.0, 1e-9);
  EXPECT_EQ(plan.price(0, kNow, kNow + 24 * 3600, 1.0), 0.0);  // inside: the LP's prices
  EXPECT_EQ(plan.price(1, kNow + 20 * 3600, kNow + 30 * 3600, 1.0), 0.0);
  // b saturated too: c takes the overflow, (500 - 100) x 0.1 at a and (500 - 300) x 0.1 at b.
  const CapacityPlan both = plan_at({0.97, 0.96, 0.2});
  EXPECT_NEAR(both.price_after_horizon(0), 40.0, 1e-9);
  EXPECT_NEAR(both.price_after_horizon(1), 20.0, 1e-9);
  EXPECT_EQ(plan_at({0.955, 0.5, 0.5}).price_after_horizon(0), 0.0);
  EXPECT_EQ(plan_at({0.97, 0.97, 0.97}).price_after_horizon(0), 0.0);
  EXPECT_EQ(plan_at({0.965, 0.5, 0.5}, 23 * 3600).price_after_horizon(0), 0.0);
  EXPECT_NEAR(plan_at({0.965, 0.5, 0.5}, 23 * 3600, true).price_after_horizon(0), 20.0, 1e-9);
}

// Given capacity prices (the fleet bound's, --bound-prices) stand in for the plan's: a job
// pays each trace hour it covers at its own price. Prices of 10 g per GPU-hour at a in hour
// 24 and 30 g in hour 25: 2 GPUs over [24:30, 25:15) pay 10 x 2 x 0.5 + 30 x 2 x 0.25 = 25 g;
// past the table's hours, and at a site it has no row for, nothing; after a horizon, nothing.
TEST(CapacityPlan, GivenPricesReplaceThePlans) {
  const Fleet fleet = fixtures::two_sites(100, 300);
  PlanOptions options;
  std::vector<std::vector<double>> given(1, std::vector<double>(26, 0.0));
  given[0][24] = 10;
  given[0][25] = 30;
  options.agent.capacity_prices =
      std::make_shared<const std::vector<std::vector<double>>>(std::move(given));
  CapacityPlan plan(options);
  constexpr int64_t kHourS = 3600;
  plan.refresh(StatedLoadView(fleet, {0.965, 0.5}, 24 * kHourS, false), 0);
  EXPECT_NEAR(plan.price(0, 24 * kHourS + 1800, 25 * kHourS + 900, 2.0), 25.0, 1e-9);
  EXPECT_NEAR(plan.price(0, 25 * kHourS, 27 * kHourS, 1.0), 30.0, 1e-9);
  EXPECT_EQ(plan.price(1, 24 * kHourS, 26 * kHourS, 1.0), 0.0);
  EXPECT_EQ(plan.price_after_horizon(0), 0.0);  // the saturated site's price is the plan's
  EXPECT_EQ(plan.price_per_gpu_hour(0, 25 * kHourS + 60), 30.0);
  // Without them the plan's own: nothing in its hours (no work to plan), and a's hours after
  // its horizon at the marginal site's, (300 - 100) x 0.1 = 20 g (the test above).
  CapacityPlan own{PlanOptions{}};
  own.refresh(StatedLoadView(fleet, {0.965, 0.5}, 24 * kHourS, false), 0);
  EXPECT_EQ(own.price(0, 24 * kHourS + 1800, 25 * kHourS + 900, 2.0), 0.0);
  EXPECT_NEAR(own.price_after_horizon(0), 20.0, 1e-9);
}

// With plan_ls_work the LS work to come is planned, and prices the site-hours it takes. Sites
// a (100 g/kWh) and b (300), 2 GPUs each at a fill limit of 0.97 (1.94 GPUs), 0.1 kW per
// GPU-hour. On the past day three LS jobs of 1 GPU for an hour came to b every hour, with no
// data: the plan expects 3 GPU-hours of LS work at b in each coming hour, a takes 1.94 of them
// (10 g each against 30 at b), and a GPU-hour at a is worth 30 - 10 = 20 g to the rest. With
// the LS load reserved instead (here none: the view reserves nothing), no work is planned and
// nothing is priced.
TEST(CapacityPlan, PlannedLsWorkPricesTheSitesItWants) {
  const Fleet fleet = fixtures::two_sites(100, 300);
  const PodSpec pod = fixtures::job("ls", 1000, 1, 1000, 0, 3600, Qos::kLS);
  constexpr int64_t kDay = 24 * 3600;
  const StatedLoadView view(fleet, {0.0, 0.0}, kDay, /*oracle=*/true);
  for (const bool planned : {true, false}) {
    PlanOptions options;
    options.agent.plan_ls_work = planned;
    CapacityPlan plan(options);
    for (int64_t hour = 0; hour < 24; ++hour) {
      for (int k = 0; k < 3; ++k) {
        JobInfo job;
        job.pod = &pod;
        job.home_site = 1;
        job.latency_sensitive = true;
        job.submit_s = hour * 3600;
        job.duration_s = 3600;
        plan.observe(job, 2);
      }
    }
    plan.refresh(view, 0);
    ASSERT_TRUE(plan.solved());
    EXPECT_NEAR(plan.price_per_gpu_hour(0, kDay + 5 * 3600), planned ? 20.0 : 0.0, 1e-6);
    EXPECT_NEAR(plan.price_per_gpu_hour(1, kDay + 5 * 3600), 0.0, 1e-6);
    EXPECT_EQ(plan.planned_gpus(0, kDay + 5 * 3600), 0.0);  // best-effort work only
  }
}

}  // namespace
}  // namespace greensched::multi
