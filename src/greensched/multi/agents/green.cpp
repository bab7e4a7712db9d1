#include <cmath>

#include <fmt/format.h>

#include "greensched/multi/agents/agents.hpp"
#include "greensched/multi/capacity_plan.hpp"

namespace greensched::multi {
namespace {

// Our coordinated agent. For every site the job may use and every start within its slack it
// estimates, in grams of CO2-equivalent:
//   carbon of the power the job adds there (the local policy's placement, waking a node if
//   needed, times PUE) over its run at the forecast intensity,
//   + carbon of moving its data there,
//   + price_weight x the electricity cost (when the site has a price series),
//   + frag_weight x GPU-hours of fragmentation the placement adds,
// and picks the cheapest, preferring the earlier start and the home site among equals; a later
// start pays defer_margin on top (a deferral must save more than the forecast's error). On the
// cost objectives (green-cost, green-cost-carbon) the same terms are counted in USD instead:
// the electricity of the run and of the move at the site's price, fragmentation at
// frag_weight_g / price_weight_g USD per GPU-hour, and (cost+carbon) the grams at the carbon
// price. With on-site energy the price and carbon are the site's net marginal view
// (FleetView::expected_signal). The power is the job's expected draw over its run
// (FleetView::marginal_watts: at least its share of the node's full power). An LS job
// considers the sites it can reach within its bound that have room now; a BE job each start
// at which the site's expected load, with it and the LS reserve, stays within be_max_fill
// (has_be_room: deferred jobs count only over their planned hours). It says why, with the
// numbers that decided it.
class GreenAgent final : public DispatchAgent {
 public:
  GreenAgent(const AgentOptions& options, bool plan) : options_(options) {
    if (plan) plan_ = std::make_unique<CapacityPlan>(PlanOptions{.agent = options});
  }
  std::string_view name() const override {
    if (plan_) return "green-plan";
    switch (options_.objective) {
      case AgentOptions::Objective::kCost:
        return "green-cost";
      case AgentOptions::Objective::kCostCarbon:
        return "green-cost-carbon";
      case AgentOptions::Objective::kCarbon:
        break;
    }
    return "green";
  }

