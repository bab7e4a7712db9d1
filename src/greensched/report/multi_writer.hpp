// Writers for multi-cluster runs: summary.csv (one row per agent), timeline.csv (per site and
// fleet over time, per agent), decisions.csv (where and when each job went, and why), and a
// readable table comparing the agents against the first one.
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "greensched/multi/fleet.hpp"
#include "greensched/multi/fleet_bound.hpp"
#include "greensched/multi/fleet_sim.hpp"

namespace greensched::report {

void write_multi_summary_csv(std::ostream& out, std::span<const multi::MultiResult> results);
void write_multi_timeline_csv(std::ostream& out, const multi::Fleet& fleet,
                              std::span<const multi::MultiResult> results);
void write_decisions_csv(std::ostream& out, const multi::Fleet& fleet,
                         std::span<const multi::MultiResult> results);
std::string multi_summary_table(std::span<const multi::MultiResult> results);

// The fleet bound beside the runs (multi --bound): a line per load and slack with the bound's
// saving against its own local schedule, then each run's saving against `local` at the same
// load and slack and the share of the bound's saving it reaches.
std::string fleet_bound_table(std::span<const multi::MultiResult> results,
                              std::span<const multi::FleetBoundResult> bounds);
// bound.csv: one row per run with its bound's figures and its share of the bound's saving.
void write_fleet_bound_csv(std::ostream& out, std::span<const multi::MultiResult> results,
                           std::span<const multi::FleetBoundResult> bounds);
// bound_sites.csv: per bound and site, the GPU-hours every job at home runs there and those of
// the bound's schedule, and both as the site's allocation over the measured window.
void write_fleet_bound_sites_csv(std::ostream& out,
                                 std::span<const multi::FleetBoundResult> bounds);
// A run's carbon relative to `local` at the same load and slack, in % (NaN without one).
double carbon_vs_local_pct(const multi::MultiResult& run,
                           std::span<const multi::MultiResult> results);
// The bound of a run's load and slack (nullptr without one).
const multi::FleetBoundResult* bound_of(const multi::MultiResult& run,
                                        std::span<const multi::FleetBoundResult> bounds);
// The bound of a load (%, the workload's stated one) and slack (hours).
const multi::FleetBoundResult* bound_of(double target_load_pct, double be_slack_h,
                                        std::span<const multi::FleetBoundResult> bounds);
// A run beside its bound: the bound's saving (kg) against the carbon of the `local` run at the
// same load and slack, in %, and the share of it the run's own saving reaches (NaN without a
// local run or a saving); the same share of the feasible schedule's saving and of the tight
// dual's (NaN without them).
struct BoundFigures {
  double bound_vs_local_pct = 0;
  double share_pct = 0;
  double feasible_share_pct = 0;
  double tight_share_pct = 0;
};
BoundFigures bound_figures(const multi::MultiResult& run,
                           std::span<const multi::MultiResult> results,
                           const multi::FleetBoundResult& bound);

// A CSV field, quoted when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

}  // namespace greensched::report
