// The tightened bound's site fill: per site, the share of its GPUs its own scheduler keeps
// allocated while jobs still start within the LS bound, where the plain bound's fill
// (measure_site_capacity) is what it reaches saturated, with a queue that jobs wait in.
//
// Each site is replayed (its nodes, policy and the backfill queue a fleet site runs) at offered
// loads from 110 % down in steps of 10 %; the first load whose p99 queueing delay stays within
// the bound is kept (where none does, the lowest, 30 %, and SiteFill says its delay), and the
// fill is the highest hourly mean GPU allocation of its measured window: what the site was
// seen to hold while starting jobs in time. The p99, not the mean:
// the bound starts every job within its bound, and a mean within it still lets a tenth of the
// jobs wait far longer; the p99 allows a few stragglers (a replay's largest jobs) and no more.
// The highest hour, not the mean allocation: the fill caps every hour, and a site holding that
// much in its busiest hour on time shows it can. A fill so found is calibrated, not proven: a
// bound built on it bounds the calibrated model, not every simulator run.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::multi {

struct SiteFill {
  double fill = 1;            // share of the site's GPUs, (0, 1]
  double load_pct = 0;        // the offered load it was found at (0: a site without GPUs)
  double p99_delay_s = 0;     // that replay's p99 queueing delay
  double mean_alloc_pct = 0;  // and its mean GPU allocation
};

// The highest hourly mean of `allocated` (a step function: value[i] from time[i] to the next
// time) over [from, from + hours x 3600), as a share of `gpus`.
double busiest_hour_share(std::span<const double> time_s, std::span<const double> allocated,
                          double from_s, int hours, double gpus);

// Per site. Sites with the same nodes, policy and PUE are calibrated once. Errors: a replay
// or power figures that fail.
Result<std::vector<SiteFill>> calibrate_site_fill(
    const Fleet& fleet, std::span<const PodSpec> templates, uint32_t shape_count,
    const power::PowerModel& power_model, uint64_t seed, int64_t delay_bound_s, double days = 2);

}  // namespace greensched::multi
