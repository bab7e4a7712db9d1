// The batch assignment of the jobs submitted in one instant (multi/batch_assignment.hpp) on
// hand-solved cases, and the fleet simulator handing an agent the jobs of its instant.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "greensched/multi/agent.hpp"
#include "greensched/multi/batch_assignment.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/trace/workload.hpp"
#include "multi_fixtures.hpp"

namespace greensched::multi {
namespace {

JobInfo batch_job(const PodSpec& pod, std::size_t index, int home, int64_t hours, double gb) {
  JobInfo j;
  j.index = index;
  j.pod = &pod;
  j.home_site = home;
  j.duration_s = hours * 3600;
  j.data_gb = gb;
  return j;
}

// Each view below: sites of 2 GPUs at constant carbon, 0.1 kW per GPU-hour, nothing taken, no
// LS reserve, the oracle forecaster (constant series: every forecast is exact), at trace time 0.
//
// Sites a (100 g/kWh) and b (300), 2 GPUs each, fill limit 0.97: a takes one 1-GPU job at a
// time. Both jobs are at b, 1 GPU, 10 GB of data (0.06 kWh at 100 g: 6 g to move to a): a
// 10-hour job saves 10 x 0.1 x 200 - 6 = 194 g at a, a 1-hour job 14 g, and the work that
// replaces it at b once it ends (1 GPU over hours 1-10) 174 g. The long job takes a: 194 g
// beats 14 + 174 = 188 g, though the short one comes first in the batch. Alone, each would take
// a, and the first would win.
TEST(BatchAssignment, TheLongJobTakesTheCleanRoomBeforeAShortOneAndItsSuccessor) {
  Fleet fleet = fixtures::two_sites(100, 300);
  for (SiteSpec& s : fleet.sites) s.network = NetworkCost{10.0, 0.006, 0.0};
  const fixtures::StatedLoadView view(fleet, {0.0, 0.0}, 0, /*oracle=*/true);
  const PodSpec short_pod = fixtures::job("short", 1000, 1, 1000, 0, 3600);
  const PodSpec long_pod = fixtures::job("long", 1000, 1, 1000, 0, 36000);
  const std::vector<JobInfo> jobs = {batch_job(short_pod, 0, 1, 1, 10.0),
                                     batch_job(long_pod, 1, 1, 10, 10.0)};
  const BatchPlan plan =
      assign_batch(view, jobs, BatchOptions{.agent = {}, .move_weight = 1, .iterations = 300});
  ASSERT_EQ(plan.choices.size(), 2u);
  EXPECT_EQ(plan.choices[0].site, 1);
  EXPECT_EQ(plan.choices[1].site, 0);
  EXPECT_EQ(plan.choices[0].start_s, 0);
  EXPECT_EQ(plan.choices[1].start_s, 0);
  // a's first hour is worth what the short job would save there (the dual's optimum prices it
  // at 14 g or more; the subgradient steps reach it from below), and a's ten hours at most what
  // the long job saves there.
  const double hour0 = plan.cost(0, 0, 3600, 1.0);
  EXPECT_NEAR(hour0, 14.0, 0.5);
  EXPECT_LT(plan.cost(0, 0, 36000, 1.0), 194.0 + 1e-9);
  EXPECT_EQ(plan.cost(1, 0, 36000, 1.0), 0.0);  // b has room to spare
}

// A lone job with room everywhere goes to the cleanest site and nothing is priced; a job
// without GPUs is left to the agent; fewer jobs than sites of room price nothing.
TEST(BatchAssignment, RoomToSpareIsFreeAndJobsWithoutGpusAreLeftToTheAgent) {
  const fixtures::StatedLoadView view(fixtures::two_sites(100, 300), {0.0, 0.0}, 0,
                                      /*oracle=*/true);
  const PodSpec gpu = fixtures::job("g", 1000, 1, 1000, 0, 7200);
  const PodSpec cpu = fixtures::job("c", 4000, 0, 0, 0, 7200);
  const std::vector<JobInfo> jobs = {batch_job(gpu, 0, 1, 2, 0.0), batch_job(cpu, 1, 1, 2, 0.0)};
  const BatchPlan plan = assign_batch(view, jobs, {});
  EXPECT_EQ(plan.choices[0].site, 0);
  EXPECT_EQ(plan.choices[1].site, -1);
  EXPECT_EQ(plan.cost(0, 0, 7200, 1.0), 0.0);
  // Prices are read hour by hour: 2 GPUs over [0:30, 1:15) at 10 and 30 g per GPU-hour.
  BatchPlan given;
  given.price = {{10.0, 30.0}};
  EXPECT_NEAR(given.cost(0, 1800, 4500, 2.0), 10 * 2 * 0.5 + 30 * 2 * 0.25, 1e-9);
  EXPECT_EQ(given.cost(1, 0, 3600, 1.0), 0.0);  // no row for it
}

}  // namespace
}  // namespace greensched::multi
