// Readers for the Alibaba openb trace (cluster-trace-gpu-v2023): the node list
// (sn,cpu_milli,memory_mib,gpu,model) and every pod-list variant, the full 11-column schema and
// the 5-column multigpu schema. Every malformed row is an error "file:line: reason"; no row is
// ever skipped silently.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/node.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"

namespace greensched::trace {

// Node models are interned into `models` (a node list may name new models).
Result<std::vector<NodeSpec>> parse_openb_nodes(std::string_view text, const std::string& source,
                                                GpuModelRegistry& models);
Result<std::vector<NodeSpec>> read_openb_nodes(const std::string& path, GpuModelRegistry& models);

// Models in gpu_spec must already be known to `models`.
Result<std::vector<PodSpec>> parse_openb_pods(std::string_view text, const std::string& source,
                                              const GpuModelRegistry& models);
Result<std::vector<PodSpec>> read_openb_pods(const std::string& path,
                                             const GpuModelRegistry& models);

}  // namespace greensched::trace
