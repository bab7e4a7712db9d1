// The extender's view of the cluster: the nodes by name, every bound pod by namespace/name
// with the GPUs it holds, and what follows from them (core::Cluster's allocation truth, the
// policy, cluster fragmentation and modelled power). Every change goes through core::Cluster,
// so an overcommitting change fails and leaves nothing changed. Not thread-safe: the
// Extender serialises access with its mutex.
//
// Changes are described by journal entries (JSON, one per change) so that replaying the
// journal rebuilds the state exactly:
//   {"op":"node", name, cpu_milli, memory_mib, gpu_count, gpu_model}
//   {"op":"bind", ns, name, uid, node, cpu_milli, memory_mib, num_gpu, gpu_milli,
//    gpu_models [..], gpu_index "0-1", movable true (only when annotated movable)}
//   {"op":"release", ns, name, uid}
//   {"op":"snapshot", nodes [node entries], pods [bind entries]}
//
// Assumed pods (kube-scheduler's assume cache, on the extender's side): a pod the extender
// expects to be bound to a node holds its room in core::Cluster, so that filters and scores
// see it, but it is not bound: it is in no journal entry, snapshot or pod list, and it is
// either confirmed (becomes bound, same node and GPUs) or forgotten.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/policy.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/serve/node_object.hpp"
#include "greensched/serve/pod_request.hpp"

namespace greensched::serve {

struct BoundPod {
  PodRequest request;
  PodSpec spec;  // the request as the policies see it
  std::string node;
  GpuMask gpus = 0;
  PodId id = 0;
};

// How a `greensched serve` user gives a power model, for power::check_gpu_models' errors.
inline constexpr std::string_view kPowerModelHint = "\"power_model\": FILE in the --config file";

struct StateOptions {
  std::string policy = "fgd";   // any spec of policy::make_policy, e.g. "pwr:200+fgd:800"
  std::string gpu_select;       // in a mix: whose rule picks GPUs ("" = default)
  frag::TargetWorkload target;  // FGD's target workload
  power::PowerModel power_model = power::PowerModel::builtin();
  uint64_t seed = 42;
};

class ClusterState {
 public:
  // Fails on duplicate node names, a bad policy spec, or a node whose GPU model has no power
  // figures (power::check_gpu_models: the rule `greensched simulate` follows too).
  static Result<std::unique_ptr<ClusterState>> create(GpuModelRegistry models,
                                                      std::vector<NodeSpec> nodes,
                                                      StateOptions options);

  const Cluster& cluster() const { return *cluster_; }
  const GpuModelRegistry& models() const { return models_; }
  const power::PowerModel& power_model() const { return options_.power_model; }
  std::optional<NodeIndex> find_node(std::string_view name) const;
  // Nodes added after start (for snapshots).
  const std::vector<NodeSpec>& added_nodes() const { return added_; }

  // A node spec from a Node object; interns its GPU model (fails when the registry is full).
  Result<NodeSpec> node_spec(const NodeInfo& info);
  // Adds a node; fails if the name exists or its GPU model has no power figures. Rebuilds the
  // cluster, policy and trackers.
  Status add_node(NodeSpec spec);
  // Adds the nodes in order and rebuilds once; fails, adding none, if a name exists or repeats
  // or a GPU model has no power figures.
  Status add_nodes(std::vector<NodeSpec> specs);

  // The request as the policies see it: models resolved (an unknown model matches no node)
  // and a shape id for the policies' caches.
  PodSpec pod_spec(const PodRequest& request);

  const BoundPod* find_pod(const std::string& key) const;
  const std::map<std::string, BoundPod>& pods() const { return pods_; }
  // Binds the pod to `node` on exactly `gpus`; fails, changing nothing, if the pod is already
  // bound, the node is unknown, or it would overcommit.
  Status bind(const PodRequest& request, std::string_view node, GpuMask gpus);
  Status release(const std::string& key);
  // Marks a bound pod movable or not (its greensched.io/movable annotation changed); its room
  // is unchanged.
  Status set_movable(const std::string& key, bool movable);

  // Holds the pod's room on `node` (exactly `gpus`) without binding it; fails, changing
  // nothing, if the pod is bound or assumed, the node is unknown, or it would overcommit.
  Status assume(const PodRequest& request, std::string_view node, GpuMask gpus);
  const BoundPod* find_assumed(const std::string& key) const;
  const std::map<std::string, BoundPod>& assumed() const { return assumed_; }
  // Gives the room back.
  Status forget_assumed(const std::string& key);
  // Makes the assumption a binding on the same node and GPUs (the UID given, when not empty).
  Status confirm_assumed(const std::string& key, const std::string& uid);

  policy::Policy& policy() { return *policy_; }
  // A new policy of the same spec over a fresh fragmentation model: the decisions policy()
  // makes, with none of its caches, for planning on a copy of the cluster (GET /v1/defrag)
  // after the locks are released.
  Result<std::unique_ptr<policy::Policy>> planning_policy() const;
  uint64_t seed() const { return options_.seed; }
  const frag::FragmentationModel& frag_model() const { return *frag_model_; }
  const std::vector<power::NodePower>& node_figures() const { return *node_power_; }
  Rng& rng() { return rng_; }

  double fragmentation_gpu_milli() const { return fragmentation_->gpu_milli(); }
  double node_power_watts(NodeIndex node) const { return power_->node_watts(node); }
  double power_watts() const { return power_->watts(); }
  double pue() const { return pue_; }
  const std::string& policy_spec() const { return options_.policy; }

  // Journal entries of changes, and replay of one entry.
  static std::string node_entry(const NodeSpec& spec, const GpuModelRegistry& models);
  static std::string bind_entry(const BoundPod& pod);
  static std::string release_entry(const PodRef& ref);
  std::string snapshot_entry() const;
  Status apply_entry(const std::string& entry);

  // The pod as JSON for GET pods/<ns>/<name> (with its gpu-index annotation).
  static nlohmann::json pod_json(const BoundPod& pod);

 private:
  ClusterState(GpuModelRegistry models, std::vector<NodeSpec> nodes, StateOptions options);
  // Builds cluster, trackers and policy from specs_ and re-places every bound pod.
  Status rebuild();
  Status apply_json(const nlohmann::json& entry);
  // Allocates the pod on `node` (not yet in pods_ or assumed_).
  Result<BoundPod> place(const PodRequest& request, std::string_view node, GpuMask gpus);
  void free_room(const BoundPod& pod);

  GpuModelRegistry models_;
  std::vector<NodeSpec> specs_;
  std::vector<NodeSpec> added_;
  std::unordered_map<std::string, NodeIndex> node_index_;
  StateOptions options_;
  double pue_ = 1.0;

  std::unique_ptr<Cluster> cluster_;
  std::shared_ptr<frag::FragmentationModel> frag_model_;
  std::unique_ptr<frag::ClusterFragmentation> fragmentation_;
  std::shared_ptr<const std::vector<power::NodePower>> node_power_;
  std::unique_ptr<power::ClusterPower> power_;
  std::unique_ptr<policy::Policy> policy_;
  Rng rng_;

  std::map<std::string, BoundPod> pods_;
  std::map<std::string, BoundPod> assumed_;
  std::vector<PodId> free_ids_;
  PodId next_id_ = 0;
  std::map<PodShape, uint32_t> shapes_;
};

}  // namespace greensched::serve
