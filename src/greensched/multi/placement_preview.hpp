// What a job adds to a site where the site's own policy would place it: the facility watts it
// is expected to draw over its run and the change of the site's fragmentation. One code path
// for the fleet simulator's sites (fleet_view.cpp) and for live clusters (dispatch/), so that
// an agent prices a job alike in simulation and live.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::multi {

struct PlacementCost {
  // Facility watts: what placing it adds now (waking the node counts from 0 W), and at least
  // its share of the node's full power (FleetView::marginal_watts says why).
  double watts = 0;
  double frag_milli = 0;  // change of the site's GPU fragmentation, GPU milli
};

// `pod` on `node` taking `gpus`; `waking`: the node is powered down and wakes for it (its
// idle power counts then). `pue` turns IT watts into facility watts. `frag_before`: the
// node's scaled fragmentation now where the caller knows it (FragmentationModel's interned
// state of the node), else it is computed.
PlacementCost placement_cost(const Cluster& cluster, const std::vector<power::NodePower>& figures,
                             const frag::FragmentationModel& frag, const PodSpec& pod,
                             NodeIndex node, GpuMask gpus, bool waking, double pue,
                             std::optional<int64_t> frag_before = std::nullopt);

// Whether `pod` fits a node of the cluster now (the scheduler's filter), and whether it could
// run on one at all (an empty node of enough CPU, memory, GPUs and an allowed model).
bool fits_now(const Cluster& cluster, const PodSpec& pod);
bool fits_ever(const Cluster& cluster, const PodSpec& pod);
// Whether an empty node of this shape could run `pod`: enough CPU, memory and GPUs, of a model
// the pod allows.
bool fits_empty_node(const NodeSpec& node, const PodSpec& pod);

// IT watts of `pod`'s share of the full power of the least-drawing node type that can host it
// (+inf where none can): what a run starting later costs, whatever the cluster holds now.
double least_floor_watts(const Cluster& cluster, const std::vector<power::NodePower>& figures,
                         const PodSpec& pod);

// The GPUs any rule takes on an empty node: the first one (a share) or the first num_gpu.
GpuMask first_gpus(const PodSpec& pod);

}  // namespace greensched::multi
