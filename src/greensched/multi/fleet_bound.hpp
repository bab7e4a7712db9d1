// The fleet bound: the least carbon (or cost) with which any dispatcher could run a fleet's
// jobs, as a linear program (CLP) over the same jobs, home sites and signals as `multi`.
//
// Each job is cut into hourly slices (its GPUs x the part of each trace hour its run covers,
// started at submission). A job's whole hours go to one site within each day (a block); its
// partial first and last hours, and every slice of a job shorter than two hours, may go to
// any site on their own, as an LP allows. Work runs at its home site or, paying its transfer
// energy in proportion, at another site (an LS job only where its data arrives within its
// start bound), in its own hour (LS) or up to ceil(slack / 1 h) hours later (BE). Time is
// resolved to the hour: the minutes a transfer takes do not shift a slice. Each site runs at
// most `site_fill` x its GPUs in any hour: what its own scheduler reaches when saturated
// (measure_site_capacity, a replay), not an assumed figure. A GPU-hour at a site costs what
// the same replay draws per allocated GPU-hour (`site_gpu_kw`) x PUE x the grid's intensity
// (or price) in that hour; past the measured window nothing is counted, as in the simulator. A
// job without GPUs draws its CPU floor (multi::cpu_only_floor_watts: its share of a socket's
// full power on the least-drawing node it fits), takes no GPU capacity, and CPU is not
// modelled: each such job runs at its cheapest site and start alone, and the same replay's
// draw per GPU-hour leaves out what its jobs without GPUs draw at their floor. So
// every schedule the simulator can run within those capacities is a solution, and the optimum
// bounds the agents; `local` is the same accounting with every slice at home in its own hour, and
// the bound's saving is the difference of the two.
//
// Slices alike in home, hour, class, allowed sites and data per GPU-hour (rounded down to a
// power of two, below 1 MB per GPU-hour to none, so moves never cost more than they would) are
// one piece of work, as are blocks alike in home, hours, class, allowed sites and data; a
// moved piece pays its transfer at the destination's intensity in its first hour. The LP is a
// transport problem: pieces go to sites (paying the move), then each site's BE work chooses
// its hour (paying the grid). CLP solves it with presolve and the dual simplex.
//
// That LP lets a long job change site each day, a partial hour go its own way and BE work
// pause within its slack, none of which the simulator does. The reported carbon (and cost) is
// therefore raised to the whole-job dual bound (multi/whole_job_bound.hpp): each job at one
// site, started within its bound (LS) or slack (BE), to the second, and run without a pause,
// searched from the LP's capacity prices. Both are lower bounds on any schedule within the
// capacities; the higher is the tighter. The energy, transfer and GPU-hour figures stay those
// of the LP's schedule.
//
// A bound with both sides. The dual (`carbon`, share_of_bound_pct) is the lower side. The
// upper side is a schedule of the same fluid model (`feasible`, share_of_feasible_pct): the
// dual's first-come schedule, repaired and improved by local search at the true costs
// (multi/whole_job_schedule.hpp), each job at one site without a pause within the same
// capacities and costs, every job placed or its GPU-hours reported unserved. The model's
// optimum lies between the two; their gap (feasible_gap_pct) says how far the dual may be from
// it. A third figure tightens the model (`tight`, share_of_tight_bound_pct): CPU rows per site
// and hour (every job's cores, jobs without GPUs competing for them), GPU capacity per node
// type (each job only on the types it fits) and a fill at which each site still starts jobs
// within the LS bound (calibrate_site_fill). What is proven and what calibrated:
// - proven: the capacity of the physical GPUs and CPU cores, the node types a job fits, the
//   costs of the accounting above;
// - calibrated: the fill, of either bound, from a replay of the site's own scheduler (the
//   plain one saturated, the tight one where its p99 queueing delay stays within the bound).
// So the tight dual bounds the calibrated model, not the simulator at large; where its fill is
// at most the plain one it is raised to the plain dual (its schedules are the plain model's).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/whole_job_bound.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::multi {

