// The kube-scheduler extender HTTP protocol (k8s.io/kube-scheduler/extender/v1), plus
// greensched's own release and resync verbs. Keys are Go field names ("Pod", "NodeNames",
// "FailedNodes", ...), read case-insensitively as Go's encoding/json does.
//   filter, prioritize  ExtenderArgs {Pod: v1.Pod, Nodes: v1.NodeList | null,
//                       NodeNames: [string] | null}; Nodes when the extender is configured
//                       nodeCacheCapable: false, NodeNames when true;
//   filter reply        ExtenderFilterResult {Nodes, NodeNames, FailedNodes {name: message},
//                       FailedAndUnresolvableNodes {name: message}, Error};
//   prioritize reply    HostPriorityList [{Host, Score}], Score 0..10;
//   bind                ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node} ->
//                       ExtenderBindingResult {Error} (+ greensched's Annotations, which
//                       kube-scheduler ignores);
//   release             {PodName, PodNamespace, PodUID} -> {Error, released};
//   resync              {Pods: [{namespace, name, uid, node, cpu, memory, gpu_milli,
//                       gpu_count, gpu_indices, gpu_models, movable}]} (or a bare array) ->
//                       {Error, added, removed, unchanged, errors [{pod, error}]}.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/resources.hpp"
#include "greensched/core/status.hpp"
#include "greensched/serve/node_object.hpp"
#include "greensched/serve/pod_request.hpp"

namespace greensched::serve {

// The extender's highest priority (MaxExtenderPriority in kube-scheduler).
inline constexpr int64_t kMaxExtenderScore = 10;

struct NodeItem {
  std::string name;
  std::optional<NodeInfo> info;  // nullopt when the object is malformed (see `error`)
  std::string error;
  nlohmann::json object;  // the object as sent, echoed back when it passes the filter
};

struct ExtenderArgs {
  PodRequest pod;
  bool node_objects = false;            // Nodes was given (nodeCacheCapable: false)
  std::vector<std::string> node_names;  // always filled, in request order
  std::vector<NodeItem> nodes;          // when node_objects, parallel to node_names
};

Result<ExtenderArgs> parse_extender_args(nlohmann::json body);

struct FilterResult {
  std::vector<std::size_t> passed;  // indices into the request's nodes, in request order
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> failed_unresolvable;
  // More failed nodes, as positions in the request's node_names with a static reason (the
  // extender's form: no copy of the name). The reply lists them as if each were put into
  // `failed` or `failed_unresolvable` by name, in request order.
  struct FailedNode {
    uint32_t position = 0;
    bool unresolvable = false;
    std::string_view reason;  // a static phrase (filter_message.hpp)
  };
  std::vector<FailedNode> failed_nodes;
  // Optional: every position of node_names, ordered by name (stable); saves sorting.
  std::shared_ptr<const std::vector<uint32_t>> name_order;
  std::map<std::string, int64_t> reason_counts;  // per-node reason -> nodes (for /metrics)
  std::string error;
};

// ExtenderFilterResult in the request's mode (node objects or names), as JSON text.
std::string filter_result_text(const FilterResult& result, const ExtenderArgs& args);
// ExtenderFilterResult with only Error set.
nlohmann::json filter_error_json(const std::string& error);

struct HostPriority {
  std::string host;
  int64_t score = 0;
};
// HostPriorityList as JSON text.
std::string priority_list_text(const std::vector<HostPriority>& list);

struct BindingArgs {
  PodRef pod;
  std::string node;
};
Result<BindingArgs> parse_binding_args(const nlohmann::json& body);
// Release takes the same pod fields as a binding, without the node.
Result<PodRef> parse_release_args(const nlohmann::json& body);

// One bound pod as a controller reports it for resync.
struct ResyncPod {
  PodRequest request;
  std::string node;
  std::optional<GpuMask> gpus;  // nullopt: let the policy pick the GPUs on the node
};
Result<std::vector<ResyncPod>> parse_resync(const nlohmann::json& body);

}  // namespace greensched::serve
