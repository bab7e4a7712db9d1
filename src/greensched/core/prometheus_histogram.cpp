#include "greensched/core/prometheus_histogram.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "greensched/core/prometheus_text.hpp"

namespace greensched {

PrometheusHistogram::PrometheusHistogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size(), 0) {}

void PrometheusHistogram::observe(double value) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  if (it != bounds_.end()) ++counts_[static_cast<std::size_t>(it - bounds_.begin())];
  ++count_;
  sum_ += value;
}

void PrometheusHistogram::render(std::string& out, std::string_view name,
                                 std::string_view labels) const {
  const std::string bucket = fmt::format("{}_bucket", name);
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (std::size_t b = 0; b < bounds_.size(); ++b) {
    cumulative += counts_[b];
    prometheus_sample(out, bucket,
                      fmt::format("{}{}le=\"{}\"", labels, sep, prometheus_number(bounds_[b])),
                      static_cast<double>(cumulative));
  }
  prometheus_sample(out, bucket, fmt::format("{}{}le=\"+Inf\"", labels, sep),
                    static_cast<double>(count_));
  prometheus_sample(out, fmt::format("{}_sum", name), labels, sum_);
  prometheus_sample(out, fmt::format("{}_count", name), labels, static_cast<double>(count_));
}

}  // namespace greensched
