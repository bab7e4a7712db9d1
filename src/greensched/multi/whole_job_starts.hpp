// The starts of a whole job and what each costs at given prices: the one accounting that the
// whole-job dual (whole_job_bound.hpp) and the feasible schedule (whole_job_schedule.hpp)
// share, so that the bound and the schedule it is held against count alike.
//
// A job runs at one pool (a site's GPUs, or one node type of them) from its start to its end
// without a pause. Its cost there is its move (its data x the site's transfer kWh per GB x the
// transfer's objective at its submission hour, for BE work the least within its slack) plus,
// over each hour it covers, its GPUs x (the GPU-hour's objective + the pool's price), its CPU
// floor x the site's kWh objective and its cores x the site's CPU price. Each is piecewise
// linear in the delay, with corners where the start or end crosses an hour, so a job's least
// cost at any prices lies at one of those delays (or 0, or its slack): each_start visits them
// and reads each cost in O(1) off running sums.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "greensched/multi/whole_job_bound.hpp"

namespace greensched::multi {

inline constexpr int64_t kWholeJobHour = 3600;

class WholeJobPricing {
 public:
  // Pools from costs.pool_* (or one per site); hours from costs.per_gpu_hour.
  explicit WholeJobPricing(const WholeJobCosts& costs);

  std::size_t sites() const { return sites_; }
  std::size_t pools() const { return pool_site_.size(); }
  std::size_t hours() const { return hours_; }
  bool cpu_rows() const { return !cpu_capacity_.empty(); }
  int pool_site(std::size_t p) const { return pool_site_[p]; }
  double pool_capacity(std::size_t p) const { return pool_capacity_[p]; }
  double cpu_capacity(std::size_t s) const { return cpu_capacity_[s]; }
  // Rows of the capacities, flat: pool p hour h at p x hours + h, then (with CPU rows) site
  // s hour h at (pools + s) x hours + h.
  std::size_t rows() const { return (pools() + (cpu_rows() ? sites_ : 0)) * hours_; }
  double row_capacity(std::size_t r) const;

  // Prices per row (as rows() lays them out; shorter: 0), on top of the costs.
  void set_prices(const std::vector<double>& price);

  // Whether `job` may run in pool p: a site it may use and (with node-type pools) a type it
  // fits.
  bool may_use(const WholeJob& job, std::size_t p) const {
    return (job.allowed & (1u << static_cast<unsigned>(pool_site_[p]))) != 0 &&
           (!typed_ || (job.types & (1u << static_cast<unsigned>(pool_type_[p]))) != 0);
  }

  // Calls visit(site, pool, delay, cost) for each start of `job` where its least cost at the
  // prices may lie: delays 0 and the slack, and two runs of delays an hour apart, where its
  // start (a) or its end (b) meets an hour (along a run the other end sits at the same point
  // of its hour), in every pool it may use; a job without GPUs (gpus 0) at every site it may
  // use, pool -1.
  template <class Visit>
  void each_start(const WholeJob& job, const Visit& visit) const;

  // Calls add(hour, amount x the share of the hour covered) for each hour of `job` run at
  // `delay` (hours past the last left out).
  template <class Add>
  void each_hour(const WholeJob& job, int64_t delay, double amount, const Add& add) const {
    const int64_t to = std::min(job.end_s + delay, end_of_hours_);
    for (int64_t t = job.submit_s + delay; t < to;) {
      const int64_t next = std::min(to, (t / kWholeJobHour + 1) * kWholeJobHour);
      add(static_cast<std::size_t>(t / kWholeJobHour),
          amount * static_cast<double>(next - t) / static_cast<double>(kWholeJobHour));
      t = next;
    }
  }

 private:
  // A priced series and its running sum at hour starts (one more entry: a 0 past the last).
  struct Series {
    std::vector<double> price, sum;
    void set(const std::vector<double>& base, const double* extra, std::size_t hours);
    // Of [hour ks + start_part, hour ke + end_part).
    double between(std::size_t ks, double start_part, std::size_t ke, double end_part) const {
      return sum[ke] + price[ke] * end_part - sum[ks] - price[ks] * start_part;
    }
  };
  std::size_t hour_of(int64_t t) const {
    return static_cast<std::size_t>(std::min(t, end_of_hours_) / kWholeJobHour);
  }
  static double fraction(int64_t t) {
    return static_cast<double>(t % kWholeJobHour) / static_cast<double>(kWholeJobHour);
  }

