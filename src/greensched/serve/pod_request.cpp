#include "greensched/serve/pod_request.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "greensched/core/resources.hpp"
#include "greensched/serve/json_fields.hpp"
#include "greensched/serve/quantity.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

struct Amount {
  bool present = false;
  int64_t value = 0;
};

// A quantity from a resource map; resource names are case-sensitive, as in Kubernetes.
Result<Amount> map_amount(const json& map, std::string_view resource, int64_t scale,
                          std::string_view where) {
  auto it = map.find(resource);
  if (it == map.end() || it->is_null()) return Amount{};
  auto q = quantity_from_json(*it, scale);
  if (!q.ok()) return Error{fmt::format("{}[{}]: {}", where, resource, q.error())};
  if (q.value() < 0) {
    return Error{fmt::format("{}[{}]: negative request {}", where, resource, it->dump())};
  }
  return Amount{true, q.value()};
}

// A container's request of one resource: requests, else limits (Kubernetes defaults the
// request of a resource that has only a limit to the limit).
Result<Amount> container_amount(const json& container, std::string_view resource, int64_t scale,
                                const std::string& where) {
  const json* resources = find_field(container, "resources");
  if (resources == nullptr) return Amount{};
  if (!resources->is_object()) return Error{fmt::format("{}.resources: must be an object", where)};
  for (const char* list : {"requests", "limits"}) {
    const json* m = find_field(*resources, list);
    if (m == nullptr) continue;
    if (!m->is_object()) {
      return Error{fmt::format("{}.resources.{}: must be an object", where, list)};
    }
    auto a = map_amount(*m, resource, scale, fmt::format("{}.resources.{}", where, list));
    if (!a.ok() || a.value().present) return a;
  }
  return Amount{};
}

struct CpuMem {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
};

Result<CpuMem> container_cpu_mem(const json& container, const std::string& where) {
  auto cpu = container_amount(container, "cpu", 1000, where);
  if (!cpu.ok()) return Error{cpu.error()};
  auto mem = container_amount(container, "memory", 1, where);
  if (!mem.ok()) return Error{mem.error()};
  return CpuMem{cpu.value().value, mem.value().value};
}

// (count, milli per GPU) of one container, -1 for "not given"; {-1,-1} when it asks no GPU.
struct GpuAsk {
  int64_t count = -1;
  int64_t milli = -1;
  bool any() const { return count >= 0 || milli >= 0; }
};

Result<GpuAsk> container_gpu(const json& container, const std::string& where) {
  auto ali_milli = container_amount(container, kGpuMilliResource, 1, where);
  if (!ali_milli.ok()) return Error{ali_milli.error()};
  auto ali_count = container_amount(container, kGpuCountResource, 1, where);
  if (!ali_count.ok()) return Error{ali_count.error()};
  auto hami_count = container_amount(container, kHamiGpuResource, 1, where);
  if (!hami_count.ok()) return Error{hami_count.error()};
  auto hami_pct = container_amount(container, kHamiMemPercentResource, 1, where);
  if (!hami_pct.ok()) return Error{hami_pct.error()};
  const bool ali = ali_milli.value().present || ali_count.value().present;
  const bool hami = hami_count.value().present || hami_pct.value().present;
  GpuAsk ask;
  if (ali && hami) {
    return Error{fmt::format("{}: asks for GPUs both as {} and as {}; use one", where,
                             kGpuMilliResource, kHamiGpuResource)};
  }
  if (ali) {
    if (ali_count.value().present) ask.count = ali_count.value().value;
    if (ali_milli.value().present) ask.milli = ali_milli.value().value;
  } else if (hami) {
    if (hami_count.value().present) ask.count = hami_count.value().value;
    if (hami_pct.value().present) {
      if (hami_pct.value().value > 100) {
        return Error{fmt::format("{}: {} {} is over 100 percent of a GPU", where,
                                 kHamiMemPercentResource, hami_pct.value().value)};
      }
      ask.milli = hami_pct.value().value * 10;
    }
  }
  return ask;
}

