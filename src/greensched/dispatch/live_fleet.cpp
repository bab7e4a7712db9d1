#include "greensched/dispatch/live_fleet.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/placement_preview.hpp"

namespace greensched::dispatch {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

std::vector<uint32_t> site_tie_rank(std::size_t nodes, uint64_t seed, std::size_t site) {
  Rng rng(multi::site_seed(seed, site));
  return policy::random_tie_rank(nodes, rng);
}

LiveFleetView::LiveFleetView(const multi::Fleet& fleet, std::vector<serve::ClusterState*> states,
                             std::vector<PodSpec> pods,
                             std::vector<std::vector<uint32_t>> tie_ranks, int64_t now_s,
                             const multi::Forecaster& forecaster,
                             const std::vector<Commitment>& committed, LiveOptions options,
                             uint64_t seed)
    : fleet_(fleet),
      states_(std::move(states)),
      pods_(std::move(pods)),
      tie_ranks_(std::move(tie_ranks)),
      now_s_(now_s),
      forecaster_(forecaster),
      committed_(committed),
      options_(options),
      rng_(seed),
      previews_(states_.size()) {}

int64_t LiveFleetView::gpu_capacity_milli(int site) const {
  const serve::ClusterState* s = states_[static_cast<std::size_t>(site)];
  return s == nullptr ? 0 : s->cluster().total_gpu_milli();
}

double LiveFleetView::load_at(int site, int64_t t) const {
  const serve::ClusterState* s = states_[static_cast<std::size_t>(site)];
  if (s == nullptr || s->cluster().total_gpu_milli() <= 0) return 1.0;
  // What runs now is taken to run on (live pods have no known end), plus what was promised.
  int64_t milli = s->cluster().allocated_gpu_milli();
  t = std::max(t, now_s_);
  for (const Commitment& c : committed_) {
    if (c.site == site && c.from_s <= t && t < c.to_s) milli += c.gpu_milli;
  }
  return static_cast<double>(milli) / static_cast<double>(s->cluster().total_gpu_milli());
}

bool LiveFleetView::fits_now(int site, const PodSpec&) const {
  const serve::ClusterState* s = states_[static_cast<std::size_t>(site)];
  return s != nullptr && multi::fits_now(s->cluster(), pods_[static_cast<std::size_t>(site)]);
}

bool LiveFleetView::fits_ever(int site, const PodSpec&) const {
  const serve::ClusterState* s = states_[static_cast<std::size_t>(site)];
  return s != nullptr && multi::fits_ever(s->cluster(), pods_[static_cast<std::size_t>(site)]);
}

const LiveFleetView::Preview& LiveFleetView::preview(int site) const {
  Preview& out = previews_[static_cast<std::size_t>(site)];
  if (out.done) return out;
  out.done = true;
  out.watts = kInf;
  serve::ClusterState* s = states_[static_cast<std::size_t>(site)];
  if (s == nullptr) return out;
  const PodSpec& pod = pods_[static_cast<std::size_t>(site)];
  // The site's own policy places it, ties broken in the site's tie order.
  std::vector<uint32_t> ranks = tie_ranks_[static_cast<std::size_t>(site)];
  if (ranks.size() != s->cluster().size()) {
    ranks.resize(s->cluster().size());
    for (std::size_t n = 0; n < ranks.size(); ++n) ranks[n] = static_cast<uint32_t>(n);
  }
  policy::Scheduler scheduler(s->policy(), std::move(ranks));
  const policy::Decision d = scheduler.schedule(s->cluster(), pod, rng_);
  if (d.node < 0) return out;
  const multi::PlacementCost cost =
      multi::placement_cost(s->cluster(), s->node_figures(), s->frag_model(), pod, d.node, d.gpus,
                            false, fleet_.sites[static_cast<std::size_t>(site)].pue_at(now_s_));
  out.watts = cost.watts;
  out.frag_milli = cost.frag_milli;
  return out;
}

double LiveFleetView::marginal_watts(int site, const PodSpec&) const {
  return preview(site).watts;
}

double LiveFleetView::fragmentation_delta(int site, const PodSpec&) const {
  return preview(site).frag_milli;
}

double LiveFleetView::run_watts(int site, const PodSpec&) const {
  const serve::ClusterState* s = states_[static_cast<std::size_t>(site)];
  if (s == nullptr) return kInf;
  return multi::least_floor_watts(s->cluster(), s->node_figures(),
                                  pods_[static_cast<std::size_t>(site)]) *
         fleet_.sites[static_cast<std::size_t>(site)].pue_at(now_s_);
}

double LiveFleetView::gpu_kw(int site) const {
  const serve::ClusterState* s = states_[static_cast<std::size_t>(site)];
  if (s == nullptr) return 1.0;
  return multi::full_gpu_it_watts(s->cluster().specs(), s->node_figures()) / 1000.0 *
         fleet_.sites[static_cast<std::size_t>(site)].pue_at(now_s_);
}

}  // namespace greensched::dispatch
