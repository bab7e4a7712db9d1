// The least power a pod can add to a node, and the GPUs that achieve it (PWR's rule, shared
// by the PWR policy and the energy-aware FGD). Only two things change with a placement: the
// CPU sockets (the same whichever GPU is chosen) and the GPUs' draw. Under the PWR GPU rule a
// sharing pod's best GPU is the first fitting GPU already in use (no GPU powers up), else the
// first fully free one; under the proportional rule a pod adds its share x (max - idle)
// wherever it goes, so no GPU is preferred (mask 0: let the caller's rule pick).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::policy {

struct PowerDelta {
  double watts = 0;  // IT watts added, >= 0
  GpuMask gpus = 0;  // for a sharing pod under the PWR rule; else 0
};

// `pod` must fit on `node`.
PowerDelta least_power_increase(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                                const power::NodePower& figures);

// An id per node, equal for nodes whose figures are equal in everything
// least_power_increase reads (the numbers, not the names): the node tag of the policies that
// score power (Policy::node_class_tag).
std::vector<uint32_t> power_profile_ids(std::span<const power::NodePower> figures);

}  // namespace greensched::policy