struct FleetBoundOptions {
  int64_t ls_bound_s = 600;        // an LS job may move only where its data arrives in time
  int64_t be_slack_s = 12 * 3600;  // a BE slice may run up to ceil(slack / 1 h) hours late
  double data_gb_per_job = -1;     // < 0: the pod's memory request in GiB (as run_fleet)
  std::vector<double> site_fill;   // per site, share of its GPUs usable in an hour (0..1]
  // Per site, the IT kW one allocated GPU draws (measure_site_capacity); empty, or 0 for a
  // site: its GPUs' full-power IT watts (every CPU core busy too, which no site reaches).
  std::vector<double> site_gpu_kw;
  power::PowerModel power_model = power::PowerModel::builtin();
  // The measured window, trace seconds: slices in its hours are scheduled, the rest left out
  // of both schedules; a BE slice shifted past its end, as one deferred past the window in
  // the simulator, is not measured.
  int64_t measure_from_s = 0;
  int64_t measure_to_s = std::numeric_limits<int64_t>::max();
  // Also read a schedule off the carbon bound's capacity prices (FleetBoundResult::schedule).
  bool schedule = false;
  // The feasible side (FleetBoundResult::feasible): the dual's first-come schedule improved by
  // local search.
  bool feasible = true;
  // The tightened dual (FleetBoundResult::tight), with per site the share of each node type's
  // GPUs usable in an hour (calibrate_site_fill); empty: site_fill.
  bool tight = true;
  std::vector<double> tight_site_fill;
};

// The feasible side: a schedule of the same fluid model (each job at one site without a pause,
// within its bound or slack and the same capacities, the same costs; jobs without GPUs at their
// cheapest start, as CPU is not modelled), so its carbon is at least the model's optimum.
struct FleetBoundFeasible {
  double carbon_kg = 0;  // after local search (the jobs placed, and every job without GPUs)
  double unserved_gpu_hours = 0;  // of jobs no start had room for even after repair
  std::size_t unplaced_jobs = 0;
  // The dual's first-come schedule it started from (WholeJobSchedule::kWithinCapacity).
  double first_come_carbon_kg = 0;
  double first_come_unserved_gpu_hours = 0;
  std::size_t first_come_unplaced_jobs = 0;
  int passes = 0;
  std::size_t moves = 0;
  double wall_seconds = 0;
  // Per site, the GPU-hours it runs there in the measured window, and as a share of the site's
  // GPUs over the window's hours (%): where the schedule puts the work, to hold beside a run's
  // timeline (gpu_alloc_pct) and FleetBoundSide's.
  std::vector<double> site_gpu_hours;
  std::vector<double> site_alloc_pct;
};

// The tightened dual: the whole-job dual with CPU rows per site and hour (every job's cores,
// those without GPUs competing for them too) and GPU capacity per node type (each job only on
// types it fits), at a fill calibrated where jobs still start within the LS bound. A lower
// bound for that calibrated model (proven: its physical GPUs and cores; calibrated: the fill).
struct FleetBoundTight {
  double carbon_kg = 0;
  std::vector<double> site_fill;  // the fill it ran with
  // Raised to the plain dual's carbon: valid where each site's fill is at most the plain one's.
  bool raised = false;
  std::size_t unfit_jobs = 0;  // jobs that fit no node type (left free of the type rows)
  int iterations = 0;
  double wall_seconds = 0;
};

// One schedule's totals inside the measured window.
struct FleetBoundSide {
  double carbon_kg = 0;
  double cost_usd = 0;  // 0 without prices
  double energy_kwh = 0;
  double transfer_kwh = 0;
  double gpu_hours_moved = 0;
  double gpu_hours_shifted = 0;  // run in a later hour than their own
  // Per site, the GPU-hours run there in the measured window, and as a share of its GPUs over
  // the window's hours (%): how full the schedule keeps each site, to hold beside a run's
  // timeline (gpu_alloc_pct).
  std::vector<double> site_gpu_hours;
  std::vector<double> site_alloc_pct;
  // The LP with day blocks (jobs may change site each day): its optimum. carbon_kg and
  // cost_usd are at least these, raised by the whole-job bound; the energy, transfer and
  // GPU-hour figures above are the LP's schedule.
  double day_lp_carbon_kg = 0;
  double day_lp_cost_usd = 0;
  bool day_blocks = false;  // true: the whole-job bound did not run (work left unserved)
  // The whole-job bound's capacity prices, per site and trace hour (hour h is [3600 h,
  // 3600 (h + 1)) trace seconds), in the objective's units per GPU-hour: what one more
  // GPU-hour there is worth to the rest of the jobs, all of them known. Empty where
  // day_blocks. `multi --bound-prices` runs green-plan on them.
  std::vector<std::vector<double>> capacity_prices;
};

