// The node types of a fleet, for the tightened bound: a type is a node shape (CPU, memory, GPU
// count and model) wherever it stands; per site, the GPUs and CPU cores each type holds. A
// pod fits a type where an empty node of it takes the pod (the scheduler's filter, as
// fits_ever in placement_preview.hpp): enough CPU, memory, GPUs and a GPU model it allows.
#pragma once

#include <cstdint>
#include <vector>

#include "greensched/core/node.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/multi/fleet.hpp"

namespace greensched::multi {

struct FleetNodeTypes {
  std::vector<NodeSpec> types;            // one node of each shape (its name: the first's)
  std::vector<std::vector<double>> gpus;  // per site and type, whole GPUs
  std::vector<double> site_cores;         // per site, CPU cores of all its nodes
};

// Errors: more than 32 node shapes with GPUs and without (a job's types are a 32-bit mask).
Result<FleetNodeTypes> fleet_node_types(const Fleet& fleet);

// Bit t: `pod` fits an empty node of type t (a pod without GPUs: any with its CPU and memory).
uint32_t fitting_types(const FleetNodeTypes& types, const PodSpec& pod);

}  // namespace greensched::multi
