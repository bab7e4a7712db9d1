// A cluster node as the API server describes it (v1.Node JSON): its name, GPU model label
// alibabacloud.com/gpu-card-model (else the GPU feature discovery label nvidia.com/gpu.product),
// and status.allocatable (else status.capacity) cpu, memory and GPU count
// (alibabacloud.com/gpu-count, else nvidia.com/gpu), and whether it is cordoned
// (spec.unschedulable, as `kubectl cordon` or a drain leaves it). Also reads a whole v1.NodeList,
// as `kubectl get nodes -o json` prints it, for `greensched serve --nodes-json`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/node.hpp"
#include "greensched/core/status.hpp"

namespace greensched::serve {

struct NodeInfo {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu_count = 0;
  std::string gpu_model;  // empty when the node has no GPU
  bool cordoned = false;  // spec.unschedulable: no new pod is placed there
};

// The node's name alone (for reporting a node whose other fields are malformed).
Result<std::string> node_name(const nlohmann::json& node);

Result<NodeInfo> parse_node(const nlohmann::json& node);

// Every item of a v1.NodeList; an error names the item.
Result<std::vector<NodeInfo>> parse_node_list(const nlohmann::json& list);

// The model id kept free so that a pod asking only for models no node has matches no node.
inline constexpr GpuModelId kUnknownModelBit = kMaxGpuModels - 1;

// The simulator's spec of a node; interns its GPU model into `models` (fails when all ids
// but kUnknownModelBit are taken), noting "Node NAME" as where the model was first named, or
// "SOURCE: Node NAME" when the node came from a file.
Result<NodeSpec> to_node_spec(const NodeInfo& info, GpuModelRegistry& models,
                              std::string_view source = {});

}  // namespace greensched::serve
