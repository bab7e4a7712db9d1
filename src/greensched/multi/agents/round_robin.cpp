#include "greensched/multi/agents/agents.hpp"

#include <fmt/format.h>

namespace greensched::multi {
namespace {

// Sites in turn; an LS job skips sites it could not reach within its bound.
class RoundRobinAgent final : public DispatchAgent {
 public:
  std::string_view name() const override { return "round-robin"; }
  Dispatch decide(const JobInfo& job, const FleetView& view) override {
    const int n = static_cast<int>(view.fleet().sites.size());
    const std::vector<int> allowed =
        job.latency_sensitive ? ls_feasible_sites(view, job) : std::vector<int>{};
    for (int tries = 0; tries < n; ++tries) {
      const int site = next_++ % n;
      const bool ok = !job.latency_sensitive ||
                      std::find(allowed.begin(), allowed.end(), site) != allowed.end();
      if (ok && view.fits_ever(site, *job.pod)) {
        return Dispatch{site, view.now_s(),
                        fmt::format("turn of {}", view.fleet().sites[site].name)};
      }
    }
    return Dispatch{job.home_site, view.now_s(), "no other site can take it; stays home", {}};
  }

 private:
  uint64_t next_ = 0;
};

}  // namespace

std::unique_ptr<DispatchAgent> make_round_robin_agent() {
  return std::make_unique<RoundRobinAgent>();
}

}  // namespace greensched::multi
