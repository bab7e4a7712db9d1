// The jobs submitted in one instant, assigned together: on a trace that starts with its
// running jobs, about two-thirds of a window's GPU-hours arrive at its first instant, and one
// by one each would take the cleanest site with room, whatever the jobs after it need. Here
// they are one whole-job assignment (multi/whole_job_bound.hpp): each job at one site, from
// now (LS) or within its slack (BE), run without a pause; each site's GPUs up to the agent's
// fill limit less what is taken there now and the LS reserve; each GPU-hour costing the
// site's facility kW per GPU (FleetView::gpu_kw) at the objective's forecast cost per kWh,
// each move its data's transfer energy (weighted as the agent weighs moves). The Lagrangian
// prices of the site-hours are searched by subgradient steps, and the assignment read off
// them, first come first placed within the capacities. What it knows is what the agent knows
// at that instant: the jobs in hand with the durations the agent sees, the grid's forecast
// from the public series up to now, and no arrival history (none exists yet).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "greensched/multi/agent.hpp"

namespace greensched::multi {

// A job's place in the assignment: site (-1: none had room) and start (trace seconds).
struct BatchChoice {
  int site = -1;
  int64_t start_s = 0;
};

struct BatchOptions {
  AgentOptions agent;      // objective, fill limit (be_max_fill)
  double move_weight = 1;  // a move's transfer counts this many times its cost
  int iterations = 100;    // subgradient steps
};

// The objective's cost (grams, or USD) of one kWh at `site` over [from_s, to_s) (trace
// seconds), as the view forecasts it now: what green-plan's plan charges.
double objective_per_kwh(const FleetView& view, const AgentOptions& options, int site,
                         int64_t from_s, int64_t to_s);

struct BatchPlan {
  // One choice per job of the batch, in its order. Jobs without GPUs take no GPU capacity and
  // are left to the agent (site -1).
  std::vector<BatchChoice> choices;
  // The assignment's capacity prices per site and hour from base_s (trace seconds, on the
  // hour), in the objective's units per GPU-hour: what one more GPU-hour there is worth to
  // the rest of the batch and the work that replaces it.
  int64_t base_s = 0;
  std::vector<std::vector<double>> price;
  // What taking `gpus` GPUs at `site` over [from_s, to_s) costs at those prices.
  double cost(int site, int64_t from_s, int64_t to_s, double gpus) const;
};

// The assignment of `jobs`, all submitted now.
BatchPlan assign_batch(const FleetView& view, std::span<const JobInfo> jobs,
                       const BatchOptions& options);

}  // namespace greensched::multi
