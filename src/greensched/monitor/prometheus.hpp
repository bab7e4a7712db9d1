// The monitor's readings in the Prometheus text exposition format (version 0.0.4), with
// metric names in the style of the DCGM exporter and Kepler. docs/MONITORING.md lists them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "greensched/monitor/node_sample.hpp"
#include "greensched/monitor/sampler.hpp"

namespace greensched::monitor {

// Figures about the agent itself.
struct AgentStats {
  uint64_t samples = 0;
  double interval_s = 0;
  double cpu_seconds = 0;  // the agent process's user + system CPU time
  SourceStatus sources;
};

// `latest` may be null (no reading yet): then only the agent's own metrics are written.
std::string prometheus_text(const NodeSample* latest, const AgentStats& stats);

}  // namespace greensched::monitor