  Dispatch decide(const JobInfo& job, const FleetView& view) override {
    if (plan_) {
      if (!job.again) plan_->observe(job, view);
      if (!job.latency_sensitive) be_slack_s_ = std::max(be_slack_s_, job.slack_s);
      plan_->refresh(view, be_slack_s_);
    }
    const double gpus = static_cast<double>(job.pod->total_gpu_milli()) / 1000.0;
    const std::vector<int> sites =
        job.latency_sensitive ? ls_feasible_sites(view, job) : all_sites(view);
    const int64_t now = view.now_s();
    const double hours = std::max<double>(static_cast<double>(job.duration_s), 1.0) / 3600.0;
    struct Option {
      int site = -1;
      int64_t start = 0;
      double cost = 0, carbon = 0, ci = 0, kw = 0, plan_price = 0;
    };
    Option best, home;
    std::vector<Alternative> per_site;
    for (int site : sites) {
      if (!view.fits_ever(site, *job.pod)) continue;
      if (job.latency_sensitive && !has_room(view, site, *job.pod, 0.0)) continue;
      const int64_t ready = now + static_cast<int64_t>(transfer_seconds(view, job, site));
      // The starts at which the site has room for it; none: the site is no option (and its
      // placement need not be previewed).
      std::vector<int64_t> starts = start_candidates(job, ready, options_.step_s);
      if (!job.latency_sensitive) {
        std::erase_if(starts, [&](int64_t start) {
          return !has_be_room(view, site, *job.pod, start, options_.be_max_fill);
        });
        if (starts.empty()) continue;
      }
      const SiteSpec& spec = view.fleet().sites[site];
      // Starting now: what it adds now (or at least its share); later: its share, whatever
      // the site holds now.
      const double kw_now = view.marginal_watts(site, *job.pod) / 1000.0;  // facility kW
      const double kw_later = view.run_watts(site, *job.pod) / 1000.0;
      const double frag_gpu_hours =
          std::max(0.0, view.fragmentation_delta(site, *job.pod)) / 1000.0 * hours;
      const double move_kwh =
          site == job.home_site ? 0.0 : job.data_gb * spec.network.energy_kwh_per_gb;
      const double move_g = move_kwh * spec.carbon.at(view.epoch_s(now));
      Option site_best;
      for (int64_t start : starts) {
        // The same figure for every start where the site can take it now, so that a later
        // start is not cheaper merely because it is judged on the share alone.
        const double kw = std::isfinite(kw_now) ? kw_now : start == ready ? kw_now : kw_later;
        if (!std::isfinite(kw)) continue;  // full now, or no node can host it
        const int64_t from = view.epoch_s(start);
        const int64_t to = from + std::max<int64_t>(job.duration_s, 1);
        const SignalView signal = view.expected_signal(site, start, start + (to - from), kw);
        const double ci = signal.carbon_g_per_kwh;
        const double run_g = kw * hours * ci;
        double cost = 0;
        if (options_.objective == AgentOptions::Objective::kCarbon) {
          cost = run_g + move_g + options_.frag_weight_g * frag_gpu_hours;
          if (spec.price) cost += options_.price_weight_g * kw * hours * signal.price_per_kwh;
        } else {
          cost = usd(kw * hours * signal.price_per_kwh, move_kwh, spec, view, now, frag_gpu_hours,
                     run_g + move_g);
        }
        // green-plan: what the site-hours it takes are worth to the rest of the planned work.
        const double plan_price =
            plan_ ? plan_->price(site, start, start + std::max<int64_t>(job.duration_s, 1), gpus)
                  : 0.0;
        cost += plan_price;
        if (start > ready) cost += options_.defer_margin * std::abs(cost);
        const Option o{site, start, cost, run_g + move_g, ci, kw, plan_price};
        if (site == job.home_site && start == ready) home = o;
        if (site_best.site < 0 || cost < site_best.cost - 1e-6) site_best = o;
        if (best.site < 0 || cost < best.cost - 1e-6) best = o;
      }
      if (site_best.site >= 0) {
        per_site.push_back(Alternative{site, site_best.start, site_best.ci, site_best.cost});
      }
    }
    if (best.site < 0) return Dispatch{job.home_site, now, "no site can take it; stays home", {}};
    const std::string& name = view.fleet().sites[best.site].name;
    std::string reason;
    if (home.site >= 0 && best.site == home.site && best.start == home.start) {
      reason = fmt::format(
          "stays at {} now: {:.0f} g expected ({:.2f} kW at {:.0f} gCO2/kWh) is the lowest", name,
          best.carbon, best.kw, best.ci);
      if (options_.objective != AgentOptions::Objective::kCarbon) {
        reason += fmt::format("; {:.4f} USD", best.cost);
      }
    } else {
      reason = fmt::format(
          "{} {}: {:.0f} g expected ({:.2f} kW at {:.0f} gCO2/kWh) vs {} at home now",
          best.site == job.home_site ? "stays at" : "moves to", name, best.carbon, best.kw, best.ci,
          home.site >= 0 ? fmt::format("{:.0f} g ({:.0f} gCO2/kWh)", home.carbon, home.ci)
                         : std::string("no room"));
      if (options_.objective != AgentOptions::Objective::kCarbon) {
        reason += fmt::format("; {:.4f} USD", best.cost);
      }
      if (best.start > now) reason += fmt::format("; deferred {} s", best.start - now);
    }
    if (plan_ && plan_->solved()) {
      reason +=
          fmt::format("; plan: {:.0f} GPUs of best-effort work at {} then, capacity price {:.1f}",
                      plan_->planned_gpus(best.site, best.start), name,
                      plan_->price_per_gpu_hour(best.site, best.start));
      reason += options_.objective == AgentOptions::Objective::kCarbon ? " g/GPU-h" : " USD/GPU-h";
    }
    return Dispatch{best.site, best.start, reason, std::move(per_site)};
  }

 private:
  // The cost objectives in USD: the run's electricity, the move's at the price now, the
  // fragmentation term, and (cost+carbon) the grams at the carbon price.
  double usd(double run_usd, double move_kwh, const SiteSpec& spec, const FleetView& view,
             int64_t now, double frag_gpu_hours, double grams) const {
    const double price_now = spec.price ? spec.price->at(view.epoch_s(now)) : 0.0;
    double cost = run_usd + move_kwh * price_now +
                  options_.frag_weight_g / options_.price_weight_g * frag_gpu_hours;
    if (options_.objective == AgentOptions::Objective::kCostCarbon) {
      cost += options_.carbon_price_usd_per_t * grams / 1e6;
    }
    return cost;
  }

  AgentOptions options_;
  std::unique_ptr<CapacityPlan> plan_;  // green-plan
  int64_t be_slack_s_ = 0;              // the longest BE slack seen: the plan's shift window
};

}  // namespace

std::unique_ptr<DispatchAgent> make_green_agent(const AgentOptions& options, bool plan) {
  return std::make_unique<GreenAgent>(options, plan);
}

}  // namespace greensched::multi
