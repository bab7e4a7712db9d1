#include "greensched/trace/workload.hpp"

#include <map>

#include "greensched/trace/openb_reader.hpp"

namespace greensched::trace {

uint32_t assign_shape_ids(std::vector<PodSpec>& pods) {
  std::map<PodShape, uint32_t> ids;
  for (PodSpec& pod : pods) {
    auto [it, inserted] = ids.try_emplace(pod.shape_fields(), static_cast<uint32_t>(ids.size()));
    pod.shape = it->second;
  }
  return static_cast<uint32_t>(ids.size());
}

}  // namespace greensched::trace

namespace greensched::trace {

Result<Workload> load_openb_workload(const std::string& nodes_path, const std::string& pods_path) {
  Workload w;
  auto nodes = read_openb_nodes(nodes_path, w.models);
  if (!nodes.ok()) return Error{nodes.error()};
  auto pods = read_openb_pods(pods_path, w.models);
  if (!pods.ok()) return Error{pods.error()};
  w.nodes = std::move(nodes.value());
  w.pods = std::move(pods.value());
  w.shape_count = assign_shape_ids(w.pods);
  w.nodes_source = nodes_path;
  w.pods_source = pods_path;
  return w;
}

}  // namespace greensched::trace