Result<std::vector<std::string>> split_models(std::string_view text, std::string_view where) {
  std::vector<std::string> models;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of("|,", start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view m = text.substr(start, end - start);
    while (!m.empty() && m.front() == ' ') m.remove_prefix(1);
    while (!m.empty() && m.back() == ' ') m.remove_suffix(1);
    if (!m.empty()) {
      if (models.size() >= 64) return Error{fmt::format("{}: more than 64 GPU models", where)};
      models.emplace_back(m);
    }
    start = end + 1;
  }
  return models;
}

// The models named under `key` in the string map `object` (named `where` in errors);
// nullopt when the map or the key is absent.
std::optional<Result<std::vector<std::string>>> models_in(const json* object,
                                                          std::string_view where,
                                                          std::string_view key = kGpuModelKey) {
  if (object == nullptr) return std::nullopt;
  if (!object->is_object()) return Error{fmt::format("{}: must be an object", where)};
  auto it = object->find(key);
  if (it == object->end() || it->is_null()) return std::nullopt;
  const std::string field = fmt::format("{}[{}]", where, key);
  if (!it->is_string()) return Error{fmt::format("{}: must be a string", field)};
  return split_models(it->get_ref<const std::string&>(), field);
}

// The models a required node affinity allows: the values of an `In` expression on either GPU
// model key, in the first term that has one (a pod may run on a node of any of them).
std::optional<std::vector<std::string>> affinity_models(const json& spec) {
  const json* terms = find_field(spec, "affinity");
  for (const char* step :
       {"nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"}) {
    if (terms == nullptr || !terms->is_object()) return std::nullopt;
    terms = find_field(*terms, step);
  }
  if (terms == nullptr || !terms->is_array()) return std::nullopt;
  for (const json& term : *terms) {
    const json* expressions = term.is_object() ? find_field(term, "matchExpressions") : nullptr;
    if (expressions == nullptr || !expressions->is_array()) continue;
    for (const json& e : *expressions) {
      if (!e.is_object() || e.value("operator", std::string()) != "In") continue;
      const std::string key = e.value("key", std::string());
      if (key != kGpuModelKey && key != kGpuProductKey) continue;
      std::vector<std::string> models;
      for (const json& v : e.value("values", json::array())) {
        if (v.is_string() && !v.get<std::string>().empty()) models.push_back(v.get<std::string>());
      }
      if (!models.empty()) return models;
    }
  }
  return std::nullopt;
}

// A pod's GPU models, the first of: the Alibaba annotation, a nodeSelector on the Alibaba key
// or on nvidia.com/gpu.product (GPU feature discovery's label), a required node affinity `In`
// either key. None: any model.
Result<std::vector<std::string>> pod_models(const json& metadata, const json& spec) {
  if (auto models = models_in(find_field(metadata, "annotations"), "Pod.metadata.annotations")) {
    return std::move(*models);
  }
  const json* selector = find_field(spec, "nodeSelector");
  if (auto models = models_in(selector, "Pod.spec.nodeSelector")) return std::move(*models);
  if (auto models = models_in(selector, "Pod.spec.nodeSelector", kGpuProductKey)) {
    return std::move(*models);
  }
  if (auto models = affinity_models(spec)) return std::move(*models);
  return std::vector<std::string>{};
}

Status check_total(int64_t value, int64_t limit, std::string_view what) {
  if (value > limit) {
    return Error{
        fmt::format("Pod: {} request {} is out of range (at most {})", what, value, limit)};
  }
  return Status::Ok();
}

}  // namespace

Status normalise_gpu_request(int64_t count, int64_t milli, PodRequest& out,
                             std::string_view where) {
  out.num_gpu = 0;
  out.gpu_milli = 0;
  if (count < -1 || milli < -1) return Error{fmt::format("{}: negative GPU request", where)};
  if (count == -1 && milli == -1) return Status::Ok();
  if (count == -1) count = milli > 0 ? 1 : 0;
  if (milli == -1) milli = count > 0 ? kGpuMilli : 0;
  if (count == 0) return Status::Ok();
  if (milli == 0) {
    return Error{fmt::format("{}: {} GPU(s) asked with a share of 0 milli each", where, count)};
  }
  if (milli > kGpuMilli) {
    return Error{fmt::format(
        "{}: {} milli per GPU is over {} (one whole GPU); ask for several GPUs with a GPU count",
        where, milli, kGpuMilli)};
  }
  if (count > kMaxGpusPerNode) {
    return Error{fmt::format("{}: {} GPUs is oversized: a node has at most {} GPUs", where, count,
                             kMaxGpusPerNode)};
  }
  if (count > 1 && milli < kGpuMilli) {
    return Error{fmt::format(
        "{}: {} GPUs of {} milli each: a pod on several GPUs takes them whole (1000 milli)", where,
        count, milli)};
  }
  out.num_gpu = static_cast<int>(count);
  out.gpu_milli = static_cast<int32_t>(milli);
  return Status::Ok();
}

