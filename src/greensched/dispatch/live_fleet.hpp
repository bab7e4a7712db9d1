// The agents' view (multi::FleetView) of live clusters, so that the dispatch service decides
// with the very agent code of `greensched multi`. Each site is a worker cluster: its nodes and
// bound pods as last read (serve::ClusterState, the extender's state, with the site's own
// policy), its carbon and price series from the fleet file (or a forecast source), and what
// the service has dispatched there that the cluster does not show yet (commitments: a
// dispatched workload counts over its planned run until its pods appear or its time passes).
//
// Time is the signal's epoch seconds (trace time = epoch time); on a compressed clock the
// service maps it to wall time. A site whose state could not be read is no option: it fits
// nothing and reads as full. Live clusters do not power nodes down, so nothing waits to wake.
// A view is made for one decision and reads the states it is given; it is not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "greensched/core/rng.hpp"
#include "greensched/multi/agent.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/serve/cluster_state.hpp"

namespace greensched::dispatch {

// GPU milli a site has been promised over [from_s, to_s) (signal epoch seconds).
struct Commitment {
  int site = 0;
  int64_t from_s = 0;
  int64_t to_s = 0;
  int64_t gpu_milli = 0;
};

struct LiveOptions {
  int64_t ls_bound_s = 600;    // an LS workload must start within this many seconds
  int64_t wake_delay_s = 300;  // (nothing sleeps live; agents read it for LS feasibility)
};

// Site `site`'s node tie order for a run seeded `seed`, drawn as the fleet simulator draws its
// sites' (multi/fleet_jobs.hpp site_seed), so that a live site breaks ties as its simulated
// self does.
std::vector<uint32_t> site_tie_rank(std::size_t nodes, uint64_t seed, std::size_t site);

class LiveFleetView final : public multi::FleetView {
 public:
  // `states[i]` is site i's state, or nullptr when it could not be read; `pods[i]` the
  // decided pod as site i's state interns it (its shape id is the site's own); `tie_ranks[i]`
  // its nodes' tie order (as the simulator draws it: site_tie_rank).
  LiveFleetView(const multi::Fleet& fleet, std::vector<serve::ClusterState*> states,
                std::vector<PodSpec> pods, std::vector<std::vector<uint32_t>> tie_ranks,
                int64_t now_s, const multi::Forecaster& forecaster,
                const std::vector<Commitment>& committed, LiveOptions options, uint64_t seed);

  const multi::Fleet& fleet() const override { return fleet_; }
  int64_t now_s() const override { return now_s_; }
  int64_t epoch_s(int64_t trace_s) const override { return trace_s; }
  const multi::Forecaster& forecaster() const override { return forecaster_; }
  int64_t ls_bound_s() const override { return options_.ls_bound_s; }
  int64_t wake_delay_s() const override { return options_.wake_delay_s; }

  double load(int site) const override { return load_at(site, now_s_); }
  double load_at(int site, int64_t t) const override;
  int64_t gpu_capacity_milli(int site) const override;
  bool fits_now(int site, const PodSpec& pod) const override;
  bool fits_ever(int site, const PodSpec& pod) const override;
  bool can_hold(int site, const PodSpec& pod) const override { return fits_now(site, pod); }
  double marginal_watts(int site, const PodSpec& pod) const override;
  double run_watts(int site, const PodSpec& pod) const override;
  double gpu_kw(int site) const override;
  double fragmentation_delta(int site, const PodSpec& pod) const override;

 private:
  struct Preview {
    bool done = false;
    double watts = 0;
    double frag_milli = 0;
  };
  const Preview& preview(int site) const;

  const multi::Fleet& fleet_;
  std::vector<serve::ClusterState*> states_;
  std::vector<PodSpec> pods_;
  std::vector<std::vector<uint32_t>> tie_ranks_;
  int64_t now_s_;
  const multi::Forecaster& forecaster_;
  const std::vector<Commitment>& committed_;
  LiveOptions options_;
  mutable Rng rng_;
  mutable std::vector<Preview> previews_;  // per site, for the one pod decided
};

}  // namespace greensched::dispatch
