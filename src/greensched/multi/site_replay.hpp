// One fleet site replayed alone at an offered load: how the fleet bound measures a site (its
// saturated fill and draw per GPU, measure_site_capacity; the fill at which it still starts
// jobs in time, calibrate_site_fill). The site's nodes, policy and PUE, the backfill queue a
// fleet site runs, and a load drawn from the pod templates over `days` measured days after one
// warm-up day.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/load_generator.hpp"

namespace greensched::multi {

// The key under which sites alike in nodes, policy and PUE are measured once.
std::string site_signature(const SiteSpec& site);

struct SiteReplay {
  trace::LoadWindow window;   // the measured window
  std::vector<PodSpec> pods;  // the pods offered
  sim::ReplayResult result;
};

// Errors name the site: a load that cannot be drawn, a replay that fails.
Result<SiteReplay> replay_site(const Fleet& fleet, const SiteSpec& site,
                               std::span<const PodSpec> templates, uint32_t shape_count,
                               const frag::TargetWorkload& target,
                               const std::vector<power::NodePower>& figures, uint64_t seed,
                               double load_pct, double days, int64_t timeline_step_s = 0);

}  // namespace greensched::multi
