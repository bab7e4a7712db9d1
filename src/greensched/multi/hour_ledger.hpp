// GPU capacity a site has promised, hour by hour: the jobs running there until their expected
// end, and the jobs deferred there over the hours they are planned to run. Dispatch agents
// read it to see how full a site will be at a start they consider, so that a deferred job
// holds no capacity before it is due, yet a burst of deferrals does not all pick the same
// clean hours. A job counts in every hour its run touches. Fenwick tree over the hours'
// differences: adding a run and reading an hour both cost O(log hours).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace greensched::multi {

class HourLedger {
 public:
  HourLedger() = default;
  // Hours [first_hour_s, first_hour_s + 3600 hours); times outside are clamped to the span.
  HourLedger(int64_t first_hour_s, std::size_t hours)
      : first_s_(first_hour_s), tree_(hours + 2, 0) {}

  // Adds `milli` over every hour that [from_s, to_s) touches (at least the hour of from_s).
  void add(int64_t from_s, int64_t to_s, int64_t milli) {
    if (tree_.size() < 3 || milli == 0) return;
    const std::size_t a = hour_of(from_s);
    const std::size_t b = std::max(a + 1, hour_of(to_s - 1) + 1);  // exclusive
    bump(a, milli);
    bump(b, -milli);
  }
  // What is promised in the hour holding t.
  int64_t at(int64_t t) const {
    if (tree_.size() < 3) return 0;
    int64_t sum = 0;
    for (std::size_t i = hour_of(t) + 1; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
  }

 private:
  std::size_t hour_of(int64_t t) const {
    const int64_t h = (t - first_s_) / 3600 - (t < first_s_ && (t - first_s_) % 3600 != 0);
    return static_cast<std::size_t>(
        std::clamp<int64_t>(h, 0, static_cast<int64_t>(tree_.size()) - 3));
  }
  void bump(std::size_t hour, int64_t v) {
    for (std::size_t i = hour + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += v;
  }

  int64_t first_s_ = 0;
  std::vector<int64_t> tree_;  // 1-based Fenwick tree of per-hour differences
};

}  // namespace greensched::multi
