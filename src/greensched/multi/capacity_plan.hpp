// The rolling-horizon plan of the green-plan agent: each hour it forecasts, per site and
// coming hour, the GPUs free for best-effort work (the site's fill limit less what is
// promised there and the LS reserve, FleetView::load_at and ls_reserve) and the best-effort
// work that will arrive at each home site (the same hour on past days, spread over time by
// the runs of past best-effort jobs), and solves the work-shifting LP (multi/shift_lp.hpp):
// which site runs how much of it in which hour, within its slack, at the least forecast
// carbon (or cost) including data movement. The LP's capacity prices (the duals of its
// capacity rows: what one more GPU-hour at a site and hour would save the rest of the work)
// steer each job: a job pays, beside its own carbon, the price of the site-hours it takes,
// so jobs track the plan. The plan also says, per site and hour, how many GPUs of
// best-effort work it expects to run there. With AgentOptions::plan_ls_work the LS work to come
// is planned too (forecast per home site the same way, run in its own hour at home or at a
// site its data reaches within the LS bound: immediate pieces of the LP) instead of reserved.
//
// Beyond the horizon the LP says nothing, yet a long job holds its GPUs for days that other
// work would use. There the plan prices each GPU-hour of a saturated site (its load within
// AgentOptions::plan_saturated_margin of be_max_fill) at what a GPU-hour costs at the cheapest
// site that is not saturated, less its own cost (at least 0), both as forecast over the week
// after the horizon: the capacity price of a transport problem in steady state, whose cheap
// sites are full and whose overflow runs at the marginal site. A long job then takes a clean
// saturated site only where it gains more there than the work it displaces would. No site is
// priced so before the forecaster knows a day of every site's series (Forecaster::knows_a_day):
// the forecast of that week would be one sample repeated (on the built-in fleet over 7 days,
// pricing from the first hour left green-plan 62 % of the bound's saving, against 70 % with a day's
// wait, mean over seeds 42-44 and slack 0, 4 and 12 h).
//
// With AgentOptions::capacity_prices set (the fleet bound's, `multi --bound-prices`) the plan
// still runs, for the reasons' planned GPUs, but every price is the given one, hour by hour,
// and nothing is priced after a horizon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/multi/agent.hpp"
#include "greensched/multi/shift_lp.hpp"

namespace greensched::multi {

struct PlanOptions {
  int horizon_h = 24;    // hours planned beyond the slack (at least 1)
  int history_days = 7;  // arrival forecast: the same hour on this many past days
  // The objective (price weight, carbon price) and fill limit (be_max_fill) of the agent.
  AgentOptions agent;
};

class CapacityPlan {
 public:
  explicit CapacityPlan(const PlanOptions& options) : options_(options) {}

  // A job submitted now, on a fleet of n_sites: its arrival and run shape join the
  // forecast's history.
  void observe(const JobInfo& job, int n_sites);
  // The history (what observe learned; the plan is derived from it and solved again), and
  // restoring it into a plan that has seen nothing: an error when it is not a state() of a
  // fleet of n_sites.
  nlohmann::json history() const;
  Status restore_history(const nlohmann::json& history, int n_sites);
  // Solves the plan again when the hour changed since the last solve (or never solved).
  void refresh(const FleetView& view, int64_t slack_s);
  // What taking `gpus` GPUs at `site` over [from_s, to_s) (trace seconds) costs the rest of
  // the planned work, in the objective's units (grams, or USD): the capacity prices of the
  // hours it overlaps inside the horizon, and the saturated price after it.
  double price(int site, int64_t from_s, int64_t to_s, double gpus) const;
  // Per GPU-hour at `site` after the horizon: its saturated price (0 unless it is saturated).
  double price_after_horizon(int site) const;
  // GPUs of best-effort work the plan runs at `site` in the hour holding trace time t (0
  // outside the horizon), and its price there per GPU-hour.
  double planned_gpus(int site, int64_t t) const;
  double price_per_gpu_hour(int site, int64_t t) const;
  bool solved() const { return solved_; }

 private:
  // What the plan has learned of one class of jobs (best-effort, or latency-sensitive): jobs
  // submitted per home site and trace hour (from the first hour seen), the mean GPUs a job
  // holds k hours after its submission hour, and GB of data per GPU-hour of their runs.
  struct ClassHistory {
    int64_t first_hour = -1;
    std::vector<std::vector<double>> arrivals;
    std::vector<double> kernel_sum;
    double jobs = 0, data_gb = 0, gpu_hours = 0;
    void observe(const JobInfo& job, int n_sites, std::size_t kernel_hours);
    nlohmann::json to_json() const;
    Status from_json(const nlohmann::json& h, int n_sites);
    // Expected arrivals (jobs) at `home` in trace hour `hour`, as known in trace hour
    // `now_hour` (only complete hours count), over `days` past days.
    double expected_arrivals(int home, int64_t hour, int64_t now_hour, int days) const;
    // Expected GPU-hours of its work at `home` in each of `hours` hours from now_hour: the
    // arrivals of each coming hour spread over the hours their runs take.
    std::vector<double> expected_work(int home, int64_t now_hour, int hours, int days) const;
  };
  // The objective's cost of one kWh at `site` over [from_s, to_s) as forecast now.
  double cost_per_kwh(const FleetView& view, int site, int64_t from_s, int64_t to_s) const;
  // The saturated prices after the horizon [now, horizon_end): after_price_.
  void price_saturated_sites(const FleetView& view, int64_t horizon_end);
  // Index into the plan's hours of trace time t, or -1 outside the horizon.
  int hour_index(int64_t t) const;
  // AgentOptions::capacity_prices at `site` in trace hour `hour` (0 outside the table).
  double given_price(int site, int64_t hour) const;

  PlanOptions options_;
  ClassHistory be_, ls_;  // best-effort and latency-sensitive jobs
  // The last plan: hour it starts at (trace seconds), prices and planned GPUs per site/hour.
  bool solved_ = false;
  int64_t plan_hour_s_ = 0;
  std::vector<std::vector<double>> price_, planned_;
  std::vector<double> after_price_;  // per site, per GPU-hour after the horizon
  ShiftLpBasis basis_;               // the last solve's, to start the next from
};

}  // namespace greensched::multi