struct FleetBoundResult {
  double target_load_pct = 0;  // labels the caller sets: the workload's load and the slack
  double be_slack_h = 0;
  std::vector<double> site_fill;        // the capacity shares it ran with
  std::vector<double> site_gpu_kw;      // the IT kW per GPU-hour it charged each site
  std::vector<std::string> site_names;  // the fleet's, in its order
  FleetBoundSide local;                 // every slice at home in its own hour
  FleetBoundSide carbon;                // the least-carbon schedule
  std::optional<FleetBoundSide> cost;   // the least-cost schedule, when every site has prices
  double gpu_hours = 0;
  double unserved_gpu_hours = 0;  // work no capacity within its bounds could take
  double cpu_only_saving_kg = 0;  // of the saving, what jobs without GPUs save
  std::size_t pieces = 0;         // rows of the LP's work
  // With FleetBoundOptions::schedule, per pod: where and when the carbon bound's prices start
  // it, first come first placed within the capacities (WholeJobSchedule::kWithinCapacity; a
  // job without GPUs at its cheapest start alone): a schedule the fluid fleet can run, which
  // `multi --bound-schedule` runs in the simulator. Site -1: a pod outside the measured window,
  // or one no start had room for; every job with GPUs where the day-block LP's bound stood (work
  // unserved: no prices to read it off).
  std::vector<WholeJobStart> schedule;
  std::optional<FleetBoundFeasible> feasible;  // where asked and the dual ran
  std::optional<FleetBoundTight> tight;        // where asked and the dual ran
  double dual_wall_seconds = 0;                // the LP and the dual alone
  double wall_seconds = 0;

  // Relative to local, in %: negative is a saving.
  double carbon_vs_local_pct() const;
  // Carbon the best schedule saves against local, kg.
  double saving_kg() const { return local.carbon_kg - carbon.carbon_kg; }
  // What the LP with day blocks alone saves, kg (at least saving_kg()).
  double day_lp_saving_kg() const { return local.carbon_kg - carbon.day_lp_carbon_kg; }
  double cost_vs_local_pct() const;
  // What the feasible schedule saves, and the tight dual (NaN without them), kg.
  double feasible_saving_kg() const;
  double first_come_saving_kg() const;
  double tight_saving_kg() const;
  // How much less the feasible schedule saves than the dual, % of the dual's saving.
  double feasible_gap_pct() const;
};

// The share (%) of the bound's carbon saving (kg) that a run saving `run_saving_kg` against
// `local` reaches (NaN where the bound saves nothing). In kilograms, not percent: the bound
// counts the energy of the work, while a run's carbon also holds what no dispatch changes
// (idle nodes awake, CPU-only pods), which would shrink its percentages and not the bound's.
double share_of_bound_pct(double run_saving_kg, const FleetBoundResult& bound);
// The same against the feasible schedule's saving and the tight dual's (NaN without them).
double share_of_feasible_pct(double run_saving_kg, const FleetBoundResult& bound);
double share_of_tight_bound_pct(double run_saving_kg, const FleetBoundResult& bound);

// `home`: each job's home site (fleet_home_sites gives run_fleet's). Errors: homes or a
// site_fill list of the wrong size or range, pods without times, power figures that do not
// resolve, an LP that CLP cannot solve.
Result<FleetBoundResult> fleet_bound(const Fleet& fleet, std::span<const PodSpec> pods,
                                     std::span<const int> home, const FleetBoundOptions& options);

// A site's own scheduler, saturated: the share of its GPUs it allocates (0..1], and the IT kW
// it draws per allocated GPU (its nodes' idle and CPU power included, shared over the GPUs;
// the floor of its jobs without GPUs left out, as the bound charges them that).
struct SiteCapacity {
  double fill = 1;
  double gpu_kw = 0;
};

// Per site, its SiteCapacity: a replay of the site (with the backfill queue a fleet site runs)
// at 110 % offered load drawn from `templates`, `days` measured days after one warm-up day. No
// dispatcher packs a site fuller for long (the agents' fill limit, be_max_fill, is 0.97), and
// packed full its nodes draw the least per GPU. Sites with the same nodes, policy and PUE are
// measured once.
Result<std::vector<SiteCapacity>> measure_site_capacity(const Fleet& fleet,
                                                        std::span<const PodSpec> templates,
                                                        uint32_t shape_count,
                                                        const power::PowerModel& power_model,
                                                        uint64_t seed, double days = 2);

}  // namespace greensched::multi
