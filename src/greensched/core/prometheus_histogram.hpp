// A Prometheus histogram: counts of observations at or under each bucket's upper bound, their
// sum and count, written in the text format as <name>_bucket{...,le="..."} (cumulative, then
// le="+Inf"), <name>_sum and <name>_count. For any /metrics that times something (the dispatch
// service's decisions and cluster reads). Not thread-safe: its owner locks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace greensched {

class PrometheusHistogram {
 public:
  // `bounds`: the buckets' upper bounds, ascending.
  explicit PrometheusHistogram(std::vector<double> bounds);

  void observe(double value);
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

  // Appends the histogram's samples; `labels` (already formatted, may be empty) go before le.
  void render(std::string& out, std::string_view name, std::string_view labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative
  uint64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace greensched
