#include "greensched/multi/batch_assignment.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "greensched/multi/whole_job_bound.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kBatchHour = 3600;
// The assignment looks this far ahead at most: past it a job's hours cost nothing more.
constexpr int64_t kBatchMaxHours = 21 * 24;

}  // namespace

double objective_per_kwh(const FleetView& view, const AgentOptions& o, int site, int64_t from_s,
                         int64_t to_s) {
  const SignalView signal = view.expected_signal(site, from_s, to_s, view.gpu_kw(site));
  switch (o.objective) {
    case AgentOptions::Objective::kCarbon:
      return signal.carbon_g_per_kwh + o.price_weight_g * signal.price_per_kwh;
    case AgentOptions::Objective::kCost:
      return signal.price_per_kwh;
    case AgentOptions::Objective::kCostCarbon:
      return signal.price_per_kwh + o.carbon_price_usd_per_t * signal.carbon_g_per_kwh / 1e6;
  }
  return signal.carbon_g_per_kwh;
}

double BatchPlan::cost(int site, int64_t from_s, int64_t to_s, double gpus) const {
  if (site < 0 || static_cast<std::size_t>(site) >= price.size()) return 0.0;
  const std::vector<double>& p = price[static_cast<std::size_t>(site)];
  double total = 0;
  for (int64_t a = std::max(from_s, base_s); a < to_s;) {
    const auto h = static_cast<std::size_t>((a - base_s) / kBatchHour);
    if (h >= p.size()) break;
    const int64_t b = std::min(to_s, base_s + static_cast<int64_t>(h + 1) * kBatchHour);
    total += p[h] * gpus * static_cast<double>(b - a) / kBatchHour;
    a = b;
  }
  return total;
}

BatchPlan assign_batch(const FleetView& view, std::span<const JobInfo> jobs,
                       const BatchOptions& options) {
  BatchPlan plan;
  std::vector<BatchChoice>& out = plan.choices;
  out.assign(jobs.size(), BatchChoice{});
  const int64_t now = view.now_s();
  const int64_t base =
      (now >= 0 ? now / kBatchHour : -((-now + kBatchHour - 1) / kBatchHour)) * kBatchHour;
  const auto n_sites = static_cast<std::size_t>(view.fleet().sites.size());
  plan.base_s = base;
  if (n_sites == 0 || n_sites > 32) return plan;
  // The jobs with GPUs, in the bound's terms (seconds from the hour holding now).
  std::vector<WholeJob> whole;
  std::vector<std::size_t> of;  // the batch position of each
  int64_t be_slack = -1, last_end = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& job = jobs[i];
    if (job.again || !job.pod->needs_gpu()) continue;
    WholeJob w;
    w.home = job.home_site;
    w.ls = job.latency_sensitive;
    w.data_gb = job.data_gb;
    w.gpus = static_cast<double>(job.pod->total_gpu_milli()) / 1000.0;
    w.submit_s = now - base;
    w.end_s = w.submit_s + std::max<int64_t>(job.duration_s, 1);
    for (std::size_t s = 0; s < n_sites; ++s) {
      const int site = static_cast<int>(s);
      if (!view.fits_ever(site, *job.pod)) continue;
      if (job.latency_sensitive && site != job.home_site &&
          transfer_seconds(view, job, site) > static_cast<double>(view.ls_bound_s())) {
        continue;
      }
      w.allowed |= 1u << s;
    }
    if (w.allowed == 0) continue;
    if (!job.latency_sensitive) {
      be_slack = be_slack < 0 ? job.slack_s : std::min(be_slack, job.slack_s);
    }
    last_end = std::max(last_end, w.end_s + std::max<int64_t>(job.slack_s, 0));
    whole.push_back(w);
    of.push_back(i);
  }
  if (whole.empty()) return plan;
  // Read off first come, first placed: the longest first, as they hold a site's room longest
  // (all came at once; among equals, the batch's order).
  {
    std::vector<std::size_t> order(whole.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return whole[a].end_s - whole[a].submit_s > whole[b].end_s - whole[b].submit_s;
    });
    std::vector<WholeJob> sorted;
    std::vector<std::size_t> sorted_of;
    for (std::size_t k : order) {
      sorted.push_back(whole[k]);
      sorted_of.push_back(of[k]);
    }
    whole = std::move(sorted);
    of = std::move(sorted_of);
  }
  const auto hours = static_cast<std::size_t>(std::min(kBatchMaxHours, last_end / kBatchHour + 1));
  // The work that will replace them: in steady state work arrives as fast as it leaves, so
  // each job is followed at its home, once it ends, by as many GPUs of the same class until
  // the last job in hand ends (Little's law on the jobs in hand; there is no arrival history
  // yet). The replacements compete for the site-hours and so price them; only the jobs in
  // hand are assigned.
  const std::size_t in_hand = whole.size();
  const int64_t horizon_end = static_cast<int64_t>(hours) * kBatchHour;
  for (std::size_t k = 0; k < in_hand; ++k) {
    WholeJob next = whole[k];
    if (next.end_s >= horizon_end) continue;
    next.submit_s = next.end_s;
    next.end_s = horizon_end;
    whole.push_back(next);
  }
  WholeJobCosts costs;
  costs.per_gpu_hour.assign(n_sites, std::vector<double>(hours, 0.0));
  costs.per_transfer_kwh.assign(n_sites, std::vector<double>(hours, 0.0));
  costs.kwh_per_gb.assign(n_sites, 0.0);
  costs.capacity.assign(n_sites, 0.0);
  costs.be_slack_s = std::max<int64_t>(be_slack, 0);
  costs.ls_slack_s = 0;  // an LS job starts now
  double top = 0;
  for (std::size_t s = 0; s < n_sites; ++s) {
    const int site = static_cast<int>(s);
    const double kw = view.gpu_kw(site);
    for (std::size_t h = 0; h < hours; ++h) {
      const int64_t from = std::max(now, base + static_cast<int64_t>(h) * kBatchHour);
      const int64_t to = base + static_cast<int64_t>(h + 1) * kBatchHour;
      const double per_kwh = objective_per_kwh(view, options.agent, site, from, to);
      costs.per_gpu_hour[s][h] = kw * per_kwh;
      costs.per_transfer_kwh[s][h] = options.move_weight * per_kwh;
      top = std::max(top, costs.per_gpu_hour[s][h]);
    }
    costs.kwh_per_gb[s] = view.fleet().sites[s].network.energy_kwh_per_gb;
    const double gpus = static_cast<double>(view.gpu_capacity_milli(site)) / 1000.0;
    const double taken = view.load(site) + view.ls_reserve(site, now);
    costs.capacity[s] = std::max(0.0, (options.agent.be_max_fill - taken) * gpus);
  }
  costs.unserved_per_gpu_hour = 1e3 * (top + 1.0);
  const WholeJobBoundResult r =
      whole_job_bound(whole, costs, {}, options.iterations, WholeJobSchedule::kWithinCapacity);
  for (std::size_t k = 0; k < in_hand; ++k) {
    const WholeJobStart& at = r.schedule[k];
    if (at.site < 0) continue;
    out[of[k]] = BatchChoice{at.site, now + at.delay_s};
  }
  plan.price = r.lambda;
  return plan;
}

}  // namespace greensched::multi
