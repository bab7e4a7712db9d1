#include "greensched/multi/agents/agents.hpp"

#include <fmt/format.h>

namespace greensched::multi {
namespace {

// The site whose grid is cleanest right now; no deferral. LS jobs only go where they can
// start within their bound.
class LowestCarbonNowAgent final : public DispatchAgent {
 public:
  std::string_view name() const override { return "lowest-carbon-now"; }
  Dispatch decide(const JobInfo& job, const FleetView& view) override {
    const std::vector<int> candidates =
        job.latency_sensitive ? ls_feasible_sites(view, job) : all_sites(view);
    const int64_t now = view.epoch_s(view.now_s());
    int best = job.home_site;
    double best_ci = view.fleet().sites[best].carbon.at(now);
    for (int site : candidates) {
      if (!view.fits_ever(site, *job.pod)) continue;
      const double ci = view.fleet().sites[site].carbon.at(now);
      if (ci < best_ci) {
        best = site;
        best_ci = ci;
      }
    }
    return Dispatch{best, view.now_s(),
                    fmt::format("cleanest grid now: {} at {:.0f} gCO2/kWh",
                                view.fleet().sites[best].name, best_ci)};
  }
};

}  // namespace

std::unique_ptr<DispatchAgent> make_lowest_carbon_now_agent() {
  return std::make_unique<LowestCarbonNowAgent>();
}

}  // namespace greensched::multi