  const WholeJobCosts& costs_;
  std::size_t sites_ = 0, hours_ = 0;
  int64_t end_of_hours_ = 0;
  bool typed_ = false;  // pools by node type (else one per site, whatever a job's types)
  std::vector<int> pool_site_, pool_type_;
  std::vector<double> pool_capacity_, cpu_capacity_;
  std::vector<std::vector<double>> transfer_be_;  // per site, the least within the BE slack
  std::vector<Series> gpu_;                       // per pool: GPU-hour cost + price
  std::vector<Series> floor_;                     // per site: IT kWh cost (with per_cpu_kwh)
  std::vector<Series> cpu_;                       // per site: CPU price (with CPU rows)
};

template <class Visit>
void WholeJobPricing::each_start(const WholeJob& job, const Visit& visit) const {
  const int64_t length = job.end_s - job.submit_s;
  const int64_t slack = job.ls ? costs_.ls_slack_s : costs_.be_slack_s;
  const int64_t first_a = kWholeJobHour - job.submit_s % kWholeJobHour;
  const int64_t first_b = kWholeJobHour - job.end_s % kWholeJobHour;
  const int64_t runs_a = first_a < slack ? (slack - first_a - 1) / kWholeJobHour + 1 : 0;
  const int64_t runs_b = first_b < slack ? (slack - first_b - 1) / kWholeJobHour + 1 : 0;
  const std::size_t a_start = hour_of(job.submit_s + first_a);
  const std::size_t a_end = hour_of(job.end_s + first_a);
  const double a_end_part = fraction(job.end_s + first_a);
  const std::size_t b_end = hour_of(job.end_s + first_b);
  const std::size_t b_start = hour_of(job.submit_s + first_b);
  const double b_start_part = fraction(job.submit_s + first_b);
  const bool uses_gpus = job.gpus > 0;
  const std::size_t places = uses_gpus ? pools() : sites_;
  for (std::size_t p = 0; p < places; ++p) {
    const auto s = static_cast<std::size_t>(uses_gpus ? pool_site_[p] : static_cast<int>(p));
    if (uses_gpus ? !may_use(job, p) : (job.allowed & (1u << s)) == 0) continue;
    double move = 0;
    if (static_cast<int>(s) != job.home) {
      const auto& t = job.ls ? costs_.per_transfer_kwh[s] : transfer_be_[s];
      const auto h = static_cast<std::size_t>(job.submit_s / kWholeJobHour);
      move = job.data_gb * costs_.kwh_per_gb[s] * (h < t.size() ? t[h] : 0.0);
    }
    const Series* gpu = uses_gpus ? &gpu_[p] : nullptr;
    const Series* floor = job.floor_kw > 0 && !floor_.empty() ? &floor_[s] : nullptr;
    const Series* cpu = job.cpus > 0 && !cpu_.empty() ? &cpu_[s] : nullptr;
    const int pool = uses_gpus ? static_cast<int>(p) : -1;
    const auto consider = [&](std::size_t ks, double start_part, std::size_t ke, double end_part,
                              int64_t d) {
      double v = move;
      if (gpu != nullptr) v += job.gpus * gpu->between(ks, start_part, ke, end_part);
      if (floor != nullptr) v += job.floor_kw * floor->between(ks, start_part, ke, end_part);
      if (cpu != nullptr) v += job.cpus * cpu->between(ks, start_part, ke, end_part);
      visit(s, pool, d, v);
    };
    const auto run_from = [&](int64_t from, int64_t d) {
      const int64_t to = from + length;
      consider(hour_of(from), from < end_of_hours_ ? fraction(from) : 0, hour_of(to),
               to < end_of_hours_ ? fraction(to) : 0, d);
    };
    run_from(job.submit_s, 0);
    if (slack > 0) run_from(job.submit_s + slack, slack);
    for (int64_t i = 0; i < runs_a; ++i) {
      const auto ks = std::min(a_start + static_cast<std::size_t>(i), hours_);
      const auto ke = std::min(a_end + static_cast<std::size_t>(i), hours_);
      consider(ks, 0, ke, a_end_part, first_a + i * kWholeJobHour);
    }
    for (int64_t i = 0; i < runs_b; ++i) {
      const auto ks = std::min(b_start + static_cast<std::size_t>(i), hours_);
      const auto ke = std::min(b_end + static_cast<std::size_t>(i), hours_);
      consider(ks, b_start_part, ke, 0, first_b + i * kWholeJobHour);
    }
  }
}

}  // namespace greensched::multi
