#include "greensched/multi/whole_job_bound.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

namespace greensched::multi {
namespace {

constexpr int64_t kJobHour = 3600;

// Per hour h: the least of v over [h, h + shift] (clipped to the end).
std::vector<double> window_min(const std::vector<double>& v, int64_t shift) {
  const std::size_t n = v.size();
  std::vector<double> least(n, 0.0);
  std::deque<std::size_t> window;  // indices, values ascending
  for (std::size_t i = n; i-- > 0;) {
    // Going backwards, the window of i is [i, i + shift]: drop what fell out, add i.
    while (!window.empty() && window.front() > i + static_cast<std::size_t>(shift)) {
      window.pop_front();
    }
    while (!window.empty() && v[window.back()] >= v[i]) window.pop_back();
    window.push_back(i);
    least[i] = v[window.front()];
  }
  return least;
}

}  // namespace

WholeJobBoundResult whole_job_bound(const std::vector<WholeJob>& jobs, const WholeJobCosts& costs,
                                    std::vector<std::vector<double>> lambda, int max_iterations,
                                    WholeJobSchedule schedule) {
  const std::size_t sites = costs.per_gpu_hour.size();
  const std::size_t hours = sites > 0 ? costs.per_gpu_hour[0].size() : 0;
  const auto end_of_hours = static_cast<int64_t>(hours) * kJobHour;
  lambda.resize(sites);
  for (auto& row : lambda) row.resize(hours, 0.0);

  // A move's transfer, per kWh: at the cheapest hour its dispatch could fall in (its
  // submission, or for BE work up to its slack later).
  const int64_t be_shift_h = (costs.be_slack_s + kJobHour - 1) / kJobHour;
  std::vector<std::vector<double>> transfer_be(sites);
  for (std::size_t s = 0; s < sites; ++s) {
    transfer_be[s] = window_min(costs.per_transfer_kwh[s], be_shift_h);
  }
  WholeJobBoundResult best{-INFINITY, 0, {}, {}};
  // Per site: the priced cost of each hour (and a 0 past the last) and its running sum at hour
  // starts, so that the priced cost of any run is two lookups.
  std::vector<std::vector<double>> priced(sites), cumulative(sites), usage(sites);
  const auto hour_of = [&](int64_t t) {
    return static_cast<std::size_t>(std::min(t, end_of_hours) / kJobHour);
  };
  const auto fraction = [](int64_t t) {
    return static_cast<double>(t % kJobHour) / static_cast<double>(kJobHour);
  };
  // Calls visit(site, delay, cost) for each start of `job` where its least cost at the prices
  // in `priced` may lie: delays 0 and the slack, and two runs of delays an hour apart, where
  // its start (a) or its end (b) meets an hour (along a run the other end sits at the same
  // point of its hour), at every site it may use.
  const auto each_start = [&](const WholeJob& job, const auto& visit) {
    const int64_t length = job.end_s - job.submit_s;
    const int64_t slack = job.ls ? costs.ls_slack_s : costs.be_slack_s;
    const int64_t first_a = kJobHour - job.submit_s % kJobHour;
    const int64_t first_b = kJobHour - job.end_s % kJobHour;
    const int64_t runs_a = first_a < slack ? (slack - first_a - 1) / kJobHour + 1 : 0;
    const int64_t runs_b = first_b < slack ? (slack - first_b - 1) / kJobHour + 1 : 0;
    const std::size_t a_start = hour_of(job.submit_s + first_a);
    const std::size_t a_end = hour_of(job.end_s + first_a);
    const double a_end_part = fraction(job.end_s + first_a);
    const std::size_t b_end = hour_of(job.end_s + first_b);
    const std::size_t b_start = hour_of(job.submit_s + first_b);
    const double b_start_part = fraction(job.submit_s + first_b);
    for (std::size_t s = 0; s < sites; ++s) {
      if ((job.allowed & (1u << s)) == 0) continue;
      double move = 0;
      if (static_cast<int>(s) != job.home) {
        const auto& t = job.ls ? costs.per_transfer_kwh[s] : transfer_be[s];
        const auto h = static_cast<std::size_t>(job.submit_s / kJobHour);
        move = job.data_gb * costs.kwh_per_gb[s] * (h < t.size() ? t[h] : 0.0);
      }
      const auto& price = priced[s];
      const auto& sum = cumulative[s];
      const auto run_cost = [&](int64_t from) {  // of the run from `from`, per GPU
        const int64_t to = from + length;
        return sum[hour_of(to)] + price[hour_of(to)] * (to < end_of_hours ? fraction(to) : 0) -
               sum[hour_of(from)] -
               price[hour_of(from)] * (from < end_of_hours ? fraction(from) : 0);
      };
      const auto consider = [&](double per_gpu, int64_t d) {
        visit(s, d, move + job.gpus * per_gpu);
      };
      consider(run_cost(job.submit_s), 0);
      if (slack > 0) consider(run_cost(job.submit_s + slack), slack);
      for (int64_t i = 0; i < runs_a; ++i) {
        const auto ks = std::min(a_start + static_cast<std::size_t>(i), hours);
        const auto ke = std::min(a_end + static_cast<std::size_t>(i), hours);
        consider(sum[ke] + price[ke] * a_end_part - sum[ks], first_a + i * kJobHour);
      }
      for (int64_t i = 0; i < runs_b; ++i) {
        const auto ks = std::min(b_start + static_cast<std::size_t>(i), hours);
        const auto ke = std::min(b_end + static_cast<std::size_t>(i), hours);
        consider(sum[ke] - sum[ks] - price[ks] * b_start_part, first_b + i * kJobHour);
      }
    }
  };
  // Calls add(hour, GPU-hours) for each hour of `job` run at `delay`.
  const auto each_hour = [&](const WholeJob& job, int64_t delay, const auto& add) {
    const int64_t to = std::min(job.end_s + delay, end_of_hours);
    for (int64_t t = job.submit_s + delay; t < to;) {
      const int64_t next = std::min(to, (t / kJobHour + 1) * kJobHour);
      add(static_cast<std::size_t>(t / kJobHour),
          job.gpus * static_cast<double>(next - t) / static_cast<double>(kJobHour));
      t = next;
    }
  };
  // The prices lambda on top of the costs, per site and hour, and their running sums.
  const auto set_prices = [&](const std::vector<std::vector<double>>& at) {
    for (std::size_t s = 0; s < sites; ++s) {
      priced[s].assign(hours + 1, 0.0);
      cumulative[s].assign(hours + 1, 0.0);
      for (std::size_t h = 0; h < hours; ++h) {
        priced[s][h] = costs.per_gpu_hour[s][h] + at[s][h];
        cumulative[s][h + 1] = cumulative[s][h] + priced[s][h];
      }
    }
  };
  // Deflected subgradient steps (each direction keeps `kMomentum` of the last) of Polyak's
  // length toward a target `kAim` above the best bound; the length halves after `kPatience`
  // steps without a better bound.
  constexpr double kMomentum = 0.8, kAim = 0.05;
  constexpr int kPatience = 20;
  std::vector<std::vector<double>> direction(sites, std::vector<double>(hours, 0.0));
  double theta = 1.0;
  int since_better = 0;
  for (int it = 0; it <= max_iterations; ++it) {
    set_prices(lambda);
    for (std::size_t s = 0; s < sites; ++s) usage[s].assign(hours, 0.0);
    double value = 0;
    for (const WholeJob& job : jobs) {
      const double gpu_hours =
          job.gpus * static_cast<double>(job.end_s - job.submit_s) / static_cast<double>(kJobHour);
      double least = costs.unserved_per_gpu_hour * gpu_hours;
      int at = -1;
      int64_t at_delay = 0;
      each_start(job, [&](std::size_t s, int64_t d, double v) {
        if (v < least) {
          least = v;
          at = static_cast<int>(s);
          at_delay = d;
        }
      });
      value += least;
      if (at < 0) continue;
      // Its GPU-hours in each hour it covers, at that site and delay.
      std::vector<double>& use = usage[static_cast<std::size_t>(at)];
      each_hour(job, at_delay, [&](std::size_t h, double gpu_hours) { use[h] += gpu_hours; });
    }
    // The subgradient: use over capacity; no step below a price of 0.
    double norm2 = 0;
    for (std::size_t s = 0; s < sites; ++s) {
      for (std::size_t h = 0; h < hours; ++h) {
        value -= lambda[s][h] * costs.capacity[s];
        usage[s][h] -= costs.capacity[s];
        direction[s][h] = usage[s][h] + kMomentum * direction[s][h];
        if (lambda[s][h] <= 0 && direction[s][h] < 0) direction[s][h] = 0;
        norm2 += direction[s][h] * direction[s][h];
      }
    }
    if (value > best.objective) {
      best.objective = value;
      best.lambda = lambda;
      since_better = 0;
    } else if (++since_better >= kPatience) {
      theta /= 2;
      since_better = 0;
    }
    best.iterations = it;
    if (it == max_iterations || norm2 <= 0) break;
    const double step = theta * kAim * std::abs(best.objective) / norm2;
    for (std::size_t s = 0; s < sites; ++s) {
      for (std::size_t h = 0; h < hours; ++h) {
        lambda[s][h] = std::max(0.0, lambda[s][h] + step * direction[s][h]);
      }
    }
  }
  if (schedule != WholeJobSchedule::kNone) {
    // At the best prices, first come first placed: each job, in order of submission, at its
    // cheapest start (the site's grid, the price and its move) that keeps every hour it covers
    // within the capacity; kAlone: at its cheapest start, whatever the others take.
    set_prices(best.lambda);
    std::vector<std::vector<double>> used(sites, std::vector<double>(hours, 0.0));
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
      each_start(job, [&](std::size_t s, int64_t d, double v) {
        if (!(v < least)) return;
        bool fits = true;
        if (schedule == WholeJobSchedule::kWithinCapacity) {
          each_hour(job, d, [&](std::size_t h, double gpu_hours) {
            fits = fits && used[s][h] + gpu_hours <= costs.capacity[s] * (1 + 1e-12);
          });
        }
        if (fits) {
          least = v;
          at = WholeJobStart{static_cast<int>(s), d};
        }
      });
      if (at.site < 0 || schedule == WholeJobSchedule::kAlone) continue;  // nothing to check
      each_hour(job, at.delay_s, [&](std::size_t h, double gpu_hours) {
        used[static_cast<std::size_t>(at.site)][h] += gpu_hours;
      });
    }
  }
  return best;
}

}  // namespace greensched::multi