Result<PodRequest> parse_pod(const json& pod) {
  if (!pod.is_object())
    return Error{fmt::format("Pod: must be an object, not {}", pod.type_name())};
  PodRequest out;
  const json* metadata = find_field(pod, "metadata");
  if (metadata == nullptr || !metadata->is_object()) return Error{"Pod.metadata: missing"};
  auto name = required_string(*metadata, "name", "Pod.metadata.");
  if (!name.ok()) return Error{name.error()};
  out.ref.name = std::move(name.value());
  auto ns = optional_string(*metadata, "namespace", "Pod.metadata.");
  if (!ns.ok()) return Error{ns.error()};
  if (ns.value() && !ns.value()->empty()) out.ref.ns = std::move(*ns.value());
  auto uid = optional_string(*metadata, "uid", "Pod.metadata.");
  if (!uid.ok()) return Error{uid.error()};
  if (uid.value()) out.ref.uid = std::move(*uid.value());
  if (out.ref.name.size() > 253 || out.ref.ns.size() > 253 || out.ref.uid.size() > 128) {
    return Error{"Pod.metadata: name, namespace or uid too long"};
  }

  const json* spec = find_field(pod, "spec");
  if (spec == nullptr || !spec->is_object()) return Error{"Pod.spec: missing"};
  const json* containers = find_field(*spec, "containers");
  if (containers == nullptr || !containers->is_array()) {
    return Error{"Pod.spec.containers: missing or not an array"};
  }

  CpuMem sum;
  std::vector<GpuAsk> gpu_containers;
  for (std::size_t i = 0; i < containers->size(); ++i) {
    const json& c = (*containers)[i];
    const std::string where = fmt::format("Pod.spec.containers[{}]", i);
    if (!c.is_object()) return Error{fmt::format("{}: must be an object", where)};
    auto cm = container_cpu_mem(c, where);
    if (!cm.ok()) return Error{cm.error()};
    sum.cpu_milli = std::min(sum.cpu_milli + cm.value().cpu_milli, kMaxQuantity);
    sum.memory_bytes = std::min(sum.memory_bytes + cm.value().memory_bytes, kMaxQuantity);
    auto gpu = container_gpu(c, where);
    if (!gpu.ok()) return Error{gpu.error()};
    if (gpu.value().any()) gpu_containers.push_back(gpu.value());
  }
  if (const json* inits = find_field(*spec, "initContainers")) {
    if (!inits->is_array()) return Error{"Pod.spec.initContainers: must be an array"};
    for (std::size_t i = 0; i < inits->size(); ++i) {
      const std::string where = fmt::format("Pod.spec.initContainers[{}]", i);
      if (!(*inits)[i].is_object()) return Error{fmt::format("{}: must be an object", where)};
      auto cm = container_cpu_mem((*inits)[i], where);
      if (!cm.ok()) return Error{cm.error()};
      sum.cpu_milli = std::max(sum.cpu_milli, cm.value().cpu_milli);
      sum.memory_bytes = std::max(sum.memory_bytes, cm.value().memory_bytes);
    }
  }
  if (const json* overhead = find_field(*spec, "overhead")) {
    if (!overhead->is_object()) return Error{"Pod.spec.overhead: must be an object"};
    auto cpu = map_amount(*overhead, "cpu", 1000, "Pod.spec.overhead");
    if (!cpu.ok()) return Error{cpu.error()};
    auto mem = map_amount(*overhead, "memory", 1, "Pod.spec.overhead");
    if (!mem.ok()) return Error{mem.error()};
    sum.cpu_milli = std::min(sum.cpu_milli + cpu.value().value, kMaxQuantity);
    sum.memory_bytes = std::min(sum.memory_bytes + mem.value().value, kMaxQuantity);
  }
  out.cpu_milli = sum.cpu_milli;
  out.memory_mib = bytes_to_mib(sum.memory_bytes);
  if (Status s = check_total(out.cpu_milli, kMaxPodCpuMilli, "cpu (milli)"); !s.ok())
    return Error{s.message()};
  if (Status s = check_total(out.memory_mib, kMaxPodMemoryMib, "memory (MiB)"); !s.ok())
    return Error{s.message()};

  if (gpu_containers.size() == 1) {
    const GpuAsk& a = gpu_containers.front();
    if (Status s = normalise_gpu_request(a.count, a.milli, out, "Pod.spec.containers"); !s.ok())
      return Error{s.message()};
  } else if (gpu_containers.size() > 1) {
    int64_t total = 0;
    for (const GpuAsk& a : gpu_containers) {
      PodRequest one;
      if (Status s = normalise_gpu_request(a.count, a.milli, one, "Pod.spec.containers"); !s.ok())
        return Error{s.message()};
      if (one.num_gpu > 0 && one.gpu_milli < kGpuMilli) {
        return Error{
            "Pod.spec.containers: GPU shares asked by several containers are not supported; "
            "ask for the pod's share on one container"};
      }
      total += one.num_gpu;
    }
    if (Status s =
            normalise_gpu_request(total, total > 0 ? kGpuMilli : -1, out, "Pod.spec.containers");
        !s.ok())
      return Error{s.message()};
  } else if (const json* annotations = find_field(*metadata, "annotations")) {
    // The openb simulator writes the GPU request as pod annotations.
    if (!annotations->is_object()) return Error{"Pod.metadata.annotations: must be an object"};
    auto milli = map_amount(*annotations, kGpuMilliResource, 1, "Pod.metadata.annotations");
    if (!milli.ok()) return Error{milli.error()};
    auto count = map_amount(*annotations, kGpuCountResource, 1, "Pod.metadata.annotations");
    if (!count.ok()) return Error{count.error()};
    if (Status s = normalise_gpu_request(count.value().present ? count.value().value : -1,
                                         milli.value().present ? milli.value().value : -1, out,
                                         "Pod.metadata.annotations");
        !s.ok())
      return Error{s.message()};
  }

  auto models = pod_models(*metadata, *spec);
  if (!models.ok()) return Error{models.error()};
  out.gpu_models = std::move(models.value());
  out.movable = movable_annotation(pod);
  return out;
}

