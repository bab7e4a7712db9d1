// Prometheus text exposition of the extender (GET /metrics), with names in the style of the
// DCGM exporter and Kepler (unit suffixes, per-node labels):
//   greensched_extender_requests_total{verb,code,outcome}     counter
//   greensched_extender_decision_seconds{verb}                histogram (_bucket/_sum/_count)
//   greensched_extender_filter_node_failures_total{reason}    nodes a filter turned down, by
//                                                             the categorical per-node reason
//   greensched_extender_unschedulable_total                   filters that left no node
//   greensched_node_gpu_allocated_ratio{node,gpu_model}       allocated / capacity GPU milli
//   greensched_node_gpu_allocated_milli, _gpu_capacity_milli, greensched_node_pods,
//   greensched_node_power_watts{node,gpu_model}               modelled IT power
//   greensched_cluster_gpu_allocated_ratio, _gpu_allocated_milli, _gpu_capacity_milli,
//   greensched_cluster_fragmentation_gpu_milli                FGD's F under the target workload
//   greensched_cluster_power_watts, _facility_power_watts     IT power, and x PUE
//   greensched_cluster_nodes, greensched_cluster_pods, greensched_pending_pods,
//   greensched_journal_entries_total, _commits_total, _entries_since_snapshot, _failed,
//   greensched_ready, greensched_info{policy,version}
// Request observations are thread-safe; the state gauges are taken by the caller under the
// extender's lock and passed in.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "greensched/core/prometheus_histogram.hpp"
#include "greensched/serve/journal.hpp"

namespace greensched::serve {

struct NodeGauge {
  std::string name;
  std::string gpu_model;
  int64_t gpu_capacity_milli = 0;
  int64_t gpu_allocated_milli = 0;
  int32_t pods = 0;
  double power_watts = 0;
};

struct StateGauges {
  std::vector<NodeGauge> nodes;
  int64_t gpu_capacity_milli = 0;
  int64_t gpu_allocated_milli = 0;
  double fragmentation_gpu_milli = 0;
  double power_watts = 0;
  double pue = 1.0;
  int64_t pods = 0;
  int64_t pending = 0;
  int64_t assumed = 0;          // pods whose room is held until their bind
  uint64_t assume_misses = 0;   // binds to another node than the assumed one
  uint64_t assume_expired = 0;  // assumptions whose bind never came
  std::string policy;
  JournalStats journal;
};

class Metrics {
 public:
  // Upper bounds of the latency histogram buckets, in seconds.
  static constexpr std::array<double, 14> kBuckets{0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                   0.0025,  0.005,  0.01,    0.025,  0.05,
                                                   0.1,     0.25,   0.5,     1.0};

  // One answered request: verb, HTTP status, outcome ("ok", "error" for a reply carrying an
  // Error, "bad_request", "not_found", "unavailable"), and how long it took.
  void observe(std::string_view verb, int code, std::string_view outcome, double seconds);

  // One filter's per-node reasons (reason -> nodes) and whether it left the pod no node.
  void observe_filter(const std::map<std::string, int64_t>& reason_counts, bool unschedulable);

  // Exact quantile (0..1, nearest rank as in trace/quantiles.hpp) of the latest latencies of
  // `verb` (up to 200,000 kept), for tests and benchmarks; 0 when none.
  double latency_quantile(std::string_view verb, double q) const;
  std::size_t requests(std::string_view verb) const;

  std::string render(const StateGauges& gauges, bool ready) const;

 private:
  struct Histogram {
    PrometheusHistogram buckets{std::vector<double>(kBuckets.begin(), kBuckets.end())};
    std::vector<double> recent;  // ring of the latest samples
    std::size_t next = 0;
  };
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, int, std::string>, uint64_t> counts_;
  std::map<std::string, Histogram, std::less<>> latency_;
  std::map<std::string, uint64_t, std::less<>> filter_failures_;
  uint64_t unschedulable_ = 0;
};

}  // namespace greensched::serve
