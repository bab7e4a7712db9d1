#include "greensched/serve/extender_protocol.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "greensched/serve/gpu_index.hpp"
#include "greensched/serve/json_fields.hpp"
#include "greensched/serve/json_text.hpp"
#include "greensched/serve/quantity.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxNodesPerRequest = 100000;
constexpr std::size_t kMaxResyncPods = 1000000;

Result<int64_t> amount(const json& item, std::string_view key, int64_t scale,
                       const std::string& where, int64_t absent) {
  const json* v = find_field(item, key);
  if (v == nullptr) return absent;
  auto q = quantity_from_json(*v, scale);
  if (!q.ok()) return Error{fmt::format("{}.{}: {}", where, key, q.error())};
  if (q.value() < 0) return Error{fmt::format("{}.{}: negative", where, key)};
  return q.value();
}

Result<std::optional<GpuMask>> gpu_indices(const json& item, const std::string& where) {
  const json* v = find_field(item, "gpu_indices");
  if (v == nullptr) return std::optional<GpuMask>();
  if (v->is_string()) {
    auto m = parse_gpu_index(v->get_ref<const std::string&>());
    if (!m.ok()) return Error{fmt::format("{}.gpu_indices: {}", where, m.error())};
    return std::optional<GpuMask>(m.value());
  }
  if (!v->is_array()) return Error{fmt::format("{}.gpu_indices: must be \"0-1\" or [0, 1]", where)};
  GpuMask mask = 0;
  for (const json& g : *v) {
    if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() >= kMaxGpusPerNode) {
      return Error{fmt::format("{}.gpu_indices: each index must be an integer 0..{}", where,
                               kMaxGpusPerNode - 1)};
    }
    const GpuMask bit = GpuMask{1} << g.get<int>();
    if (mask & bit) return Error{fmt::format("{}.gpu_indices: index {} repeated", where, g.dump())};
    mask |= bit;
  }
  return std::optional<GpuMask>(mask);
}

