// The work-shifting LP (multi/shift_lp.hpp) on hand-solved cases, and the rolling plan of
// green-plan (multi/capacity_plan.hpp) on a hand-made fleet.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "greensched/multi/fleet_sim.hpp"
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

TEST(ShiftLp, BadInputIsAnError) {
  EXPECT_FALSE(solve_shift_lp({{{1, 1}, {1}}}, {}).ok());                    // lengths differ
  EXPECT_FALSE(solve_shift_lp({{{-1}, {1}}}, {}).ok());                      // negative capacity
  EXPECT_FALSE(solve_shift_lp({{{1}, {1}}}, {{0, 1, 1.0, 0, {0.0}}}).ok());  // hour outside
  EXPECT_FALSE(solve_shift_lp({{{1}, {1}}}, {{0, 0, 1.0, 0, {}}}).ok());     // move costs
  EXPECT_FALSE(solve_shift_lp({{{1}, {1}}}, {{0, 0, NAN, 0, {0.0}}}).ok());  // NaN work
}

}  // namespace
}  // namespace greensched::multi
