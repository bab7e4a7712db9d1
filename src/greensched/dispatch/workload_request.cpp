#include "greensched/dispatch/workload_request.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "greensched/core/duration.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/serve/json_fields.hpp"

namespace greensched::dispatch {

using nlohmann::json;

int WorkloadRequest::total_pods() const {
  int n = 0;
  for (const PodSetRequest& s : pod_sets) n += s.count;
  return n;
}

const PodSetRequest& WorkloadRequest::largest() const {
  const PodSetRequest* best = &pod_sets.front();
  for (const PodSetRequest& s : pod_sets) {
    const auto gpu = [](const serve::PodRequest& p) {
      return static_cast<int64_t>(p.num_gpu) * (p.gpu_milli > 0 ? p.gpu_milli : 0);
    };
    if (std::pair(gpu(s.pod), s.pod.cpu_milli) > std::pair(gpu(best->pod), best->pod.cpu_milli)) {
      best = &s;
    }
  }
  return *best;
}

Result<int64_t> parse_duration_s(std::string_view text) {
  auto seconds = parse_duration(text, 1);
  if (!seconds.ok()) return seconds.status().error();
  if (seconds.value() != std::floor(seconds.value())) {
    return Error{fmt::format("'{}' is not a whole number of seconds", text)};
  }
  return static_cast<int64_t>(seconds.value());
}

namespace {

Result<std::optional<std::string>> annotation_in(const json& metadata, std::string_view key,
                                                 const std::string& where) {
  const json* annotations = serve::find_field(metadata, "annotations");
  if (annotations == nullptr) return std::optional<std::string>{};
  if (!annotations->is_object()) return Error{fmt::format("{}: expected an object", where)};
  return serve::optional_string(*annotations, key, where);
}

// The Workload's own annotation, else the first pod template's that has it: Kueue copies a
// Job's pod template into the Workload's pod sets, but not the Job's annotations.
Result<std::optional<std::string>> annotation(const json& workload, std::string_view key) {
  auto own = annotation_in(workload.at("metadata"), key, "metadata.annotations");
  if (!own.ok() || own.value()) return own;
  const json& sets = workload.at("spec").at("podSets");
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const json* tmpl = serve::find_field(sets[i], "template");
    const json* metadata = tmpl != nullptr ? serve::find_field(*tmpl, "metadata") : nullptr;
    if (metadata == nullptr || !metadata->is_object()) continue;
    auto found = annotation_in(*metadata, key,
                               fmt::format("spec.podSets[{}].template.metadata.annotations", i));
    if (!found.ok() || found.value()) return found;
  }
  return std::optional<std::string>{};
}

}  // namespace

