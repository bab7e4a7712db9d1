// Factories of the dispatch agents (one file each) and helpers they share.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "greensched/multi/agent.hpp"

namespace greensched::multi {

std::unique_ptr<DispatchAgent> make_local_agent();
std::unique_ptr<DispatchAgent> make_round_robin_agent();
std::unique_ptr<DispatchAgent> make_least_loaded_agent();
std::unique_ptr<DispatchAgent> make_lowest_carbon_now_agent();
std::unique_ptr<DispatchAgent> make_carbon_forecast_agent(const AgentOptions& options);
// green; with `plan`, green-plan: green steered by the capacity prices of a rolling plan
// (multi/capacity_plan.hpp).
std::unique_ptr<DispatchAgent> make_green_agent(const AgentOptions& options, bool plan = false);
// bound-schedule: each job where `schedule` (by JobInfo::index) starts it.
std::unique_ptr<DispatchAgent> make_bound_schedule_agent(
    std::shared_ptr<const std::vector<WholeJobStart>> schedule);

std::vector<int> all_sites(const FleetView& view);
// Start times to consider: `ready`, then every step boundary after it up to the latest start
// the job allows (submit + slack); only `ready` for LS jobs.
std::vector<int64_t> start_candidates(const JobInfo& job, int64_t ready, int64_t step_s);
// The same into `starts` (cleared first), keeping its storage: an agent calls it per site and
// job.
void start_candidates(const JobInfo& job, int64_t ready, int64_t step_s,
                      std::vector<int64_t>& starts);

}  // namespace greensched::multi
