#include "greensched/trace/builtin_workload.hpp"

#include <fmt/format.h>

namespace greensched::trace {
namespace {

struct BuiltinNodeType {
  const char* model;
  int gpus;
  int64_t cpu_milli;
  int64_t memory_mib;
  int count;
};

struct BuiltinPodShape {
  int64_t cpu_milli;
  int64_t memory_mib;
  int num_gpu;
  int32_t gpu_milli;
  int count;
};

#include "greensched/trace/builtin_tables.inc"

}  // namespace

Workload builtin_openb_workload() {
  Workload w;
  w.nodes_source = "built-in (openb GPU node types)";
  w.pods_source = "built-in (openb default pod shapes)";
  for (const BuiltinNodeType& t : kBuiltinNodeTypes) {
    const GpuModelId model = *w.models.intern(t.model);
    for (int i = 0; i < t.count; ++i) {
      w.nodes.push_back(NodeSpec{fmt::format("builtin-node-{:04}", w.nodes.size()), t.cpu_milli,
                                 t.memory_mib, t.gpus, model});
    }
  }
  for (const BuiltinPodShape& s : kBuiltinPodShapes) {
    for (int i = 0; i < s.count; ++i) {
      PodSpec pod;
      pod.name = fmt::format("builtin-pod-{:04}", w.pods.size());
      pod.cpu_milli = s.cpu_milli;
      pod.memory_mib = s.memory_mib;
      pod.num_gpu = s.num_gpu;
      pod.gpu_milli = s.gpu_milli;
      w.pods.push_back(std::move(pod));
    }
  }
  w.shape_count = assign_shape_ids(w.pods);
  return w;
}

}  // namespace greensched::trace
