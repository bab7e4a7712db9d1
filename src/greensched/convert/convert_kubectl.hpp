// `greensched convert kubectl`: a cluster's nodes (`kubectl get nodes -o json`, a v1.NodeList)
// and pods (`kubectl get pods -A -o json`, a v1.PodList) to openb node and pod lists. Nodes and
// pods are read by serve/ (node_object.hpp, pod_request.hpp, as the extender reads them); on
// top of that this reads HAMi's nvidia.com/gpumem (MiB of GPU memory, a share of the node's GPU
// memory when its nvidia.com/gpu.memory label gives it) and nvidia.com/gpucores (percent of a
// GPU), the QoS class (status.qosClass, else spec.priority) and the times: creation
// (metadata.creationTimestamp), start (status.startTime) and finish (the latest finishedAt once
// every container terminated, else metadata.deletionTimestamp), as seconds from the earliest
// creation, as openb has them. A file that is not JSON or not the expected list is an error
// "file:line: reason"; an item that cannot be converted is dropped and counted with its reason.
#pragma once

#include <optional>

#include "greensched/convert/convert_summary.hpp"
#include "greensched/convert/gpu_names.hpp"
#include "greensched/core/status.hpp"

namespace greensched::convert {

inline constexpr std::string_view kUnlabelledModel = "unlabelled";
inline constexpr std::string_view kHamiGpuMemResource = "nvidia.com/gpumem";
inline constexpr std::string_view kHamiGpuCoresResource = "nvidia.com/gpucores";
inline constexpr std::string_view kGpuMemoryLabel = "nvidia.com/gpu.memory";  // MiB, by GFD

// `models`: --gpu-model's names for the dump's GPU models (gpu_names.hpp).
Result<ConvertOutput> convert_kubectl(const SourceText& nodes,
                                      const std::optional<SourceText>& pods,
                                      const GpuModelMap& models = {});

// The lines on which the elements of the top-level "items" array of JSON text start (for
// "file:line" messages; nlohmann::json keeps no positions).
std::vector<std::size_t> item_lines(std::string_view json_text);

}  // namespace greensched::convert
