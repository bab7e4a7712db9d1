// Where the dispatch service reads a worker cluster's state: its nodes and the pods bound to
// them, from the cluster's Kubernetes API (GET /api/v1/nodes and /api/v1/pods, the lists
// `kubectl get nodes,pods -A -o json` prints) or, without an API, the fleet file's node list
// with nothing bound. The lists become a serve::ClusterState (the extender's state type) with
// the site's policy: pods hold the GPUs their alibabacloud.com/gpu-index annotation names (as
// the greensched extender binds them), else the first GPUs with room. Finished pods
// (Succeeded, Failed) and unbound ones hold nothing. GPU models are interned into one registry
// shared by every site, so a request's model set means the same at each.
//
// A read has a deadline: the kube source gives each request only the time left until it
// (connection, write and read timeouts), and fails with "no answer within ..." past it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/status.hpp"
#include "greensched/serve/cluster_state.hpp"
#include "greensched/serve/kube_binder.hpp"

namespace greensched::dispatch {

// A v1.NodeList and a v1.PodList to a state. Cordoned nodes (spec.unschedulable) are left out:
// no new work goes there. Pods on unknown or cordoned nodes, or that no longer fit (the API's
// view moved on between the two reads), are skipped and counted in `skipped`.
Result<std::unique_ptr<serve::ClusterState>> state_from_lists(const nlohmann::json& nodes,
                                                              const nlohmann::json& pods,
                                                              GpuModelRegistry& models,
                                                              const serve::StateOptions& options,
                                                              int* skipped = nullptr);

using Deadline = std::chrono::steady_clock::time_point;

class ClusterSource {
 public:
  virtual ~ClusterSource() = default;
  // Where it reads, for messages ("https://10.0.0.1:6443", "fleet file").
  virtual std::string describe() const = 0;
  // The state now, interning GPU models into `models`; should return by `deadline`.
  virtual Result<std::unique_ptr<serve::ClusterState>> read(GpuModelRegistry& models,
                                                            const serve::StateOptions& options,
                                                            Deadline deadline) = 0;
};

// The cluster's API server (bearer token, CA as serve/kube_binder.hpp resolves them).
std::unique_ptr<ClusterSource> make_kube_source(serve::KubeApiOptions api);
// Fixed nodes, nothing bound (a fleet file's site).
std::unique_ptr<ClusterSource> make_static_source(std::vector<NodeSpec> nodes,
                                                  const GpuModelRegistry& node_models);

}  // namespace greensched::dispatch