Result<std::vector<std::string>> gpu_models(const json& item, const std::string& where) {
  std::vector<std::string> out;
  const json* v = find_field(item, "gpu_models");
  if (v == nullptr) return out;
  if (v->is_string()) {
    std::string_view text = v->get_ref<const std::string&>();
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find_first_of("|,", start);
      if (end == std::string_view::npos) end = text.size();
      if (end > start) out.emplace_back(text.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
  if (!v->is_array()) return Error{fmt::format("{}.gpu_models: must be a string or array", where)};
  for (const json& m : *v) {
    if (!m.is_string()) return Error{fmt::format("{}.gpu_models: names must be strings", where)};
    out.push_back(m.get<std::string>());
  }
  return out;
}

}  // namespace

Result<ExtenderArgs> parse_extender_args(json body) {
  if (!body.is_object()) {
    return Error{fmt::format("ExtenderArgs: must be a JSON object, not {}", body.type_name())};
  }
  ExtenderArgs args;
  const json* pod = find_field(body, "Pod");
  if (pod == nullptr) return Error{"ExtenderArgs.Pod: missing"};
  auto request = parse_pod(*pod);
  if (!request.ok()) return Error{request.error()};
  args.pod = std::move(request.value());

  json* nodes = const_cast<json*>(find_field(body, "Nodes"));
  const json* names = find_field(body, "NodeNames");
  if (nodes != nullptr) {
    if (!nodes->is_object()) return Error{"ExtenderArgs.Nodes: must be a v1.NodeList object"};
    json* items = const_cast<json*>(find_field(*nodes, "items"));
    if (items != nullptr && !items->is_array()) {
      return Error{"ExtenderArgs.Nodes.items: must be an array"};
    }
    args.node_objects = true;
    if (items != nullptr) {
      if (items->size() > kMaxNodesPerRequest) {
        return Error{fmt::format("ExtenderArgs.Nodes: more than {} nodes", kMaxNodesPerRequest)};
      }
      for (std::size_t i = 0; i < items->size(); ++i) {
        json& object = (*items)[i];
        auto name = node_name(object);
        if (!name.ok()) {
          return Error{fmt::format("ExtenderArgs.Nodes.items[{}]: {}", i, name.error())};
        }
        NodeItem item;
        item.name = name.value();
        auto info = parse_node(object);
        if (info.ok()) {
          item.info = std::move(info.value());
        } else {
          item.error = info.error();
        }
        item.object = std::move(object);
        args.node_names.push_back(std::move(name.value()));
        args.nodes.push_back(std::move(item));
      }
    }
  } else if (names != nullptr) {
    if (!names->is_array()) return Error{"ExtenderArgs.NodeNames: must be an array of strings"};
    if (names->size() > kMaxNodesPerRequest) {
      return Error{fmt::format("ExtenderArgs.NodeNames: more than {} nodes", kMaxNodesPerRequest)};
    }
    args.node_names.reserve(names->size());
    for (const json& n : *names) {
      if (!n.is_string() || n.get_ref<const std::string&>().empty()) {
        return Error{"ExtenderArgs.NodeNames: every entry must be a non-empty string"};
      }
      args.node_names.push_back(n.get<std::string>());
    }
  } else {
    return Error{"ExtenderArgs: neither Nodes nor NodeNames given"};
  }
  return args;
}

namespace {

// One failed node of the reply: its name, its message, whether it is unresolvable.
struct FailedEntry {
  std::string_view name;
  std::string_view message;
  bool unresolvable = false;
};

// The failed nodes of `result` in the order of the reply: by name, each name once per map
// (for a name in both, the unresolvable entry first), as the two maps merged would give.
std::vector<FailedEntry> failed_entries(const FilterResult& result, const ExtenderArgs& args) {
  // The positional ones, stable-sorted by name (request order among equal names).
  std::vector<FailedEntry> positional;
  positional.reserve(result.failed_nodes.size());
  const auto& names = args.node_names;
  if (result.name_order && result.name_order->size() == names.size()) {
    constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> at(names.size(), kNone);
    for (uint32_t k = 0; k < result.failed_nodes.size(); ++k)
      at[result.failed_nodes[k].position] = k;
    for (uint32_t p : *result.name_order) {
      if (at[p] == kNone) continue;
      const FilterResult::FailedNode& f = result.failed_nodes[at[p]];
      positional.push_back(FailedEntry{names[p], f.reason, f.unresolvable});
    }
  } else {
    for (const FilterResult::FailedNode& f : result.failed_nodes) {
      positional.push_back(FailedEntry{names[f.position], f.reason, f.unresolvable});
    }
    std::stable_sort(positional.begin(), positional.end(),
                     [](const FailedEntry& a, const FailedEntry& b) { return a.name < b.name; });
  }
  // A map keeps one entry per name, the last one put: of each run of equal names, the last
  // unresolvable entry, then the last other one.
  std::vector<FailedEntry> merged_positional;
  merged_positional.reserve(positional.size());
  for (std::size_t i = 0; i < positional.size();) {
    std::size_t j = i;
    const FailedEntry* last_unresolvable = nullptr;
    const FailedEntry* last_failed = nullptr;
    for (; j < positional.size() && positional[j].name == positional[i].name; ++j) {
      (positional[j].unresolvable ? last_unresolvable : last_failed) = &positional[j];
    }
    if (last_unresolvable != nullptr) merged_positional.push_back(*last_unresolvable);
    if (last_failed != nullptr) merged_positional.push_back(*last_failed);
    i = j;
  }
  if (result.failed.empty() && result.failed_unresolvable.empty()) return merged_positional;
  // The two maps merged (for a name in both, the unresolvable entry first).
  std::vector<FailedEntry> from_maps;
  from_maps.reserve(result.failed.size() + result.failed_unresolvable.size());
  auto x = result.failed.begin();
  auto y = result.failed_unresolvable.begin();
  while (x != result.failed.end() || y != result.failed_unresolvable.end()) {
    const bool take_failed =
        y == result.failed_unresolvable.end() || (x != result.failed.end() && x->first < y->first);
    const auto& [name, message] = take_failed ? *x++ : *y++;
    from_maps.push_back(FailedEntry{name, message, !take_failed});
  }
  if (merged_positional.empty()) return from_maps;
  // For a name in both lists, the unresolvable entries first, as above.
  std::vector<FailedEntry> out;
  out.reserve(merged_positional.size() + from_maps.size());
  auto before = [](const FailedEntry& a, const FailedEntry& b) {
    return a.name < b.name || (a.name == b.name && a.unresolvable && !b.unresolvable);
  };
  std::merge(merged_positional.begin(), merged_positional.end(), from_maps.begin(), from_maps.end(),
             std::back_inserter(out), before);
  return out;
}

}  // namespace

std::string filter_result_text(const FilterResult& result, const ExtenderArgs& args) {
  std::string out;
  out.reserve(256 + args.node_names.size() * 96);
  const std::vector<FailedEntry> failed = failed_entries(result, args);
  // Writes the entries (only the unresolvable ones when `unresolvable_only`) as an object.
  auto append_failed = [&out, &failed](bool unresolvable_only) {
    out += '{';
    bool first = true;
    for (const FailedEntry& e : failed) {
      if (unresolvable_only && !e.unresolvable) continue;
      if (!first) out += ',';
      first = false;
      append_json_string(out, e.name);
      out += ':';
      append_json_string(out, e.message);
    }
    out += '}';
  };
  if (args.node_objects) {
    out += R"({"Nodes":{"apiVersion":"v1","kind":"NodeList","metadata":{},"items":[)";
    bool first = true;
    for (std::size_t i : result.passed) {
      if (!first) out += ',';
      first = false;
      out += args.nodes[i].object.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    out += R"(]},"NodeNames":null)";
  } else {
    out += R"({"Nodes":null,"NodeNames":[)";
    bool first = true;
    for (std::size_t i : result.passed) {
      if (!first) out += ',';
      first = false;
      append_json_string(out, args.node_names[i]);
    }
    out += ']';
  }
  // Unresolvable nodes are listed in FailedNodes too: kube-scheduler 1.20 reads only
  // FailedNodes, and later versions let FailedAndUnresolvableNodes take precedence for a node
  // in both, so every client counts every node that failed.
  out += R"(,"FailedNodes":)";
  append_failed(false);
  out += R"(,"FailedAndUnresolvableNodes":)";
  append_failed(true);
  out += R"(,"Error":)";
  append_json_string(out, result.error);
  out += '}';
  return out;
}

json filter_error_json(const std::string& error) {
  return json{{"Nodes", nullptr},
              {"NodeNames", nullptr},
              {"FailedNodes", json::object()},
              {"FailedAndUnresolvableNodes", json::object()},
              {"Error", error}};
}

std::string priority_list_text(const std::vector<HostPriority>& list) {
  std::string out;
  out.reserve(2 + list.size() * 40);
  out += '[';
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += ',';
    out += R"({"Host":)";
    append_json_string(out, list[i].host);
    out += R"(,"Score":)";
    out += std::to_string(list[i].score);
    out += '}';
  }
  out += ']';
  return out;
}

Result<PodRef> parse_release_args(const json& body) {
  if (!body.is_object()) return Error{"arguments: must be a JSON object"};
  PodRef ref;
  auto name = required_string(body, "PodName", "");
  if (!name.ok()) return Error{name.error()};
  ref.name = std::move(name.value());
  auto ns = optional_string(body, "PodNamespace", "");
  if (!ns.ok()) return Error{ns.error()};
  if (ns.value() && !ns.value()->empty()) ref.ns = std::move(*ns.value());
  auto uid = optional_string(body, "PodUID", "");
  if (!uid.ok()) return Error{uid.error()};
  if (uid.value()) ref.uid = std::move(*uid.value());
  if (ref.name.size() > 253 || ref.ns.size() > 253 || ref.uid.size() > 128) {
    return Error{"PodName, PodNamespace or PodUID too long"};
  }
  return ref;
}

Result<BindingArgs> parse_binding_args(const json& body) {
  auto ref = parse_release_args(body);
  if (!ref.ok()) return Error{fmt::format("ExtenderBindingArgs.{}", ref.error())};
  auto node = required_string(body, "Node", "ExtenderBindingArgs.");
  if (!node.ok()) return Error{node.error()};
  return BindingArgs{std::move(ref.value()), std::move(node.value())};
}

namespace {

// A v1.PodList as `kubectl get pods -A -o json` prints it: the bound, live GPU pods, with the
// GPUs of their alibabacloud.com/gpu-index annotation when they carry one.
Result<std::vector<ResyncPod>> parse_resync_pod_list(const json& items) {
  if (!items.is_array()) return Error{"resync: PodList items must be an array"};
  if (items.size() > kMaxResyncPods) return Error{"resync: too many pods"};
  std::vector<ResyncPod> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json& item = items[i];
    const std::string where = fmt::format("items[{}]", i);
    if (!item.is_object()) return Error{fmt::format("{}: must be an object", where)};
    const json* spec = find_field(item, "spec");
    if (spec == nullptr || !spec->is_object()) return Error{fmt::format("{}.spec: missing", where)};
    auto node = optional_string(*spec, "nodeName", where + ".spec.");
    if (!node.ok()) return Error{node.error()};
    if (!node.value() || node.value()->empty()) continue;  // not bound yet
    if (const json* status = find_field(item, "status"); status != nullptr && status->is_object()) {
      auto phase = optional_string(*status, "phase", where + ".status.");
      if (!phase.ok()) return Error{phase.error()};
      if (phase.value() && (*phase.value() == "Succeeded" || *phase.value() == "Failed")) {
        continue;  // finished: holds nothing
      }
    }
    auto request = parse_pod(item);
    if (!request.ok()) return Error{fmt::format("{}: {}", where, request.error())};
    if (request.value().num_gpu == 0) continue;  // the extender accounts for GPU pods only
    ResyncPod p;
    p.request = std::move(request.value());
    p.node = std::move(*node.value());
    const json* metadata = find_field(item, "metadata");
    if (const json* annotations = find_field(*metadata, "annotations");
        annotations != nullptr && annotations->is_object()) {
      if (const json* index = find_field(*annotations, kGpuIndexAnnotation)) {
        if (!index->is_string()) {
          return Error{fmt::format("{}.metadata.annotations[{}]: must be a string", where,
                                   kGpuIndexAnnotation)};
        }
        auto mask = parse_gpu_index(index->get_ref<const std::string&>());
        if (!mask.ok()) {
          return Error{fmt::format("{}.metadata.annotations[{}]: {}", where, kGpuIndexAnnotation,
                                   mask.error())};
        }
        p.gpus = mask.value();
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

Result<std::vector<ResyncPod>> parse_resync(const json& body) {
  const json* pods = &body;
  if (body.is_object() && find_field(body, "items") != nullptr) {
    return parse_resync_pod_list(*find_field(body, "items"));
  }
  if (body.is_object()) {
    pods = find_field(body, "Pods");
    if (pods == nullptr)
      return Error{"resync: Pods missing (give {\"Pods\": [...]}, or [] for none)"};
  }
  if (!pods->is_array()) return Error{"resync: Pods must be an array"};
  if (pods->size() > kMaxResyncPods) return Error{"resync: too many pods"};
  std::vector<ResyncPod> out;
  out.reserve(pods->size());
  for (std::size_t i = 0; i < pods->size(); ++i) {
    const json& item = (*pods)[i];
    const std::string where = fmt::format("Pods[{}]", i);
    if (!item.is_object()) return Error{fmt::format("{}: must be an object", where)};
    ResyncPod p;
    auto name = required_string(item, "name", where + ".");
    if (!name.ok()) return Error{name.error()};
    p.request.ref.name = std::move(name.value());
    auto ns = optional_string(item, "namespace", where + ".");
    if (!ns.ok()) return Error{ns.error()};
    if (ns.value() && !ns.value()->empty()) p.request.ref.ns = std::move(*ns.value());
    auto uid = optional_string(item, "uid", where + ".");
    if (!uid.ok()) return Error{uid.error()};
    if (uid.value()) p.request.ref.uid = std::move(*uid.value());
    auto node = required_string(item, "node", where + ".");
    if (!node.ok()) return Error{node.error()};
    p.node = std::move(node.value());

    auto cpu = amount(item, "cpu", 1000, where, -1);
    if (!cpu.ok()) return Error{cpu.error()};
    auto cpu_milli = amount(item, "cpu_milli", 1, where, 0);
    if (!cpu_milli.ok()) return Error{cpu_milli.error()};
    p.request.cpu_milli = cpu.value() >= 0 ? cpu.value() : cpu_milli.value();
    auto memory = amount(item, "memory", 1, where, -1);
    if (!memory.ok()) return Error{memory.error()};
    auto memory_mib = amount(item, "memory_mib", 1, where, 0);
    if (!memory_mib.ok()) return Error{memory_mib.error()};
    p.request.memory_mib = memory.value() >= 0 ? bytes_to_mib(memory.value()) : memory_mib.value();
    if (p.request.cpu_milli > kMaxPodCpuMilli || p.request.memory_mib > kMaxPodMemoryMib) {
      return Error{fmt::format("{}: cpu or memory out of range", where)};
    }
    auto count = amount(item, "gpu_count", 1, where, -1);
    if (!count.ok()) return Error{count.error()};
    auto milli = amount(item, "gpu_milli", 1, where, -1);
    if (!milli.ok()) return Error{milli.error()};
    if (Status s = normalise_gpu_request(count.value(), milli.value(), p.request, where); !s.ok()) {
      return Error{s.message()};
    }
    auto gpus = gpu_indices(item, where);
    if (!gpus.ok()) return Error{gpus.error()};
    p.gpus = gpus.value();
    auto models = gpu_models(item, where);
    if (!models.ok()) return Error{models.error()};
    p.request.gpu_models = std::move(models.value());
    if (const json* movable = find_field(item, "movable"); movable != nullptr) {
      if (!movable->is_boolean()) return Error{fmt::format("{}.movable: must be a boolean", where)};
      p.request.movable = movable->get<bool>();
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace greensched::serve
