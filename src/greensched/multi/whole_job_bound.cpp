#include "greensched/multi/whole_job_bound.hpp"

#include <algorithm>
#include <cmath>

#include "greensched/multi/whole_job_starts.hpp"

namespace greensched::multi {

WholeJobBoundResult whole_job_bound(const std::vector<WholeJob>& jobs, const WholeJobCosts& costs,
                                    std::vector<std::vector<double>> lambda, int max_iterations,
                                    WholeJobSchedule schedule) {
  return whole_job_bound_from(jobs, costs, WholeJobPrices{std::move(lambda), {}}, max_iterations,
                              schedule);
}

WholeJobBoundResult whole_job_bound_from(const std::vector<WholeJob>& jobs,
                                         const WholeJobCosts& costs, WholeJobPrices start,
                                         int max_iterations, WholeJobSchedule schedule,
                                         double aim) {
  WholeJobPricing pricing(costs);
  const std::size_t sites = pricing.sites();
  const std::size_t pools = pricing.pools();
  const std::size_t hours = pricing.hours();
  const std::size_t rows = pricing.rows();
  // The prices, flat by row (pools, then CPU rows), from the start given (0 past its size).
  std::vector<double> lambda(rows, 0.0);
  const auto take = [&](const std::vector<std::vector<double>>& from, std::size_t first,
                        std::size_t count) {
    for (std::size_t u = 0; u < count && u < from.size(); ++u) {
      for (std::size_t h = 0; h < hours && h < from[u].size(); ++h) {
        lambda[(first + u) * hours + h] = std::max(0.0, from[u][h]);
      }
    }
  };
  take(start.lambda, 0, pools);
  if (pricing.cpu_rows()) take(start.mu, pools, sites);
  std::vector<double> capacity(rows);
  for (std::size_t r = 0; r < rows; ++r) capacity[r] = pricing.row_capacity(r);

  WholeJobBoundResult best{-INFINITY, 0, {}, {}, {}};
  std::vector<double> best_lambda = lambda;
  std::vector<double> usage(rows, 0.0);
  // Adds a job's GPU-hours (and core-hours) at a pool (or site) and delay to `into`.
  const auto use = [&](const WholeJob& job, int site, int pool, int64_t delay,
                       std::vector<double>& into) {
    if (pool >= 0) {
      double* row = into.data() + static_cast<std::size_t>(pool) * hours;
      pricing.each_hour(job, delay, job.gpus, [&](std::size_t h, double v) { row[h] += v; });
    }
    if (pricing.cpu_rows() && job.cpus > 0) {
      double* row = into.data() + (pools + static_cast<std::size_t>(site)) * hours;
      pricing.each_hour(job, delay, job.cpus, [&](std::size_t h, double v) { row[h] += v; });
    }
  };
  // Deflected subgradient steps (each direction keeps `kMomentum` of the last) of Polyak's
  // length toward a target `aim` above the best bound; the length halves after `kPatience`
  // steps without a better bound.
  constexpr double kMomentum = 0.8;
  constexpr int kPatience = 20;
  std::vector<double> direction(rows, 0.0);
  double theta = 1.0;
  int since_better = 0;
  for (int it = 0; it <= max_iterations; ++it) {
    pricing.set_prices(lambda);
    std::fill(usage.begin(), usage.end(), 0.0);
    double value = 0;
    for (const WholeJob& job : jobs) {
      const double gpu_hours = std::max(job.gpus, job.floor_kw) *
                               static_cast<double>(job.end_s - job.submit_s) /
                               static_cast<double>(kWholeJobHour);
      double least = costs.unserved_per_gpu_hour * gpu_hours;
      int at = -1, at_pool = -1;
      int64_t at_delay = 0;
      pricing.each_start(job, [&](std::size_t s, int pool, int64_t d, double v) {
        if (v < least) {
          least = v;
          at = static_cast<int>(s);
          at_pool = pool;
          at_delay = d;
        }
      });
      value += least;
      if (at < 0) continue;
      use(job, at, at_pool, at_delay, usage);
    }
    // The subgradient: use over capacity; no step below a price of 0.
    double norm2 = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      value -= lambda[r] * capacity[r];
      usage[r] -= capacity[r];
      direction[r] = usage[r] + kMomentum * direction[r];
      if (lambda[r] <= 0 && direction[r] < 0) direction[r] = 0;
      norm2 += direction[r] * direction[r];
    }
    if (value > best.objective) {
      best.objective = value;
      best_lambda = lambda;
      since_better = 0;
    } else if (++since_better >= kPatience) {
      theta /= 2;
      since_better = 0;
    }
    best.iterations = it;
    if (it == max_iterations || norm2 <= 0) break;
    const double step = theta * aim * std::abs(best.objective) / norm2;
    for (std::size_t r = 0; r < rows; ++r) {
      lambda[r] = std::max(0.0, lambda[r] + step * direction[r]);
    }
  }
  best.lambda.assign(pools, std::vector<double>(hours, 0.0));
  for (std::size_t p = 0; p < pools; ++p) {
    std::copy_n(best_lambda.begin() + static_cast<std::ptrdiff_t>(p * hours), hours,
                best.lambda[p].begin());
  }
  if (pricing.cpu_rows()) {
    best.mu.assign(sites, std::vector<double>(hours, 0.0));
    for (std::size_t s = 0; s < sites; ++s) {
      std::copy_n(best_lambda.begin() + static_cast<std::ptrdiff_t>((pools + s) * hours), hours,
                  best.mu[s].begin());
    }
  }
  if (schedule != WholeJobSchedule::kNone) {
    // At the best prices, first come first placed: each job, in order of submission, at its
    // cheapest start (the site's grid, the price and its move) that keeps every hour it covers
    // within the capacity; kAlone: at its cheapest start, whatever the others take.
    pricing.set_prices(best_lambda);
    std::vector<double> used(rows, 0.0);
    std::vector<std::size_t> order(jobs.size());
    for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return jobs[a].submit_s < jobs[b].submit_s;
    });
    best.schedule.assign(jobs.size(), WholeJobStart{});
    for (std::size_t j : order) {
      const WholeJob& job = jobs[j];
      double least = INFINITY;
      WholeJobStart& at = best.schedule[j];
      pricing.each_start(job, [&](std::size_t s, int pool, int64_t d, double v) {
        if (!(v < least)) return;
        bool fits = true;
        if (schedule == WholeJobSchedule::kWithinCapacity) {
          const auto check = [&](std::size_t unit, double room, double amount) {
            pricing.each_hour(job, d, amount, [&](std::size_t h, double x) {
              fits = fits && used[unit * hours + h] + x <= room * (1 + 1e-12);
            });
          };
          if (pool >= 0) {
            const auto p = static_cast<std::size_t>(pool);
            check(p, pricing.pool_capacity(p), job.gpus);
          }
          if (pricing.cpu_rows() && job.cpus > 0) {
            check(pools + s, pricing.cpu_capacity(s), job.cpus);
          }
        }
        if (fits) {
          least = v;
          at = WholeJobStart{static_cast<int>(s), d, pool};
        }
      });
      if (at.site < 0 || schedule == WholeJobSchedule::kAlone) continue;  // nothing to check
      use(job, at.site, at.pool, at.delay_s, used);
    }
  }
  return best;
}

}  // namespace greensched::multi
