#include "greensched/multi/whole_job_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "greensched/multi/whole_job_starts.hpp"

namespace greensched::multi {
namespace {

// A start of a job: where, when and at what true cost.
struct Candidate {
  int16_t site = -1;
  int16_t pool = -1;
  int32_t delay_s = 0;
  double cost = 0;
};

// A job using a row in an hour, as placed for the stamp-th time (older stamps are stale).
struct Cover {
  uint32_t job = 0;
  uint32_t stamp = 0;
};

constexpr double kRoom = 1e-9;  // relative slack of a capacity check (sums drift)

// The local search's state: each job's candidate starts (cheapest first), where each is, the
// capacity used per row and hour, and per row and hour the jobs that use it.
class Search {
 public:
  // Keeps each job's `kept` cheapest starts, at least `per_place` in each pool (or site) it
  // may use, and its start in `start` (where it has one).
  Search(const std::vector<WholeJob>& jobs, const WholeJobCosts& costs,
         const std::vector<WholeJobStart>& start, std::size_t kept, std::size_t per_place)
      : jobs_(jobs), pricing_(costs) {
    hours_ = pricing_.hours();
    end_of_hours_ = static_cast<int64_t>(hours_) * kWholeJobHour;
    units_ = pricing_.pools() + (pricing_.cpu_rows() ? pricing_.sites() : 0);
    used_.assign(units_ * hours_, 0.0);
    cover_.resize(units_ * hours_);
    room_.resize(units_);
    for (std::size_t u = 0; u < units_; ++u) {
      room_[u] = u < pricing_.pools() ? pricing_.pool_capacity(u)
                                      : pricing_.cpu_capacity(u - pricing_.pools());
    }
    first_.assign(jobs.size() + 1, 0);
    const auto cheaper = [](const Candidate& a, const Candidate& b) {
      if (a.cost != b.cost) return a.cost < b.cost;
      if (a.site != b.site) return a.site < b.site;
      if (a.pool != b.pool) return a.pool < b.pool;
      return a.delay_s < b.delay_s;
    };
    const auto same = [](const Candidate& a, const Candidate& b) {
      return a.site == b.site && a.pool == b.pool && a.delay_s == b.delay_s;
    };
    std::vector<Candidate> all;
    std::vector<std::size_t> places;
    const auto place_of = [&](const Candidate& c) {
      return c.pool >= 0 ? static_cast<std::size_t>(c.pool) : static_cast<std::size_t>(c.site);
    };
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      all.clear();
      pricing_.each_start(jobs[j], [&](std::size_t s, int pool, int64_t d, double v) {
        all.push_back(Candidate{static_cast<int16_t>(s), static_cast<int16_t>(pool),
                                static_cast<int32_t>(d), v});
      });
      std::sort(all.begin(), all.end(), cheaper);
      all.erase(std::unique(all.begin(), all.end(), same), all.end());
      const std::size_t from = candidates_.size();
      candidates_.insert(candidates_.end(), all.begin(),
                         all.begin() + static_cast<std::ptrdiff_t>(std::min(kept, all.size())));
      // Past those: each place's cheapest few (room elsewhere when the cheapest sites are
      // full), and the start it came with.
      places.assign(std::max(units_, pricing_.sites()), 0);
      for (std::size_t i = 0; i < std::min(kept, all.size()); ++i) ++places[place_of(all[i])];
      for (std::size_t i = kept; i < all.size(); ++i) {
        const Candidate& c = all[i];
        const bool started = j < start.size() && start[j].site >= 0 && c.site == start[j].site &&
                             c.delay_s == start[j].delay_s &&
                             (start[j].pool < 0 || c.pool == start[j].pool);
        if (started || places[place_of(c)] < per_place) {
          ++places[place_of(c)];
          candidates_.push_back(c);
        }
      }
      std::sort(candidates_.begin() + static_cast<std::ptrdiff_t>(from), candidates_.end(),
                cheaper);
      first_[j + 1] = candidates_.size();
    }
    at_.assign(jobs.size(), -1);
    stamp_.assign(jobs.size(), 0);
  }

  std::size_t count(std::size_t j) const { return first_[j + 1] - first_[j]; }
  const Candidate& candidate(std::size_t j, std::size_t i) const {
    return candidates_[first_[j] + i];
  }
  int at(std::size_t j) const { return at_[j]; }
  double cost_at(std::size_t j) const {
    return at_[j] < 0 ? 0.0 : candidate(j, static_cast<std::size_t>(at_[j])).cost;
  }

