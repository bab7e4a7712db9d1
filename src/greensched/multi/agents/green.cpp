#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <span>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "greensched/multi/agents/agents.hpp"
#include "greensched/multi/batch_assignment.hpp"
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
// price. green-plan counts a move's transfer plan_move_weight times (AgentOptions) in the
// choice. With on-site energy the price and carbon are the site's net marginal view
// (FleetView::expected_signal). The power is the job's expected draw over its run
// (FleetView::marginal_watts: at least its share of the node's full power). An LS job
// considers the sites it can reach within its bound that have room now; a BE job each start
// at which the site's expected load, with it and the LS reserve, stays within be_max_fill
// (has_be_room: deferred jobs count only over their planned hours). It says why, with the
// numbers that decided it.
class GreenAgent final : public DispatchAgent {
 public:
  GreenAgent(const AgentOptions& options, bool plan)
      : options_(options), move_weight_(plan ? options.plan_move_weight : 1.0) {
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

  void observe(const JobInfo& job, int n_sites) override {
    if (!plan_) return;
    if (!job.again) plan_->observe(job, n_sites);
    if (!job.latency_sensitive) be_slack_s_ = std::max(be_slack_s_, job.slack_s);
  }
  nlohmann::json state() const override {
    if (!plan_) return nullptr;
    return {{"be_slack_s", be_slack_s_}, {"history", plan_->history()}};
  }
  Status restore(const nlohmann::json& state, int n_sites) override {
    if (!plan_ || state.is_null()) return DispatchAgent::restore(state, n_sites);
    if (!state.is_object() || !state.contains("be_slack_s") ||
        !state["be_slack_s"].is_number_integer() || !state.contains("history")) {
      return Error{"expected {\"be_slack_s\": seconds, \"history\": ...}"};
    }
    auto plan = std::make_unique<CapacityPlan>(PlanOptions{.agent = options_});
    if (Status s = plan->restore_history(state["history"], n_sites); !s.ok()) return s;
    plan_ = std::move(plan);
    be_slack_s_ = state["be_slack_s"].get<int64_t>();
    return Status::Ok();
  }

  Dispatch decide(const JobInfo& job, const FleetView& view) override {
    if (plan_) {
      observe(job, static_cast<int>(view.fleet().sites.size()));
      plan_->refresh(view, be_slack_s_);
    }
    batch_active_ = false;
    if (plan_ && !job.again) prepare_batch(view);
    return decide_alone(job, view);
  }

 private:
  // green-plan with plan_batch: where at least kMinBatch jobs are submitted in one instant (the
  // jobs running when a trace starts), they are assigned together once
  // (multi/batch_assignment.hpp), and
  // each job of the instant then pays, beside the plan's price, the assignment's capacity
  // prices of the site-hours it takes: the jobs are steered toward the assignment, each still
  // placed where its own site has room for it then. Following the assignment's own reading
  // instead (each job where it put it, where the site still had room) did worse: on October
  // 2023, seed 42, 70 % load, no slack, it reached 67 % of the bound's saving against 77 %
  // without a batch, and its prices 79 %.
  static constexpr std::size_t kMinBatch = 8;
  void prepare_batch(const FleetView& view) {
    const std::span<const JobInfo> batch = view.submitted_now();
    if (!options_.plan_batch || batch.size() < kMinBatch) return;
    batch_active_ = true;
    if (batch_at_ == view.now_s()) return;
    batch_at_ = view.now_s();
    batch_plan_ =
        assign_batch(view, batch, BatchOptions{.agent = options_, .move_weight = move_weight_});
  }
  // The batch's price of `gpus` GPUs at `site` over [from_s, to_s) (0 outside a batch).
  double batch_price(int site, int64_t from_s, int64_t to_s, double gpus) const {
    return batch_active_ ? batch_plan_.cost(site, from_s, to_s, gpus) : 0.0;
  }

 public:
  Dispatch decide_alone(const JobInfo& job, const FleetView& view) {
    const double gpus = static_cast<double>(job.pod->total_gpu_milli()) / 1000.0;
    const int64_t now = view.now_s();
    const double hours = std::max<double>(static_cast<double>(job.duration_s), 1.0) / 3600.0;
    const int n_sites = static_cast<int>(view.fleet().sites.size());
    // Pass 1, before any placement is previewed: per site, whether it is an option at all,
    // its starts, and where the caller keeps no alternatives, a lower bound of its options'
    // costs (the run at its share of the least-drawing node type, no fragmentation).
    const bool prune = !view.wants_alternatives() && bounds_hold();
    if (sites_.size() < static_cast<std::size_t>(n_sites)) sites_.resize(n_sites);
    std::size_t n_options = 0;
    for (int site = 0; site < n_sites; ++site) {
      SiteOptions& so = sites_[static_cast<std::size_t>(site)];
      so.usable = false;
      so.bounded = false;
      so.options.clear();
      if (!view.fits_ever(site, *job.pod)) continue;
      if (job.latency_sensitive && !has_room(view, site, *job.pod, 0.0)) continue;
      so.ready = now + static_cast<int64_t>(transfer_seconds(view, job, site));
      // The starts at which the site has room for it; none: the site is no option (and its
      // placement need not be previewed).
      start_candidates(job, so.ready, options_.step_s, so.starts);
      if (!job.latency_sensitive) {
        std::erase_if(so.starts, [&](int64_t start) {
          return !has_be_room(view, site, *job.pod, start, options_.be_max_fill);
        });
        if (so.starts.empty()) continue;
      }
      so.usable = true;
      n_options += so.starts.size();
      const SiteSpec& spec = view.fleet().sites[site];
      so.move_kwh = site == job.home_site ? 0.0 : job.data_gb * spec.network.energy_kwh_per_gb;
      so.move_g = so.move_kwh * spec.carbon.at(view.epoch_s(now));
      // Without on-site energy the expected signal does not depend on the job's power.
      const double kw_floor = view.run_watts(site, *job.pod) / 1000.0;
      if (!prune || spec.energy || !std::isfinite(kw_floor)) continue;
      so.bounded = true;
      so.lower = std::numeric_limits<double>::infinity();
      so.signals.clear();
      so.plan_prices.clear();
      for (int64_t start : so.starts) {
        const int64_t end = start + std::max<int64_t>(job.duration_s, 1);
        const SignalView signal = view.expected_signal(site, start, end, 0.0);
        const double plan_price =
            plan_ ? plan_->price(site, start, end, gpus) + batch_price(site, start, end, gpus)
                  : 0.0;
        so.signals.push_back(signal);
        so.plan_prices.push_back(plan_price);
        if (!(signal.carbon_g_per_kwh >= 0) || !(signal.price_per_kwh >= 0)) {
          so.lower = -std::numeric_limits<double>::infinity();
          continue;
        }
        double run_g = 0;
        so.lower = std::min(so.lower,
                            option_cost(spec, view, now, kw_floor, 0.0, hours, signal, so.move_kwh,
                                        so.move_g, plan_price, start > so.ready, run_g));
      }
    }
    // Pass 2: the options of each site. Pruning, the home site first and then the others by
    // their bound, leaving out a site whose bound exceeds the cheapest option found by more
    // than the choice's tolerance can carry over all options: it could not change the choice
    // (nor the home figures, which are always computed).
    const auto evaluate = [&](int site) {
      SiteOptions& so = sites_[static_cast<std::size_t>(site)];
      if (job.latency_sensitive && site != job.home_site) {
        // A node that must wake starts waking when the job is dispatched, during the
        // transfer; an empty one is held. Only a site that can keep a node for it is an
        // option (ls_feasible_sites).
        const double wait = std::max(
            transfer_seconds(view, job, site),
            view.fits_now(site, *job.pod) ? 0.0 : static_cast<double>(view.wake_delay_s()));
        if (wait > static_cast<double>(view.ls_bound_s()) || !view.can_hold(site, *job.pod)) {
          return;
        }
      }
      const SiteSpec& spec = view.fleet().sites[site];
      // Starting now: what it adds now (or at least its share); later: its share, whatever
      // the site holds now.
      const double kw_now = view.marginal_watts(site, *job.pod) / 1000.0;  // facility kW
      const double kw_later = view.run_watts(site, *job.pod) / 1000.0;
      const double frag_gpu_hours =
          std::max(0.0, view.fragmentation_delta(site, *job.pod)) / 1000.0 * hours;
      for (std::size_t i = 0; i < so.starts.size(); ++i) {
        const int64_t start = so.starts[i];
        // The same figure for every start where the site can take it now, so that a later
        // start is not cheaper merely because it is judged on the share alone.
        const double kw = std::isfinite(kw_now) ? kw_now : start == so.ready ? kw_now : kw_later;
        if (!std::isfinite(kw)) continue;  // full now, or no node can host it
        const int64_t end = start + std::max<int64_t>(job.duration_s, 1);
        const SignalView signal =
            so.bounded ? so.signals[i] : view.expected_signal(site, start, end, kw);
        // green-plan: what the site-hours it takes are worth to the rest of the planned work.
        const double plan_price =
            so.bounded ? so.plan_prices[i]
            : plan_    ? plan_->price(site, start, end, gpus) + batch_price(site, start, end, gpus)
                       : 0.0;
        double run_g = 0;
        const double cost =
            option_cost(spec, view, now, kw, frag_gpu_hours, hours, signal, so.move_kwh, so.move_g,
                        plan_price, start > so.ready, run_g);
        so.options.push_back(
            Option{site, start, cost, run_g + so.move_g, signal.carbon_g_per_kwh, kw, plan_price});
      }
    };
    if (prune) {
      order_.clear();
      for (int site = 0; site < n_sites; ++site) {
        if (sites_[static_cast<std::size_t>(site)].usable) order_.push_back(site);
      }
      const auto bound = [&](int site) {
        const SiteOptions& so = sites_[static_cast<std::size_t>(site)];
        return site == job.home_site ? -std::numeric_limits<double>::infinity()
               : so.bounded          ? so.lower
                                     : -std::numeric_limits<double>::infinity();
      };
      std::stable_sort(order_.begin(), order_.end(),
                       [&](int a, int b) { return bound(a) < bound(b); });
      double cheapest = std::numeric_limits<double>::infinity();
      for (int site : order_) {
        const double margin =
            static_cast<double>(n_options + 3) * (kTolerance + 1e-9 * std::abs(cheapest));
        if (std::isfinite(cheapest) && bound(site) >= cheapest + margin) continue;
        evaluate(site);
        for (const Option& o : sites_[static_cast<std::size_t>(site)].options) {
          cheapest = std::min(cheapest, o.cost);
        }
      }
    } else {
      for (int site = 0; site < n_sites; ++site) {
        if (sites_[static_cast<std::size_t>(site)].usable) evaluate(site);
      }
    }
    // The choice, in site order: the cheapest, the earlier start and the earlier site among
    // equals.
    Option best, home, now_best;
    std::vector<Alternative> per_site;
    for (int site = 0; site < n_sites; ++site) {
      Option site_best;
      for (const Option& o : sites_[static_cast<std::size_t>(site)].options) {
        const bool at_once = o.start == sites_[static_cast<std::size_t>(site)].ready;
        if (site == job.home_site && at_once) home = o;
        if (at_once && (now_best.site < 0 || o.cost < now_best.cost - kTolerance)) now_best = o;
        if (site_best.site < 0 || o.cost < site_best.cost - kTolerance) site_best = o;
        if (best.site < 0 || o.cost < best.cost - kTolerance) best = o;
      }
      if (site_best.site >= 0 && !prune) per_site.push_back(alternative(site_best));
    }
    if (best.site < 0) return Dispatch{job.home_site, now, "no site can take it; stays home", {}};
    const std::string& name = view.fleet().sites[best.site].name;
    // The reason, one per dispatch: compiled format strings, whole numbers as integers.
    fmt::memory_buffer reason;  // on the stack; the reason is copied out once, at its size
    auto out = std::back_inserter(reason);
    if (home.site >= 0 && best.site == home.site && best.start == home.start) {
      fmt::format_to(
          out,
          FMT_COMPILE("stays at {} now: {} g expected ({:.2f} kW at {} gCO2/kWh) is the lowest"),
          name, whole(best.carbon), best.kw, whole(best.ci));
      if (options_.objective != AgentOptions::Objective::kCarbon) {
        fmt::format_to(out, FMT_COMPILE("; {:.4f} USD"), best.cost);
      }
    } else {
      fmt::format_to(out, FMT_COMPILE("{} {}: {} g expected ({:.2f} kW at {} gCO2/kWh) vs "),
                     best.site == job.home_site ? "stays at" : "moves to", name, whole(best.carbon),
                     best.kw, whole(best.ci));
      if (home.site >= 0) {
        fmt::format_to(out, FMT_COMPILE("{} g ({} gCO2/kWh)"), whole(home.carbon), whole(home.ci));
      } else {
        fmt::format_to(out, FMT_COMPILE("no room"));
      }
      fmt::format_to(out, FMT_COMPILE(" at home now"));
      if (options_.objective != AgentOptions::Objective::kCarbon) {
        fmt::format_to(out, FMT_COMPILE("; {:.4f} USD"), best.cost);
      }
      // A start later than the site's earliest (now, or once the data has moved) is a deferral.
      if (best.start > sites_[static_cast<std::size_t>(best.site)].ready) {
        fmt::format_to(out, FMT_COMPILE("; deferred {} s"), best.start - now);
      }
    }
    if (plan_ && plan_->solved()) {
      fmt::format_to(
          out, FMT_COMPILE("; plan: {} GPUs of best-effort work at {} then, capacity price {:.1f}"),
          whole(plan_->planned_gpus(best.site, best.start)), name,
          plan_->price_per_gpu_hour(best.site, best.start));
      const char* unit =
          options_.objective == AgentOptions::Objective::kCarbon ? " g/GPU-h" : " USD/GPU-h";
      fmt::format_to(out, FMT_COMPILE("{}"), unit);
      if (const double after = plan_->price_after_horizon(best.site); after > 0) {
        fmt::format_to(out, FMT_COMPILE(" ({} is saturated: {:.1f}{} after the plan's horizon)"),
                       name, after, unit);
      }
    }
    Dispatch d{best.site, best.start, fmt::to_string(reason), std::move(per_site)};
    if (!prune) {
      if (home.site >= 0) d.home_now = alternative(home);
      if (now_best.site >= 0) d.now_best = alternative(now_best);
    }
    return d;
  }

 private:
  // A figure of a reason to the nearest whole number (halves away from zero), written as an
  // integer: cheaper than a double's digits, and a run writes a reason per job.
  static long long whole(double x) {
    return std::isfinite(x) && std::abs(x) < 1e15 ? std::llround(x) : 0;
  }
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

  // One option's cost in the objective's units: the run at `kw` facility kW, the move, the
  // fragmentation, the plan's capacity price, and the margin of a later start. run_g: the
  // run's grams. Non-decreasing in kw and frag_gpu_hours where bounds_hold() and the signal
  // is not negative.
  double option_cost(const SiteSpec& spec, const FleetView& view, int64_t now, double kw,
                     double frag_gpu_hours, double hours, const SignalView& signal, double move_kwh,
                     double move_g, double plan_price, bool later, double& run_g) const {
    run_g = kw * hours * signal.carbon_g_per_kwh;
    double cost = 0;
    if (options_.objective == AgentOptions::Objective::kCarbon) {
      cost = run_g + move_weight_ * move_g + options_.frag_weight_g * frag_gpu_hours;
      if (spec.price) cost += options_.price_weight_g * kw * hours * signal.price_per_kwh;
    } else {
      cost = usd(kw * hours * signal.price_per_kwh, move_weight_ * move_kwh, spec, view, now,
                 frag_gpu_hours, run_g + move_weight_ * move_g);
    }
    cost += plan_price;
    if (later) cost += options_.defer_margin * std::abs(cost);
    return cost;
  }
  // Whether the weights keep option_cost non-decreasing in the power and the fragmentation.
  bool bounds_hold() const {
    return move_weight_ >= 0 && options_.frag_weight_g >= 0 && options_.price_weight_g > 0 &&
           options_.carbon_price_usd_per_t >= 0 && options_.defer_margin >= 0 &&
           options_.defer_margin <= 1;
  }

  static constexpr double kTolerance = 1e-6;  // a cost must be this much lower to win
  struct Option {
    int site = -1;
    int64_t start = 0;
    double cost = 0, carbon = 0, ci = 0, kw = 0, plan_price = 0;
  };
  static Alternative alternative(const Option& o) {
    return Alternative{.site = o.site,
                       .start_s = o.start,
                       .forecast_ci = o.ci,
                       .expected_g = o.carbon,
                       .cost = o.cost,
                       .kw = o.kw};
  }
  // Per site, scratch of decide: its starts, what they cost before the placement is known,
  // and its options.
  struct SiteOptions {
    bool usable = false, bounded = false;
    int64_t ready = 0;
    double move_kwh = 0, move_g = 0, lower = 0;
    std::vector<int64_t> starts;
    std::vector<SignalView> signals;
    std::vector<double> plan_prices;
    std::vector<Option> options;
  };
  std::vector<SiteOptions> sites_;
  std::vector<int> order_;

  AgentOptions options_;
  double move_weight_ = 1.0;            // what a move's transfer counts in the choice
  std::unique_ptr<CapacityPlan> plan_;  // green-plan
  // prepare_batch: the instant its batch was assigned, and the assignment.
  int64_t batch_at_ = std::numeric_limits<int64_t>::min();
  BatchPlan batch_plan_;
  bool batch_active_ = false;  // the job decided now belongs to a batch
  int64_t be_slack_s_ = 0;     // the longest BE slack seen: the plan's shift window
};

}  // namespace

std::unique_ptr<DispatchAgent> make_green_agent(const AgentOptions& options, bool plan) {
  return std::make_unique<GreenAgent>(options, plan);
}

}  // namespace greensched::multi
