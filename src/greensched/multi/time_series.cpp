#include "greensched/multi/time_series.hpp"

#include <atomic>
#include <cassert>
#include <utility>

#include "greensched/core/utc_time.hpp"

namespace greensched::multi {

TimeSeries::TimeSeries(int64_t start_s, int64_t step_s, std::vector<double> values)
    : start_s_(start_s), step_s_(step_s), values_(std::move(values)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  assert(step_s_ > 0);
  for (double v : values_) cycle_total_ += v;
}

int64_t TimeSeries::index_of(int64_t t) const {
  return floor_div(t - start_s_, step_s_);
}

int64_t TimeSeries::history_s(int64_t t) const {
  if (values_.empty()) return 0;
  return t >= start_s_ ? t - start_s_ : floor_mod(t - start_s_, end_s() - start_s_);
}

double TimeSeries::at(int64_t t) const {
  if (values_.empty()) return 0;
  const auto n = static_cast<int64_t>(values_.size());
  return values_[static_cast<std::size_t>(floor_mod(index_of(t), n))];
}

double TimeSeries::integral(int64_t from, int64_t to) const {
  if (to <= from || values_.empty()) return 0;
  const auto n = static_cast<int64_t>(values_.size());
  const auto value = [&](int64_t i) { return values_[static_cast<std::size_t>(floor_mod(i, n))]; };
  const int64_t i0 = index_of(from);
  const int64_t i1 = index_of(to);  // the sample holding `to` (contributes to - its start)
  if (i0 == i1) return value(i0) * static_cast<double>(to - from);

  const double head = value(i0) * static_cast<double>(start_s_ + (i0 + 1) * step_s_ - from);
  const double tail = value(i1) * static_cast<double>(to - (start_s_ + i1 * step_s_));
  // Whole samples i0 + 1 .. i1 - 1: whole cycles by the cycle total, then the remainder.
  const int64_t middle = i1 - i0 - 1;
  double sum = static_cast<double>(middle / n) * cycle_total_;
  const int64_t rest = middle % n;
  auto j = static_cast<std::size_t>(floor_mod(i0 + 1, n));
  for (int64_t k = 0; k < rest; ++k) {
    sum += values_[j];
    if (++j == values_.size()) j = 0;
  }
  return head + sum * static_cast<double>(step_s_) + tail;
}

double TimeSeries::mean(int64_t from, int64_t to) const {
  if (to <= from || index_of(from) == index_of(to - 1)) return at(from);
  return integral(from, to) / static_cast<double>(to - from);
}

}  // namespace greensched::multi
