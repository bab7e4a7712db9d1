#include "greensched/multi/agents/agents.hpp"

#include <fmt/format.h>

namespace greensched::multi {
namespace {

// The site with the smallest share of its GPUs allocated or asked for by queued jobs.
class LeastLoadedAgent final : public DispatchAgent {
 public:
  std::string_view name() const override { return "least-loaded"; }
  Dispatch decide(const JobInfo& job, const FleetView& view) override {
    const std::vector<int> candidates =
        job.latency_sensitive ? ls_feasible_sites(view, job) : all_sites(view);
    int best = job.home_site;
    double best_load = view.load(best);
    for (int site : candidates) {
      if (!view.fits_ever(site, *job.pod)) continue;
      const double load = view.load(site);
      if (load < best_load) {
        best = site;
        best_load = load;
      }
    }
    return Dispatch{best, view.now_s(),
                    fmt::format("least loaded: {} at {:.1f} % of its GPUs",
                                view.fleet().sites[best].name, 100.0 * best_load)};
  }
};

}  // namespace

std::unique_ptr<DispatchAgent> make_least_loaded_agent() {
  return std::make_unique<LeastLoadedAgent>();
}

}  // namespace greensched::multi
