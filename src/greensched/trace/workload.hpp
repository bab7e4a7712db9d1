// What a run consumes: the nodes of a cluster and a list of pods, with the GPU model names
// they refer to. Pods carry a dense shape id so that per-shape caches can be flat arrays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/node.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"

namespace greensched::trace {

struct Workload {
  GpuModelRegistry models;
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;
  uint32_t shape_count = 0;  // pods[i].shape < shape_count
  std::string nodes_source;  // where nodes and pods came from, for reports
  std::string pods_source;
};

// Sets pods[i].shape to a dense id of (cpu_milli, num_gpu, gpu_milli, gpu_spec), numbered in
// order of first appearance; returns the number of distinct shapes.
uint32_t assign_shape_ids(std::vector<PodSpec>& pods);

}  // namespace greensched::trace

namespace greensched::trace {

// Reads an openb node list and pod list into a workload with shape ids assigned.
Result<Workload> load_openb_workload(const std::string& nodes_path, const std::string& pods_path);

}  // namespace greensched::trace