  // The candidate of job j matching a start, or -1.
  int find(std::size_t j, const WholeJobStart& s) const {
    for (std::size_t i = 0; i < count(j); ++i) {
      const Candidate& c = candidate(j, i);
      if (c.site == s.site && c.delay_s == s.delay_s && (s.pool < 0 || c.pool == s.pool)) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  bool fits(std::size_t j, std::size_t i) const {
    std::size_t unit = 0, hour = 0;
    return !violation(j, candidate(j, i), unit, hour);
  }

  // The first row and hour where job j at its i-th start does not fit; false where it fits.
  bool violation(std::size_t j, const Candidate& c, std::size_t& unit, std::size_t& hour) const {
    bool found = false;
    each_use(jobs_[j], c, [&](std::size_t u, std::size_t h, double x) {
      if (found) return;
      if (used_[u * hours_ + h] + x > room_[u] * (1 + kRoom) + kRoom) {
        found = true;
        unit = u;
        hour = h;
      }
    });
    return found;
  }

  // The first start of job j, from the cheapest, that fits now; -1 where none does.
  int first_fit(std::size_t j, std::size_t up_to) const {
    for (std::size_t i = 0; i < std::min(up_to, count(j)); ++i) {
      if (fits(j, i)) return static_cast<int>(i);
    }
    return -1;
  }

  void place(std::size_t j, int i) {
    at_[j] = i;
    const Cover entry{static_cast<uint32_t>(j), ++stamp_[j]};
    each_use(jobs_[j], candidate(j, static_cast<std::size_t>(i)),
             [&](std::size_t u, std::size_t h, double x) {
               used_[u * hours_ + h] += x;
               cover_[u * hours_ + h].push_back(entry);
             });
  }

  // (Its entries in the cover lists go stale: the next place stamps anew.)
  void remove(std::size_t j) {
    if (at_[j] < 0) return;
    each_use(jobs_[j], candidate(j, static_cast<std::size_t>(at_[j])),
             [&](std::size_t u, std::size_t h, double x) {
               used_[u * hours_ + h] = std::max(0.0, used_[u * hours_ + h] - x);
             });
    at_[j] = -1;
  }

  // Drops the stale entries of every cover list.
  void compact() {
    for (auto& list : cover_) {
      std::erase_if(list, [&](const Cover& c) { return !live(c); });
    }
  }

  // Job j (not placed) at its i-th start, evicting up to `limit` jobs in its way and putting
  // each at its cheapest start that fits then (largest first). `accept(delta)` says whether
  // to keep it, given the change of the total cost (j's cost counted in full); where it fails
  // or is not accepted, everything is as it was. True where kept.
  template <class Accept>
  bool insert_evicting(std::size_t j, std::size_t i, int limit, const Accept& accept) {
    std::vector<std::pair<std::size_t, int>> evicted;  // (job, its start before)
    const Candidate& c = candidate(j, i);
    std::size_t unit = 0, hour = 0;
    bool room = true;
    while (violation(j, c, unit, hour)) {
      if (static_cast<int>(evicted.size()) >= limit) {
        room = false;
        break;
      }
      const std::size_t k = in_the_way(j, c, unit, hour);
      if (k == jobs_.size()) {
        room = false;
        break;
      }
      evicted.emplace_back(k, at_[k]);
      remove(k);
    }
    const auto restore = [&]() {
      for (auto it = evicted.rbegin(); it != evicted.rend(); ++it) {
        remove(it->first);
        place(it->first, it->second);
      }
    };
    if (!room) {
      restore();
      return false;
    }
    place(j, static_cast<int>(i));
    double delta = c.cost;
    std::vector<std::size_t> order(evicted.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return size_of(evicted[a].first) > size_of(evicted[b].first);
    });
    bool placed = true;
    for (std::size_t e : order) {
      const auto [k, before] = evicted[e];
      const int to = first_fit(k, count(k));
      if (to < 0) {
        placed = false;
        break;
      }
      place(k, to);
      delta += candidate(k, static_cast<std::size_t>(to)).cost -
               candidate(k, static_cast<std::size_t>(before)).cost;
    }
    if (placed && accept(delta)) return true;
    remove(j);
    restore();
    return false;
  }

  void clear() {
    for (std::size_t j = 0; j < at_.size(); ++j) remove(j);
  }

  double size_of(std::size_t j) const {
    const WholeJob& job = jobs_[j];
    return std::max(job.gpus, job.floor_kw) * static_cast<double>(job.end_s - job.submit_s);
  }

 private:
  // Calls f(unit, hour, amount) for each row and hour job `job` at `c` takes.
  template <class F>
  void each_use(const WholeJob& job, const Candidate& c, const F& f) const {
    const auto run = [&](std::size_t unit, double amount) {
      const int64_t to = std::min(job.end_s + c.delay_s, end_of_hours_);
      for (int64_t t = job.submit_s + c.delay_s; t < to;) {
        const int64_t next = std::min(to, (t / kWholeJobHour + 1) * kWholeJobHour);
        f(unit, static_cast<std::size_t>(t / kWholeJobHour),
          amount * static_cast<double>(next - t) / static_cast<double>(kWholeJobHour));
        t = next;
      }
    };
    if (c.pool >= 0) run(static_cast<std::size_t>(c.pool), job.gpus);
    if (pricing_.cpu_rows() && job.cpus > 0) {
      run(pricing_.pools() + static_cast<std::size_t>(c.site), job.cpus);
    }
  }

  // Of the jobs using `unit` in `hour`, the one to evict for job j: the smallest that frees
  // what j lacks there, else the largest (ties: the lower index).
  std::size_t in_the_way(std::size_t j, const Candidate& c, std::size_t unit, std::size_t hour) {
    double need = 0;
    each_use(jobs_[j], c, [&](std::size_t u, std::size_t h, double x) {
      if (u == unit && h == hour) need = used_[u * hours_ + h] + x - room_[u];
    });
    const auto amount = [&](std::size_t k) {
      return unit < pricing_.pools() ? jobs_[k].gpus : jobs_[k].cpus;
    };
    std::size_t fitting = jobs_.size(), largest = jobs_.size();
    auto& list = cover_[unit * hours_ + hour];
    std::erase_if(list, [&](const Cover& e) { return !live(e); });
    for (const Cover& e : list) {
      const std::size_t k = e.job;
      if (k == j) continue;
      const double a = amount(k);
      if (a >= need && (fitting == jobs_.size() || a < amount(fitting) ||
                        (a == amount(fitting) && k < fitting))) {
        fitting = k;
      }
      if (largest == jobs_.size() || a > amount(largest) || (a == amount(largest) && k < largest)) {
        largest = k;
      }
    }
    return fitting != jobs_.size() ? fitting : largest;
  }

  const std::vector<WholeJob>& jobs_;
  WholeJobPricing pricing_;
  std::size_t hours_ = 0, units_ = 0;
  int64_t end_of_hours_ = 0;
  std::vector<Candidate> candidates_;
  std::vector<std::size_t> first_;  // job j's candidates: [first_[j], first_[j + 1])
  bool live(const Cover& e) const { return at_[e.job] >= 0 && stamp_[e.job] == e.stamp; }

  std::vector<int> at_;          // per job, its candidate (-1: unplaced)
  std::vector<uint32_t> stamp_;  // per job, how often it was placed
  std::vector<double> used_, room_;
  std::vector<std::vector<Cover>> cover_;
};

double gpu_hours_of(const WholeJob& job) {
  return std::max(job.gpus, job.floor_kw) * static_cast<double>(job.end_s - job.submit_s) /
         static_cast<double>(kWholeJobHour);
}

// The order in which the repair places jobs without room.
enum class RepairOrder { kLargestFirst, kFewestStartsFirst };

// One search from `start` (an empty search: every job to be placed).
FeasibleWholeJobSchedule run_search(Search& search, const std::vector<WholeJob>& jobs,
                                    std::vector<WholeJobStart> start,
                                    const WholeJobSearchOptions& options, RepairOrder order_by) {
  FeasibleWholeJobSchedule out;
  start.resize(jobs.size());
  const std::size_t n = jobs.size();
  // The start as given, where it matches a start the search knows and fits.
  for (std::size_t j = 0; j < n; ++j) {
    if (start[j].site < 0) continue;
    const int i = search.find(j, start[j]);
    if (i >= 0 && search.fits(j, static_cast<std::size_t>(i))) search.place(j, i);
  }
  const auto totals = [&](double& cost, std::size_t& unplaced, double& unserved) {
    cost = 0;
    unplaced = 0;
    unserved = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (search.at(j) >= 0) {
        cost += search.cost_at(j);
      } else {
        ++unplaced;
        unserved += gpu_hours_of(jobs[j]);
      }
    }
  };
  totals(out.start_cost, out.start_unplaced, out.start_unserved_gpu_hours);
  const double scale = 1e-9 * (std::abs(out.start_cost) + 1.0);
  // Repair: the unplaced jobs, largest first, at their cheapest start that fits, else evicting.
  const auto repair = [&]() {
    std::vector<std::size_t> waiting;
    for (std::size_t j = 0; j < n; ++j) {
      if (search.at(j) < 0) waiting.push_back(j);
    }
    std::stable_sort(waiting.begin(), waiting.end(), [&](std::size_t a, std::size_t b) {
      if (order_by == RepairOrder::kFewestStartsFirst && search.count(a) != search.count(b)) {
        return search.count(a) < search.count(b);
      }
      return search.size_of(a) > search.size_of(b);
    });
    for (std::size_t j : waiting) {
      const int i = search.first_fit(j, search.count(j));
      if (i >= 0) {
        search.place(j, i);
        ++out.repaired;
        continue;
      }
      for (std::size_t c = 0; c < search.count(j); ++c) {
        if (search.insert_evicting(j, c, 4, [](double) { return true; })) {
          ++out.repaired;
          break;
        }
      }
    }
  };
  repair();
  std::vector<std::size_t> order(n);
  for (int pass = 0; pass < options.max_passes; ++pass) {
    out.passes = pass + 1;
    std::size_t moved = 0;
    // Reinsertion: each job at its cheapest start that fits once it is out.
    for (std::size_t j = 0; j < n; ++j) {
      const int was = search.at(j);
      if (was <= 0) continue;
      search.remove(j);
      const int to = search.first_fit(j, static_cast<std::size_t>(was) + 1);
      search.place(j, to < 0 ? was : to);
      if (to >= 0 && to < was &&
          search.candidate(j, static_cast<std::size_t>(to)).cost <
              search.candidate(j, static_cast<std::size_t>(was)).cost - scale) {
        ++moved;
      }
    }
    // Ejection: the jobs that would gain most first.
    search.compact();
    std::iota(order.begin(), order.end(), 0);
    const auto gain = [&](std::size_t j) {
      return search.at(j) > 0 ? search.cost_at(j) - search.candidate(j, 0).cost : 0.0;
    };
    std::vector<double> gains(n);
    for (std::size_t j = 0; j < n; ++j) gains[j] = gain(j);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return gains[a] > gains[b]; });
    for (std::size_t j : order) {
      if (gains[j] <= scale || out.ejections >= options.eject_budget) break;
      const int was = search.at(j);
      if (was <= 0) continue;
      const double before = search.cost_at(j);
      const auto tries = std::min<std::size_t>(static_cast<std::size_t>(options.eject_starts),
                                               static_cast<std::size_t>(was));
      for (std::size_t c = 0; c < tries; ++c) {
        if (!(search.candidate(j, c).cost < before - scale)) break;
        ++out.ejections;
        search.remove(j);
        const bool kept = search.insert_evicting(
            j, c, options.eject_jobs, [&](double delta) { return delta - before < -scale; });
        if (kept) {
          ++moved;
          break;
        }
        search.place(j, was);
      }
    }
    const std::size_t placed_before = out.repaired;
    repair();
    out.moves += moved;
    if (moved == 0 && out.repaired == placed_before) break;
  }
  totals(out.cost, out.unplaced, out.unserved_gpu_hours);
  out.start.assign(n, WholeJobStart{});
  for (std::size_t j = 0; j < n; ++j) {
    if (search.at(j) < 0) continue;
    const auto& c = search.candidate(j, static_cast<std::size_t>(search.at(j)));
    out.start[j] = WholeJobStart{c.site, c.delay_s, c.pool};
  }
  return out;
}

}  // namespace