bool movable_annotation(const json& pod) {
  const json* metadata = pod.is_object() ? find_field(pod, "metadata") : nullptr;
  if (metadata == nullptr || !metadata->is_object()) return false;
  const json* annotations = find_field(*metadata, "annotations");
  if (annotations == nullptr || !annotations->is_object()) return false;
  const json* value = find_field(*annotations, kMovableAnnotation);
  return value != nullptr && value->is_string() && value->get_ref<const std::string&>() == "true";
}

nlohmann::json pending_pod_object(const PodSpec& pod, const PodRef& ref,
                                  const GpuModelRegistry& models) {
  using nlohmann::json;
  json limits = json::object();
  if (pod.needs_gpu()) {
    limits[std::string(kGpuMilliResource)] = std::to_string(pod.gpu_milli);
    limits[std::string(kGpuCountResource)] = std::to_string(pod.num_gpu);
  }
  json annotations = json::object();
  if (pod.gpu_spec != 0) annotations[std::string(kGpuModelKey)] = models.describe(pod.gpu_spec);
  json requests = {{"cpu", fmt::format("{}m", pod.cpu_milli)},
                   {"memory", fmt::format("{}Mi", pod.memory_mib)}};
  json container = {
      {"name", "main"},
      {"image", "registry.example.com/job:1"},
      {"resources", {{"requests", std::move(requests)}, {"limits", std::move(limits)}}}};
  return {{"metadata",
           {{"name", ref.name},
            {"namespace", ref.ns},
            {"uid", ref.uid},
            {"annotations", std::move(annotations)}}},
          {"spec",
           {{"containers", json::array({std::move(container)})},
            {"schedulerName", "default-scheduler"}}},
          {"status", {{"phase", "Pending"}}}};
}

}  // namespace greensched::serve
