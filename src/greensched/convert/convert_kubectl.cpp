// kubectl JSON dumps to openb lists; see convert_kubectl.hpp.
#include "greensched/convert/convert_kubectl.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "greensched/convert/gpu_names.hpp"
#include "greensched/convert/openb_writer.hpp"
#include "greensched/core/gpu_model.hpp"
#include "greensched/core/resources.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/serve/json_fields.hpp"
#include "greensched/serve/node_object.hpp"
#include "greensched/serve/pod_request.hpp"
#include "greensched/serve/quantity.hpp"

namespace greensched::convert {
namespace {

using nlohmann::json;

// The whole file as JSON; never throws. Errors are "file:line: reason".
Result<json> parse_json_file(const SourceText& src, std::string_view command) {
  if (src.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Error{fmt::format("{}:1: empty file (expected the output of `{}`)", src.path, command)};
  }
  if (const std::size_t at = serve::nesting_too_deep_at(src.text, serve::kMaxJsonDepth);
      at != std::string_view::npos) {
    return Error{fmt::format("{}:{}: not JSON: nested deeper than {} levels", src.path,
                             line_of(src.text, at), serve::kMaxJsonDepth)};
  }
  try {
    return json::parse(src.text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (const std::size_t close = what.find("] "); what.starts_with("[json") && close != what.npos)
      what.erase(0, close + 2);
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    return Error{
        fmt::format("{}:{}: not JSON ({}): {}", src.path, line_of(src.text, at), command, what)};
  } catch (const std::exception& e) {
    return Error{fmt::format("{}:1: not JSON: {}", src.path, e.what())};
  }
}

// A list's items with the line each starts on.
struct Items {
  std::vector<const json*> items;
  std::vector<std::size_t> lines;
};

// The items of a v1.<kind>List (or a List, or one <kind> object).
Result<Items> list_items(const json& doc, const SourceText& src, std::string_view kind,
                         std::string_view command, std::string_view option) {
  const std::string where = fmt::format("{}:1", src.path);
  if (!doc.is_object()) {
    return Error{fmt::format("{}: expected a v1.{}List (the output of `{}`), got a JSON {}", where,
                             kind, command, doc.type_name())};
  }
  const json* k = serve::find_field(doc, "kind");
  const std::string list_kind = fmt::format("{}List", kind);
  Items out;
  if (k != nullptr && k->is_string() && k->get_ref<const std::string&>() == kind) {
    out.items.push_back(&doc);
    out.lines.push_back(1);
    return out;
  }
  if (k != nullptr && k->is_string() && k->get_ref<const std::string&>() != list_kind &&
      k->get_ref<const std::string&>() != "List") {
    return Error{fmt::format("{}: kind {}, expected {}: {} takes the output of `{}`", where,
                             k->get_ref<const std::string&>(), list_kind, option, command)};
  }
  const json* items = serve::find_field(doc, "items");
  if (items == nullptr || !items->is_array()) {
    return Error{fmt::format("{}: no \"items\" array: expected a v1.{} (the output of `{}`)", where,
                             list_kind, command)};
  }
  const std::vector<std::size_t> lines = item_lines(src.text);
  for (std::size_t i = 0; i < items->size(); ++i) {
    out.items.push_back(&(*items)[i]);
    out.lines.push_back(lines.size() == items->size() ? lines[i] : 1);
  }
  return out;
}

// Why an item is not a `kind`, or "".
std::string wrong_kind(const json& item, std::string_view kind) {
  if (!item.is_object()) return fmt::format("a JSON {}, not a {} object", item.type_name(), kind);
  const json* k = serve::find_field(item, "kind");
  if (k != nullptr && k->is_string() && k->get_ref<const std::string&>() != kind) {
    return fmt::format("a {}, not a {}", k->get_ref<const std::string&>(), kind);
  }
  return {};
}

const json* labels_of(const json& item) {
  const json* metadata = serve::find_field(item, "metadata");
  return metadata == nullptr ? nullptr : serve::find_field(*metadata, "labels");
}

bool has_model_label(const json* labels) {
  if (labels == nullptr || !labels->is_object()) return false;
  for (std::string_view key : {serve::kGpuModelKey, std::string_view("nvidia.com/gpu.product")}) {
    auto it = labels->find(key);
    if (it != labels->end() && it->is_string() && !it->get_ref<const std::string&>().empty())
      return true;
  }
  return false;
}

// A time stamp member of `object` as epoch seconds; nullopt when absent.
Result<std::optional<int64_t>> time_member(const json& object, std::string_view key,
                                           std::string_view where) {
  const json* v = serve::find_field(object, key);
  if (v == nullptr) return std::optional<int64_t>{};
  if (!v->is_string()) return Error{fmt::format("{}{}: must be a string", where, key)};
  auto t = parse_offset_time(v->get_ref<const std::string&>());
  if (!t.ok()) {
    return Error{
        fmt::format("{}{}: '{}': {}", where, key, v->get_ref<const std::string&>(), t.error())};
  }
  return std::optional<int64_t>{t.value()};
}

// When every container terminated: the latest finishedAt. nullopt otherwise.
Result<std::optional<int64_t>> finished_at(const json& status) {
  const json* statuses = serve::find_field(status, "containerStatuses");
  if (statuses == nullptr || !statuses->is_array() || statuses->empty())
    return std::optional<int64_t>{};
  std::optional<int64_t> latest;
  for (std::size_t i = 0; i < statuses->size(); ++i) {
    const json& c = (*statuses)[i];
    const json* state = serve::find_field(c, "state");
    const json* terminated = state == nullptr ? nullptr : serve::find_field(*state, "terminated");
    if (terminated == nullptr || !terminated->is_object()) return std::optional<int64_t>{};
    auto t = time_member(*terminated, "finishedAt",
                         fmt::format("status.containerStatuses[{}].state.terminated.", i));
    if (!t.ok()) return Error{t.error()};
    if (!t.value()) return std::optional<int64_t>{};
    latest = std::max(latest.value_or(*t.value()), *t.value());
  }
  return latest;
}

// HAMi's per-container GPU memory (MiB) and cores (percent); -1 when not asked.
struct HamiShare {
  int64_t mem_mib = -1;
  int64_t cores_pct = -1;
};

Result<HamiShare> hami_share(const json& pod) {
  HamiShare out;
  const json* spec = serve::find_field(pod, "spec");
  const json* containers = spec == nullptr ? nullptr : serve::find_field(*spec, "containers");
  if (containers == nullptr || !containers->is_array()) return out;
  int carriers = 0;
  for (std::size_t i = 0; i < containers->size(); ++i) {
    const json* resources = serve::find_field((*containers)[i], "resources");
    if (resources == nullptr || !resources->is_object()) continue;
    bool carries = false;
    for (const auto& [resource, field] : {std::pair{kHamiGpuMemResource, &out.mem_mib},
                                          std::pair{kHamiGpuCoresResource, &out.cores_pct}}) {
      for (const char* list : {"requests", "limits"}) {
        const json* m = serve::find_field(*resources, list);
        if (m == nullptr || !m->is_object()) continue;
        auto it = m->find(resource);
        if (it == m->end() || it->is_null()) continue;
        auto q = serve::quantity_from_json(*it, 1);
        const std::string where =
            fmt::format("Pod.spec.containers[{}].resources.{}[{}]", i, list, resource);
        if (!q.ok()) return Error{fmt::format("{}: {}", where, q.error())};
        if (q.value() < 0) return Error{fmt::format("{}: negative request", where)};
        *field = q.value();
        carries = true;
        break;  // requests, else limits
      }
    }
    carriers += carries ? 1 : 0;
  }
  if (carriers > 1) {
    return Error{fmt::format(
        "{} / {} asked by several containers: not supported; ask for the pod's share on one "
        "container",
        kHamiGpuMemResource, kHamiGpuCoresResource)};
  }
  if (out.cores_pct > 100) {
    return Error{
        fmt::format("{} {} is over 100 percent of a GPU", kHamiGpuCoresResource, out.cores_pct)};
  }
  return out;
}

// The openb QoS class of a pod: status.qosClass, else spec.priority (> 0: LS, else BE).
std::string pod_qos(const json& pod, std::vector<std::string>& inferred) {
  const json* status = serve::find_field(pod, "status");
  const json* q = status == nullptr ? nullptr : serve::find_field(*status, "qosClass");
  if (q != nullptr && q->is_string()) {
    const std::string& cls = q->get_ref<const std::string&>();
    if (cls == "Guaranteed" || cls == "Burstable") return cls;
    if (cls == "BestEffort") return "BE";
  }
  const json* spec = serve::find_field(pod, "spec");
  const json* p = spec == nullptr ? nullptr : serve::find_field(*spec, "priority");
  if (p != nullptr && p->is_number_integer()) {
    const int64_t priority = p->get<int64_t>();
    const char* cls = priority > 0 ? "LS" : "BE";
    inferred.push_back(fmt::format("qos {}: no status.qosClass, spec.priority {}", cls, priority));
    return cls;
  }
  return {};
}

struct NodeResult {
  std::vector<OpenbNodeRow> rows;
  std::unordered_map<std::string, int64_t> gpu_memory_mib;  // by node name, where labelled
};

Result<NodeResult> convert_kubectl_nodes(const SourceText& src, TableSummary& table,
                                         const GpuModelMap& models) {
  auto doc = parse_json_file(src, "kubectl get nodes -o json");
  if (!doc.ok()) return Error{doc.error()};
  auto items = list_items(doc.value(), src, "Node", "kubectl get nodes -o json", "--nodes");
  if (!items.ok()) return Error{items.error()};
  NodeResult out;
  std::unordered_map<std::string, std::size_t> first_line;
  for (std::size_t i = 0; i < items.value().items.size(); ++i) {
    const json& item = *items.value().items[i];
    const std::size_t line = items.value().lines[i];
    if (std::string why = wrong_kind(item, "Node"); !why.empty()) {
      table.drop(line, why);
      continue;
    }
    // A GPU node without a model label gets the model kUnlabelledModel (stated below).
    json labelled;
    const json* use = &item;
    const json* labels = labels_of(item);
    const bool unlabelled = !has_model_label(labels) && (labels == nullptr || labels->is_object());
    if (unlabelled && item.contains("metadata") && item["metadata"].is_object()) {
      labelled = item;
      labelled["metadata"]["labels"][std::string(serve::kGpuModelKey)] =
          std::string(kUnlabelledModel);
      use = &labelled;
    }
    auto node = serve::parse_node(*use);
    if (!node.ok()) {
      table.drop(line, node.error());
      continue;
    }
    const serve::NodeInfo& n = node.value();
    std::vector<std::string> inferred;
    if (n.gpu_count > 0 && unlabelled && !models.contains(kUnlabelledModel)) {
      inferred.push_back(fmt::format(
          "GPU model '{}': no {} or {} label (name it with "
          "--gpu-model {}=MODEL)",
          kUnlabelledModel, serve::kGpuModelKey, serve::kGpuProductKey, kUnlabelledModel));
    }
    std::string model = n.gpu_model;
    if (n.gpu_count > 0) {
      model = converted_gpu_model(n.gpu_model, models);
      if (model != n.gpu_model) {
        inferred.push_back(
            unlabelled
                ? fmt::format("GPU model {} by --gpu-model {}={}", model, kUnlabelledModel, model)
                : fmt::format("GPU model {} from the label '{}'", model, n.gpu_model));
      }
    }
    if (!plain_field(n.name) || !plain_field(model)) {
      table.drop(line, fmt::format("node {}: name or GPU model '{}' holds one of , \" | or a "
                                   "line break, which the openb CSV cannot hold",
                                   n.name, n.gpu_model));
      continue;
    }
    if (const auto [it, fresh] = first_line.try_emplace(n.name, line); !fresh) {
      table.drop(line, fmt::format("duplicate node {} (first on line {})", n.name, it->second));
      continue;
    }
    if (const json* l = labels_of(item); l != nullptr && l->is_object() && n.gpu_count > 0) {
      auto it = l->find(kGpuMemoryLabel);
      if (it != l->end() && it->is_string()) {
        auto mib = serve::parse_quantity(it->get_ref<const std::string&>(), 1);
        if (mib.ok() && mib.value() > 0) out.gpu_memory_mib[n.name] = mib.value();
      }
    }
    out.rows.push_back(OpenbNodeRow{n.name, n.cpu_milli, n.memory_mib, n.gpu_count, model});
    table.keep(line, inferred);
  }
  if (out.rows.empty()) {
    return Error{fmt::format(
        "{}: no node could be converted ({} item(s){})", src.path, table.rows,
        table.drops.empty() ? std::string()
                            : fmt::format("; first dropped: {}: {}", table.drops.front().where(),
                                          table.drops.front().what))};
  }
  return out;
}

// A pod through the first pass: absolute times, filled in once the dump's span is known.
struct PodDraft {
  OpenbPodRow row;
  std::size_t line = 0;
  int64_t created = 0;
  std::optional<int64_t> started;
  std::optional<int64_t> finished;
  std::vector<std::string> inferred;
};

// The GPU memory the share of a pod on `node` is counted against, if known; `inferred` says
// when it is the one size every labelled GPU node shares rather than the pod's node's.
std::optional<int64_t> gpu_memory_for(const json& pod, const NodeResult& nodes, bool& inferred) {
  inferred = false;
  const json* spec = serve::find_field(pod, "spec");
  const json* node = spec == nullptr ? nullptr : serve::find_field(*spec, "nodeName");
  if (node != nullptr && node->is_string()) {
    auto it = nodes.gpu_memory_mib.find(node->get_ref<const std::string&>());
    if (it != nodes.gpu_memory_mib.end()) return it->second;
    return std::nullopt;
  }
  int gpu_nodes = 0;
  for (const OpenbNodeRow& r : nodes.rows) gpu_nodes += r.gpu > 0 ? 1 : 0;
  if (gpu_nodes == 0 || static_cast<int>(nodes.gpu_memory_mib.size()) != gpu_nodes)
    return std::nullopt;
  const int64_t first = nodes.gpu_memory_mib.begin()->second;
  for (const auto& [name, mib] : nodes.gpu_memory_mib) {
    if (mib != first) return std::nullopt;
  }
  inferred = true;
  return first;
}

// Applies HAMi's gpumem / gpucores to the pod's GPU request. An error drops the pod.
Status apply_hami(const json& pod, const NodeResult& nodes, PodDraft& d) {
  auto share = hami_share(pod);
  if (!share.ok()) return Error{share.error()};
  const HamiShare& h = share.value();
  if (h.mem_mib <= 0 && h.cores_pct <= 0) return Status::Ok();
  if (d.row.num_gpu == 0) {
    d.row.num_gpu = 1;
    d.row.gpu_milli = kGpuMilli;
    d.inferred.push_back(fmt::format("one GPU: {} / {} without a GPU count (HAMi's default)",
                                     kHamiGpuMemResource, kHamiGpuCoresResource));
  }
  int32_t milli = d.row.gpu_milli < kGpuMilli ? d.row.gpu_milli : 0;  // a share parse_pod read
  if (h.mem_mib > 0) {
    bool fleet_wide = false;
    if (auto mem = gpu_memory_for(pod, nodes, fleet_wide)) {
      const int64_t m = std::min<int64_t>(kGpuMilli, (h.mem_mib * kGpuMilli + *mem - 1) / *mem);
      milli = std::max(milli, static_cast<int32_t>(m));
      if (fleet_wide) {
        d.inferred.push_back(fmt::format(
            "gpu_milli {}: {} {} MiB of the {} MiB every GPU node has (the pod is on no node)", m,
            kHamiGpuMemResource, h.mem_mib, *mem));
      }
    } else {
      milli = kGpuMilli;
      d.inferred.push_back(
          fmt::format("whole GPU(s): {} {} MiB, but the node's GPU memory is unknown (no {} "
                      "label on its node)",
                      kHamiGpuMemResource, h.mem_mib, kGpuMemoryLabel));
    }
  }
  if (h.cores_pct > 0) milli = std::max(milli, static_cast<int32_t>(h.cores_pct * 10));
  if (milli <= 0) return Status::Ok();
  if (d.row.num_gpu > 1 && milli < kGpuMilli) {
    d.inferred.push_back(fmt::format(
        "{} whole GPUs: asked {} milli of each, and an openb pod on several GPUs takes them whole",
        d.row.num_gpu, milli));
    milli = kGpuMilli;
  }
  d.row.gpu_milli = milli;
  return Status::Ok();
}

Result<std::vector<OpenbPodRow>> convert_pods(const SourceText& src, const NodeResult& nodes,
                                              TableSummary& table, std::vector<std::string>& notes,
                                              const GpuModelMap& models) {
  auto doc = parse_json_file(src, "kubectl get pods -A -o json");
  if (!doc.ok()) return Error{doc.error()};
  auto items = list_items(doc.value(), src, "Pod", "kubectl get pods -A -o json", "--pods");
  if (!items.ok()) return Error{items.error()};

  GpuModelRegistry known;  // the registry's models and every node's
  for (const OpenbNodeRow& r : nodes.rows) {
    if (r.gpu > 0) (void)known.intern(r.model);
  }
  std::vector<PodDraft> drafts;
  std::unordered_map<std::string, std::size_t> first_line;
  int64_t dump_end = std::numeric_limits<int64_t>::min();
  for (std::size_t i = 0; i < items.value().items.size(); ++i) {
    const json& item = *items.value().items[i];
    const std::size_t line = items.value().lines[i];
    if (std::string why = wrong_kind(item, "Pod"); !why.empty()) {
      table.drop(line, why);
      continue;
    }
    auto pod = serve::parse_pod(item);
    if (!pod.ok()) {
      table.drop(line, pod.error());
      continue;
    }
    const serve::PodRequest& p = pod.value();
    PodDraft d;
    d.line = line;
    d.row.name = p.ref.key();
    d.row.cpu_milli = p.cpu_milli;
    d.row.memory_mib = p.memory_mib;
    d.row.num_gpu = p.num_gpu;
    d.row.gpu_milli = p.gpu_milli;
    if (!plain_field(d.row.name)) {
      table.drop(line,
                 fmt::format("pod {}: the name holds one of , \" | or a line break", d.row.name));
      continue;
    }
    if (Status s = apply_hami(item, nodes, d); !s.ok()) {
      table.drop(line, s.message());
      continue;
    }
    // GPU models: those no node has and the registry does not know are left out.
    std::vector<std::string> unknown;
    for (const std::string& raw : p.gpu_models) {
      const std::string m = converted_gpu_model(raw, models);
      if (m != raw) d.inferred.push_back(fmt::format("GPU model {} from '{}'", m, raw));
      if (!plain_field(m) || !known.find(m)) {
        unknown.push_back(m);
      } else if (std::find(d.row.gpu_spec.begin(), d.row.gpu_spec.end(), m) ==
                 d.row.gpu_spec.end()) {
        d.row.gpu_spec.push_back(m);
      }
    }
    if (!unknown.empty() && d.row.gpu_spec.empty()) {
      table.drop(
          line, fmt::format("asks only for GPU model(s) no node has: {}", fmt::join(unknown, "|")));
      continue;
    }
    if (!unknown.empty()) {
      d.inferred.push_back(fmt::format("gpu_spec {}: left out model(s) no node has: {}",
                                       fmt::join(d.row.gpu_spec, "|"), fmt::join(unknown, "|")));
    }
    if (d.row.num_gpu == 0) d.row.gpu_spec.clear();
    d.row.qos = pod_qos(item, d.inferred);

    const json& metadata = *serve::find_field(item, "metadata");  // parse_pod checked it
    const json* status = serve::find_field(item, "status");
    const json* phase = status == nullptr ? nullptr : serve::find_field(*status, "phase");
    if (phase != nullptr && phase->is_string() &&
        plain_field(phase->get_ref<const std::string&>()) &&
        !phase->get_ref<const std::string&>().empty()) {
      d.row.phase = phase->get_ref<const std::string&>();
    } else {
      d.row.phase = "Pending";
      d.inferred.push_back("pod_phase Pending: no status.phase");
    }
    auto created = time_member(metadata, "creationTimestamp", "metadata.");
    if (!created.ok()) {
      table.drop(line, created.error());
      continue;
    }
    if (!created.value()) {
      table.drop(line, "metadata.creationTimestamp: missing (no creation time)");
      continue;
    }
    d.created = *created.value();
    if (status != nullptr && status->is_object()) {
      auto started = time_member(*status, "startTime", "status.");
      if (!started.ok()) {
        table.drop(line, started.error());
        continue;
      }
      d.started = started.value();
      auto finished = finished_at(*status);
      if (!finished.ok()) {
        table.drop(line, finished.error());
        continue;
      }
      d.finished = finished.value();
    }
    if (!d.finished) {
      auto deleted = time_member(metadata, "deletionTimestamp", "metadata.");
      if (!deleted.ok()) {
        table.drop(line, deleted.error());
        continue;
      }
      d.finished = deleted.value();
    }
    if (d.finished && *d.finished < d.created) {
      table.drop(line, fmt::format("finishes ({}) before its creation ({})",
                                   format_utc_time(*d.finished), format_utc_time(d.created)));
      continue;
    }
    if (const auto [it, fresh] = first_line.try_emplace(d.row.name, line); !fresh) {
      table.drop(line, fmt::format("duplicate pod {} (first on line {})", d.row.name, it->second));
      continue;
    }
    dump_end = std::max(
        {dump_end, d.created, d.started.value_or(d.created), d.finished.value_or(d.created)});
    drafts.push_back(std::move(d));
  }
  if (drafts.empty()) {
    return Error{fmt::format(
        "{}: no pod could be converted ({} item(s){})", src.path, table.rows,
        table.drops.empty() ? std::string()
                            : fmt::format("; first dropped: {}: {}", table.drops.front().where(),
                                          table.drops.front().what))};
  }

  int64_t origin = drafts.front().created;
  for (const PodDraft& d : drafts) origin = std::min(origin, d.created);
  notes.push_back(fmt::format(
      "times are seconds from the earliest pod creation, {} UTC; a pod that has not finished "
      "ends at the dump's last time stamp, {} UTC (+{} s)",
      format_utc_time(origin), format_utc_time(dump_end), dump_end - origin));
  std::vector<OpenbPodRow> rows;
  for (PodDraft& d : drafts) {
    d.row.creation_time = d.created - origin;
    if (d.started && d.row.phase != "Pending") {
      if (*d.started < d.created) {
        d.inferred.push_back("scheduled_time: status.startTime is before the creation; set to it");
      }
      d.row.scheduled_time = std::max(*d.started, d.created) - origin;
    }
    if (d.finished) {
      d.row.deletion_time = *d.finished - origin;
    } else {
      d.row.deletion_time = dump_end - origin;
      d.inferred.push_back(fmt::format("deletion_time {}: {} (not finished), the dump's end",
                                       d.row.deletion_time, d.row.phase));
    }
    table.keep(d.line, d.inferred);
    rows.push_back(std::move(d.row));
  }
  return rows;
}

}  // namespace

std::vector<std::size_t> item_lines(std::string_view text) {
  std::vector<std::size_t> lines;
  std::size_t line = 1;
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  std::string key;              // the last string read at depth 1
  bool after_colon = false;     // at depth 1: a ':' came after the last key
  bool in_items = false;        // inside the top-level "items" array (depth 2)
  bool expect_element = false;  // the next token at depth 2 starts an element
  for (char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      } else if (depth == 1) {
        key += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (in_items && depth == 2 && expect_element && c != ']') {
      lines.push_back(line);
      expect_element = false;
    }
    if (c == '"') {
      in_string = true;
      if (depth == 1) {
        key.clear();
        after_colon = false;
      }
    } else if (c == ':') {
      if (depth == 1) after_colon = true;
    } else if (c == ',') {
      if (in_items && depth == 2) expect_element = true;
      if (depth == 1) after_colon = false;
    } else if (c == '[' || c == '{') {
      if (depth == 1 && c == '[' && after_colon && key == "items") {
        in_items = true;
        expect_element = true;
        lines.clear();  // a later "items" replaces an earlier one, as in the parser
      }
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
      if (depth == 1) in_items = false;
    }
  }
  return lines;
}

Result<ConvertOutput> convert_kubectl(const SourceText& nodes,
                                      const std::optional<SourceText>& pods,
                                      const GpuModelMap& models) {
  ConvertOutput out;
  out.summary.source = "kubectl";
  TableSummary node_table;
  node_table.what = "nodes";
  node_table.source = nodes.path;
  auto node_rows = convert_kubectl_nodes(nodes, node_table, models);
  if (!node_rows.ok()) return Error{node_rows.error()};
  out.nodes_csv = openb_nodes_csv(node_rows.value().rows);
  if (std::string note = power_note(models_without_power(node_rows.value().rows)); !note.empty())
    out.summary.notes.push_back(std::move(note));
  node_table.sort_notes();
  out.summary.tables.push_back(std::move(node_table));
  if (pods) {
    TableSummary pod_table;
    pod_table.what = "pods";
    pod_table.source = pods->path;
    auto pod_rows = convert_pods(*pods, node_rows.value(), pod_table, out.summary.notes, models);
    if (!pod_rows.ok()) return Error{pod_rows.error()};
    out.pods_csv = openb_pods_csv(pod_rows.value());
    pod_table.sort_notes();
    out.summary.tables.push_back(std::move(pod_table));
    out.summary.notes.push_back(
        "qos: status.qosClass Guaranteed and Burstable as they are, BestEffort as BE; without "
        "it, spec.priority > 0 is LS, else BE");
  }
  return out;
}

}  // namespace greensched::convert