FeasibleWholeJobSchedule improve_whole_job_schedule(const std::vector<WholeJob>& jobs,
                                                    const WholeJobCosts& costs,
                                                    std::vector<WholeJobStart> start,
                                                    const WholeJobSearchOptions& options) {
  Search search(jobs, costs, start, static_cast<std::size_t>(options.starts_kept),
                static_cast<std::size_t>(options.starts_per_place));
  FeasibleWholeJobSchedule best =
      run_search(search, jobs, std::move(start), options, RepairOrder::kLargestFirst);
  // Jobs left without room: start afresh, placing every job by the repair's orders, and keep
  // whichever places the most (then costs the least); the start's figures stay the start's.
  for (RepairOrder order : {RepairOrder::kLargestFirst, RepairOrder::kFewestStartsFirst}) {
    if (best.unplaced == 0) break;
    search.clear();
    FeasibleWholeJobSchedule other = run_search(search, jobs, {}, options, order);
    if (other.unplaced < best.unplaced ||
        (other.unplaced == best.unplaced && other.cost < best.cost)) {
      other.start_cost = best.start_cost;
      other.start_unplaced = best.start_unplaced;
      other.start_unserved_gpu_hours = best.start_unserved_gpu_hours;
      other.passes += best.passes;
      other.moves += best.moves;
      other.ejections += best.ejections;
      best = std::move(other);
    }
  }
  return best;
}

std::vector<double> whole_job_costs(const std::vector<WholeJob>& jobs, const WholeJobCosts& costs,
                                    const std::vector<WholeJobStart>& start) {
  WholeJobPricing pricing(costs);
  std::vector<double> cost(jobs.size(), 0.0);
  for (std::size_t j = 0; j < jobs.size() && j < start.size(); ++j) {
    const WholeJobStart& at = start[j];
    if (at.site < 0) continue;
    pricing.each_start(jobs[j], [&](std::size_t s, int pool, int64_t d, double v) {
      if (static_cast<int>(s) == at.site && d == at.delay_s && (at.pool < 0 || pool == at.pool)) {
        cost[j] = v;
      }
    });
  }
  return cost;
}

}  // namespace greensched::multi