Result<WorkloadRequest> parse_workload(const json& workload) {
  if (!workload.is_object()) return Error{"workload: expected a Workload object"};
  WorkloadRequest out;
  const json* metadata = serve::find_field(workload, "metadata");
  if (metadata == nullptr || !metadata->is_object()) {
    return Error{"workload.metadata: missing or not an object"};
  }
  auto name = serve::required_string(*metadata, "name", "workload.metadata");
  if (!name.ok()) return name.status().error();
  auto ns = serve::optional_string(*metadata, "namespace", "workload.metadata");
  if (!ns.ok()) return ns.status().error();
  out.key = ns.value().value_or("default") + "/" + name.value();
  auto uid = serve::optional_string(*metadata, "uid", "workload.metadata");
  if (!uid.ok()) return uid.status().error();
  out.uid = uid.value().value_or("");
  auto created = serve::optional_string(*metadata, "creationTimestamp", "workload.metadata");
  if (!created.ok()) return created.status().error();
  if (created.value()) {
    auto t = parse_utc_time(*created.value());
    if (!t.ok()) {
      return Error{fmt::format("workload.metadata.creationTimestamp: {}", t.error())};
    }
    out.created_epoch_s = t.value();
  }

  const json* spec = serve::find_field(workload, "spec");
  if (spec == nullptr || !spec->is_object())
    return Error{"workload.spec: missing or not an object"};
  const json* pod_sets = serve::find_field(*spec, "podSets");
  if (pod_sets == nullptr || !pod_sets->is_array() || pod_sets->empty()) {
    return Error{"workload.spec.podSets: missing, not an array, or empty"};
  }
  for (std::size_t i = 0; i < pod_sets->size(); ++i) {
    const json& set = (*pod_sets)[i];
    const std::string where = fmt::format("workload.spec.podSets[{}]", i);
    if (!set.is_object()) return Error{fmt::format("{}: expected an object", where)};
    PodSetRequest ps;
    auto set_name = serve::optional_string(set, "name", where);
    if (!set_name.ok()) return set_name.status().error();
    ps.name = set_name.value().value_or(fmt::format("{}", i));
    if (const json* count = serve::find_field(set, "count"); count != nullptr) {
      if (!count->is_number_integer() || count->get<int64_t>() < 0 ||
          count->get<int64_t>() > 1000000) {
        return Error{fmt::format("{}.count: expected an integer in [0, 1000000]", where)};
      }
      ps.count = count->get<int>();
    }
    const json* tmpl = serve::find_field(set, "template");
    if (tmpl == nullptr || !tmpl->is_object()) {
      return Error{fmt::format("{}.template: missing or not an object", where)};
    }
    json pod = *tmpl;  // a pod template is a pod without status: name it for the reader
    if (!pod.contains("metadata") || !pod["metadata"].is_object()) pod["metadata"] = json::object();
    pod["metadata"]["name"] = name.value() + "-" + ps.name;
    auto request = serve::parse_pod(pod);
    if (!request.ok()) return Error{fmt::format("{}.template: {}", where, request.error())};
    ps.pod = std::move(request.value());
    if (ps.count > 0) out.pod_sets.push_back(std::move(ps));
  }
  if (out.pod_sets.empty()) return Error{"workload.spec.podSets: every pod set has count 0"};
  if (const json* limit = serve::find_field(*spec, "maximumExecutionTimeSeconds"); limit) {
    if (!limit->is_number_integer() || limit->get<int64_t>() <= 0) {
      return Error{"workload.spec.maximumExecutionTimeSeconds: expected a positive integer"};
    }
    out.duration_s = limit->get<int64_t>();
  }

  auto qos = annotation(workload, kQosAnnotation);
  if (!qos.ok()) return qos.status().error();
  if (qos.value()) {
    const std::string& q = *qos.value();
    if (q == "LS" || q == "ls" || q == "latency-sensitive") {
      out.latency_sensitive = true;
    } else if (!(q == "BE" || q == "be" || q == "best-effort")) {
      return Error{fmt::format("annotation {}: '{}' is neither LS nor BE", kQosAnnotation, q)};
    }
  }
  for (const auto& [key, field] : {std::pair{kSlackAnnotation, &out.slack_s},
                                   std::pair{kDurationAnnotation, &out.duration_s}}) {
    auto text = annotation(workload, key);
    if (!text.ok()) return text.status().error();
    if (!text.value()) continue;
    auto seconds = parse_duration_s(*text.value());
    if (!seconds.ok()) return Error{fmt::format("annotation {}: {}", key, seconds.error())};
    *field = seconds.value();
  }
  auto data = annotation(workload, kDataAnnotation);
  if (!data.ok()) return data.status().error();
  if (data.value()) {
    const std::string& d = *data.value();
    double gb = -1;
    const auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), gb);
    if (ec != std::errc() || end != d.data() + d.size() || !std::isfinite(gb) || gb < 0) {
      return Error{
          fmt::format("annotation {}: '{}' is not a number of GB >= 0", kDataAnnotation, d)};
    }
    out.data_gb = gb;
  }
  auto home = annotation(workload, kHomeAnnotation);
  if (!home.ok()) return home.status().error();
  out.home = home.value().value_or("");
  return out;
}

}  // namespace greensched::dispatch
