#include "greensched/multi/agents/agents.hpp"

#include <optional>

#include <fmt/format.h>

namespace greensched::multi {
namespace {

// Places each job at the site and start time whose forecast carbon intensity over the job's
// run is lowest. BE jobs may start at any step within their slack; LS jobs start now at a
// site they can reach within their bound. Only carbon intensity counts, not how much power
// the job adds or what it does to the cluster; a site counts only while it has room for the
// job (has_room: BE jobs leave AgentOptions::be_headroom of its GPUs free).
class CarbonForecastAgent final : public DispatchAgent {
 public:
  explicit CarbonForecastAgent(const AgentOptions& options) : options_(options) {}
  std::string_view name() const override { return "carbon-forecast"; }

  Dispatch decide(const JobInfo& job, const FleetView& view) override {
    const std::vector<int> sites =
        job.latency_sensitive ? ls_feasible_sites(view, job) : all_sites(view);
    const int64_t now = view.now_s();
    Dispatch best{job.home_site, now, ""};
    double best_ci = -1;
    double home_now_ci = -1;
    std::vector<Alternative> per_site;
    std::optional<Alternative> home_now, now_best;
    for (int site : sites) {
      if (!view.fits_ever(site, *job.pod)) continue;
      if (!has_room(view, site, *job.pod, job.latency_sensitive ? 0.0 : options_.be_headroom)) {
        continue;
      }
      Alternative site_best{.site = site, .start_s = 0, .forecast_ci = -1};
      const int64_t ready = now + static_cast<int64_t>(transfer_seconds(view, job, site));
      for (int64_t start : start_candidates(job, ready, options_.step_s)) {
        const double mean =
            view.expected_signal(site, start, start + std::max<int64_t>(job.duration_s, 1), 0.0)
                .carbon_g_per_kwh;
        if (site == job.home_site && start == ready) {
          home_now_ci = mean;
          home_now = Alternative{.site = site, .start_s = start, .forecast_ci = mean, .cost = mean};
        }
        if (start == ready && (!now_best || mean < now_best->cost - 1e-9)) {
          now_best = Alternative{.site = site, .start_s = start, .forecast_ci = mean, .cost = mean};
        }
        if (site_best.forecast_ci < 0 || mean < site_best.forecast_ci - 1e-9) {
          site_best =
              Alternative{.site = site, .start_s = start, .forecast_ci = mean, .cost = mean};
        }
        if (best_ci < 0 || mean < best_ci - 1e-9) {
          best_ci = mean;
          best = Dispatch{site, start, "", {}};
        }
      }
      per_site.push_back(site_best);
    }
    if (best_ci < 0) {
      best.reason = "no site has room for it now; stays home";
      return best;
    }
    best.reason = fmt::format(
        "lowest forecast carbon: {} from +{} s at {:.0f} gCO2/kWh (home now {:.0f})",
        view.fleet().sites[best.site].name, best.not_before_s - now, best_ci, home_now_ci);
    if (view.wants_alternatives()) {
      best.alternatives = std::move(per_site);
      best.home_now = home_now;
      best.now_best = now_best;
    }
    return best;
  }

 private:
  AgentOptions options_;
};

}  // namespace

std::unique_ptr<DispatchAgent> make_carbon_forecast_agent(const AgentOptions& options) {
  return std::make_unique<CarbonForecastAgent>(options);
}

}  // namespace greensched::multi
