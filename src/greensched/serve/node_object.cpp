#include "greensched/serve/node_object.hpp"

#include <optional>

#include <fmt/format.h>

#include "greensched/core/resources.hpp"
#include "greensched/serve/json_fields.hpp"
#include "greensched/serve/pod_request.hpp"
#include "greensched/serve/quantity.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

constexpr std::string_view kProductLabel = kGpuProductKey;

// A resource of status.allocatable, else status.capacity; -1 when neither has it.
Result<int64_t> node_resource(const json& status, std::string_view resource, int64_t scale,
                              const std::string& where) {
  for (const char* list : {"allocatable", "capacity"}) {
    const json* m = find_field(status, list);
    if (m == nullptr) continue;
    if (!m->is_object()) return Error{fmt::format("{}.status.{}: must be an object", where, list)};
    auto it = m->find(resource);
    if (it == m->end() || it->is_null()) continue;
    auto q = quantity_from_json(*it, scale);
    if (!q.ok())
      return Error{fmt::format("{}.status.{}[{}]: {}", where, list, resource, q.error())};
    if (q.value() < 0) {
      return Error{fmt::format("{}.status.{}[{}]: negative", where, list, resource)};
    }
    return q.value();
  }
  return int64_t{-1};
}

}  // namespace

Result<std::string> node_name(const json& node) {
  if (!node.is_object()) return Error{"Node: must be an object"};
  const json* metadata = find_field(node, "metadata");
  if (metadata == nullptr || !metadata->is_object()) return Error{"Node.metadata: missing"};
  auto name = required_string(*metadata, "name", "Node.metadata.");
  if (!name.ok()) return Error{name.error()};
  if (name.value().size() > 253) return Error{"Node.metadata.name: longer than 253 characters"};
  return std::move(name.value());
}

Result<NodeInfo> parse_node(const json& node) {
  auto name = node_name(node);
  if (!name.ok()) return Error{name.error()};
  NodeInfo out;
  out.name = std::move(name.value());
  const std::string where = fmt::format("Node {}", out.name);
  const json* status = find_field(node, "status");
  if (status == nullptr || !status->is_object()) {
    return Error{fmt::format("{}: status missing (no allocatable resources)", where)};
  }
  auto cpu = node_resource(*status, "cpu", 1000, where);
  if (!cpu.ok()) return Error{cpu.error()};
  auto mem = node_resource(*status, "memory", 1, where);
  if (!mem.ok()) return Error{mem.error()};
  if (cpu.value() < 0 || mem.value() < 0) {
    return Error{fmt::format("{}: status.allocatable has no cpu or memory", where)};
  }
  if (const json* spec = find_field(node, "spec"); spec != nullptr && spec->is_object()) {
    if (const json* u = find_field(*spec, "unschedulable"); u != nullptr) {
      if (!u->is_boolean())
        return Error{fmt::format("{}: spec.unschedulable must be a boolean", where)};
      out.cordoned = u->get<bool>();
    }
  }
  out.cpu_milli = cpu.value();
  out.memory_mib = mem.value() / (int64_t{1} << 20);  // allocatable rounds down
  auto gpus = node_resource(*status, kGpuCountResource, 1, where);
  if (!gpus.ok()) return Error{gpus.error()};
  int64_t gpu_count = gpus.value();
  if (gpu_count < 0) {
    auto nvidia = node_resource(*status, kHamiGpuResource, 1, where);
    if (!nvidia.ok()) return Error{nvidia.error()};
    gpu_count = nvidia.value();
  }
  if (gpu_count > kMaxGpusPerNode) {
    return Error{fmt::format("{}: {} GPUs; at most {} per node are supported", where, gpu_count,
                             kMaxGpusPerNode)};
  }
  out.gpu_count = gpu_count < 0 ? 0 : static_cast<int>(gpu_count);
  if (out.gpu_count > 0) {
    const json* metadata = find_field(node, "metadata");
    const json* labels = find_field(*metadata, "labels");
    if (labels != nullptr && !labels->is_object()) {
      return Error{fmt::format("{}: metadata.labels must be an object", where)};
    }
    for (std::string_view key : {kGpuModelKey, kProductLabel}) {
      if (labels == nullptr) break;
      auto it = labels->find(key);
      if (it != labels->end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
        out.gpu_model = it->get<std::string>();
        break;
      }
    }
    if (out.gpu_model.empty()) {
      return Error{
          fmt::format("{}: has {} GPU(s) but no {} label", where, out.gpu_count, kGpuModelKey)};
    }
    if (out.gpu_model.size() > 64) return Error{fmt::format("{}: GPU model name too long", where)};
  }
  return out;
}

Result<std::vector<NodeInfo>> parse_node_list(const json& list) {
  const json* items = find_field(list, "items");
  if (items == nullptr || !items->is_array())
    return Error{"NodeList.items: missing or not an array"};
  std::vector<NodeInfo> out;
  for (std::size_t i = 0; i < items->size(); ++i) {
    auto n = parse_node((*items)[i]);
    if (!n.ok()) return Error{fmt::format("NodeList.items[{}]: {}", i, n.error())};
    out.push_back(std::move(n.value()));
  }
  return out;
}

Result<NodeSpec> to_node_spec(const NodeInfo& info, GpuModelRegistry& models,
                              std::string_view source) {
  NodeSpec spec;
  spec.name = info.name;
  spec.cpu_milli = info.cpu_milli;
  spec.memory_mib = info.memory_mib;
  spec.gpu_count = info.gpu_count;
  if (info.gpu_count > 0) {
    // A known model notes where, if no node named it yet; a new one takes an id if one is free.
    std::optional<GpuModelId> id;
    if (models.size() < kUnknownModelBit || models.find(info.gpu_model)) {
      id = models.intern(info.gpu_model, source.empty()
                                             ? fmt::format("Node {}", info.name)
                                             : fmt::format("{}: Node {}", source, info.name));
    }
    if (!id) {
      return Error{fmt::format("node {}: GPU model {}: too many distinct GPU models", info.name,
                               info.gpu_model)};
    }
    spec.model = *id;
  }
  return spec;
}

}  // namespace greensched::serve
