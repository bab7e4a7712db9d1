#include "greensched/serve/metrics.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "greensched/core/prometheus_text.hpp"
#include "greensched/trace/quantiles.hpp"

namespace greensched::serve {
namespace {

constexpr std::size_t kRecentSamples = 200000;

}  // namespace

void Metrics::observe(std::string_view verb, int code, std::string_view outcome, double seconds) {
  std::lock_guard lock(mu_);
  ++counts_[std::make_tuple(std::string(verb), code, std::string(outcome))];
  auto it = latency_.find(verb);
  if (it == latency_.end()) it = latency_.emplace(std::string(verb), Histogram{}).first;
  Histogram& h = it->second;
  h.buckets.observe(seconds);
  if (h.recent.size() < kRecentSamples) {
    h.recent.push_back(seconds);
  } else {
    h.recent[h.next] = seconds;
    h.next = (h.next + 1) % kRecentSamples;
  }
}

void Metrics::observe_filter(const std::map<std::string, int64_t>& reason_counts,
                             bool unschedulable) {
  std::lock_guard lock(mu_);
  for (const auto& [reason, nodes] : reason_counts) {
    filter_failures_[reason] += static_cast<uint64_t>(nodes);
  }
  if (unschedulable) ++unschedulable_;
}

double Metrics::latency_quantile(std::string_view verb, double q) const {
  std::vector<double> samples;
  {
    std::lock_guard lock(mu_);
    auto it = latency_.find(verb);
    if (it == latency_.end() || it->second.recent.empty()) return 0;
    samples = it->second.recent;
  }
  return trace::quantile(std::move(samples), q);
}

std::size_t Metrics::requests(std::string_view verb) const {
  std::lock_guard lock(mu_);
  auto it = latency_.find(verb);
  return it == latency_.end() ? 0 : it->second.buckets.count();
}

std::string Metrics::render(const StateGauges& g, bool ready) const {
  std::string out;
  out.reserve(4096 + g.nodes.size() * 600);
  auto line = [&](std::string_view name, std::string_view labels, double v) {
    prometheus_sample(out, name, labels, v);
  };
  {
    std::lock_guard lock(mu_);
    prometheus_header(out, "greensched_extender_requests_total", "counter",
                      "Extender HTTP requests by verb, HTTP status code and outcome.");
    for (const auto& [key, count] : counts_) {
      const auto& [verb, code, outcome] = key;
      line("greensched_extender_requests_total",
           fmt::format("verb=\"{}\",code=\"{}\",outcome=\"{}\"", verb, code, outcome),
           static_cast<double>(count));
    }
    prometheus_header(
        out, "greensched_extender_filter_node_failures_total", "counter",
        "Nodes turned down by filter, by per-node reason (the numbers behind them are in "
        "the decision log).");
    for (const auto& [reason, count] : filter_failures_) {
      line("greensched_extender_filter_node_failures_total",
           fmt::format("reason=\"{}\"", prometheus_label(reason)), static_cast<double>(count));
    }
    prometheus_header(out, "greensched_extender_unschedulable_total", "counter",
                      "Filters that left the pod no node.");
    line("greensched_extender_unschedulable_total", "", static_cast<double>(unschedulable_));
    prometheus_header(
        out, "greensched_extender_decision_seconds", "histogram",
        "Time to answer an extender request: parse, decide and, for bind, release and "
        "resync, commit to the journal.");
    for (const auto& [verb, h] : latency_) {
      h.buckets.render(out, "greensched_extender_decision_seconds",
                       fmt::format("verb=\"{}\"", verb));
    }
  }

  std::vector<std::string> labels;
  labels.reserve(g.nodes.size());
  for (const NodeGauge& n : g.nodes) {
    labels.push_back(fmt::format("node=\"{}\",gpu_model=\"{}\"", prometheus_label(n.name),
                                 prometheus_label(n.gpu_model)));
  }
  prometheus_header(
      out, "greensched_node_gpu_allocated_ratio", "gauge",
      "Allocated share of the node's GPUs (allocated / capacity GPU milli; 0 without GPUs).");
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeGauge& n = g.nodes[i];
    line("greensched_node_gpu_allocated_ratio", labels[i],
         n.gpu_capacity_milli > 0 ? static_cast<double>(n.gpu_allocated_milli) /
                                        static_cast<double>(n.gpu_capacity_milli)
                                  : 0.0);
  }
  prometheus_header(out, "greensched_node_gpu_allocated_milli", "gauge",
                    "GPU milli allocated on the node (1000 = one GPU).");
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    line("greensched_node_gpu_allocated_milli", labels[i],
         static_cast<double>(g.nodes[i].gpu_allocated_milli));
  }
  prometheus_header(out, "greensched_node_gpu_capacity_milli", "gauge", "GPU milli the node has.");
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    line("greensched_node_gpu_capacity_milli", labels[i],
         static_cast<double>(g.nodes[i].gpu_capacity_milli));
  }
  prometheus_header(out, "greensched_node_pods", "gauge",
                    "Pods bound to the node through the extender.");
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    line("greensched_node_pods", labels[i], g.nodes[i].pods);
  }
  prometheus_header(
      out, "greensched_node_power_watts", "gauge",
      "Modelled IT power of the node (PWR model: GPUs in use at max, free at idle; CPU per "
      "socket).");
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    line("greensched_node_power_watts", labels[i], g.nodes[i].power_watts);
  }

  prometheus_header(out, "greensched_cluster_gpu_allocated_ratio", "gauge",
                    "Allocated share of the cluster's GPUs.");
  line("greensched_cluster_gpu_allocated_ratio", "",
       g.gpu_capacity_milli > 0
           ? static_cast<double>(g.gpu_allocated_milli) / static_cast<double>(g.gpu_capacity_milli)
           : 0.0);
  prometheus_header(out, "greensched_cluster_gpu_allocated_milli", "gauge", "GPU milli allocated.");
  line("greensched_cluster_gpu_allocated_milli", "", static_cast<double>(g.gpu_allocated_milli));
  prometheus_header(out, "greensched_cluster_gpu_capacity_milli", "gauge",
                    "GPU milli of all nodes.");
  line("greensched_cluster_gpu_capacity_milli", "", static_cast<double>(g.gpu_capacity_milli));
  prometheus_header(
      out, "greensched_cluster_fragmentation_gpu_milli", "gauge",
      "Cluster GPU fragmentation F (FGD, ATC'23) under the target workload, in GPU milli.");
  line("greensched_cluster_fragmentation_gpu_milli", "", g.fragmentation_gpu_milli);
  prometheus_header(out, "greensched_cluster_power_watts", "gauge",
                    "Modelled IT power of all nodes.");
  line("greensched_cluster_power_watts", "", g.power_watts);
  prometheus_header(out, "greensched_cluster_facility_power_watts", "gauge",
                    "Modelled facility power (IT power x PUE).");
  line("greensched_cluster_facility_power_watts", "", g.power_watts * g.pue);
  prometheus_header(out, "greensched_cluster_nodes", "gauge", "Nodes in the extender's state.");
  line("greensched_cluster_nodes", "", static_cast<double>(g.nodes.size()));
  prometheus_header(out, "greensched_cluster_pods", "gauge", "Pods bound through the extender.");
  line("greensched_cluster_pods", "", static_cast<double>(g.pods));
  prometheus_header(out, "greensched_pending_pods", "gauge",
                    "Pods seen by filter and not yet bound.");
  line("greensched_pending_pods", "", static_cast<double>(g.pending));
  prometheus_header(out, "greensched_assumed_pods", "gauge",
                    "Pods whose room prioritize holds on their best node until their bind.");
  line("greensched_assumed_pods", "", static_cast<double>(g.assumed));
  prometheus_header(out, "greensched_assume_misses_total", "counter",
                    "Binds to another node than the one prioritize assumed.");
  line("greensched_assume_misses_total", "", static_cast<double>(g.assume_misses));
  prometheus_header(out, "greensched_assume_expired_total", "counter",
                    "Assumptions forgotten because their bind did not come in time.");
  line("greensched_assume_expired_total", "", static_cast<double>(g.assume_expired));
  prometheus_header(out, "greensched_journal_entries_total", "counter",
                    "Journal entries committed.");
  line("greensched_journal_entries_total", "", static_cast<double>(g.journal.events));
  prometheus_header(
      out, "greensched_journal_commits_total", "counter",
      "Journal transactions committed (several entries may share one: group commit).");
  line("greensched_journal_commits_total", "", static_cast<double>(g.journal.commits));
  prometheus_header(out, "greensched_journal_entries_since_snapshot", "gauge",
                    "Journal entries after the last snapshot (replayed on restart).");
  line("greensched_journal_entries_since_snapshot", "",
       static_cast<double>(g.journal.since_snapshot));
  prometheus_header(out, "greensched_journal_failed", "gauge",
                    "1 when a journal commit failed; changes are refused until restart.");
  line("greensched_journal_failed", "", g.journal.failed ? 1 : 0);
  prometheus_header(out, "greensched_ready", "gauge",
                    "1 once the state is rebuilt and verbs are served.");
  line("greensched_ready", "", ready ? 1 : 0);
  prometheus_header(out, "greensched_info", "gauge", "The policy in use.");
  line("greensched_info",
       fmt::format("policy=\"{}\",version=\"0.1.0\"", prometheus_label(g.policy)), 1);
  return out;
}

}  // namespace greensched::serve
