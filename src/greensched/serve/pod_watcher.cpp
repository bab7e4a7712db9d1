#include "greensched/serve/pod_watcher.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/serve/json_fields.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

// Watch requests end on the server's side after this long and are renewed; the read timeout
// is longer, so an idle but healthy watch is never taken for a dead one.
constexpr int kWatchSeconds = 300;

std::string string_at(const json& object, std::string_view key) {
  const json* v = object.is_object() ? find_field(object, key) : nullptr;
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

const json& member(const json& object, std::string_view key) {
  static const json kNull;
  const json* v = object.is_object() ? find_field(object, key) : nullptr;
  return v != nullptr ? *v : kNull;
}

bool finished_phase(const std::string& phase) {
  return phase == "Succeeded" || phase == "Failed";
}

std::optional<PodRef> pod_ref(const json& pod) {
  const json& metadata = member(pod, "metadata");
  PodRef ref;
  ref.name = string_at(metadata, "name");
  if (ref.name.empty()) return std::nullopt;
  if (std::string ns = string_at(metadata, "namespace"); !ns.empty()) ref.ns = std::move(ns);
  ref.uid = string_at(metadata, "uid");
  return ref;
}

}  // namespace

std::optional<PodRef> pod_to_release(const json& event) {
  const std::string type = string_at(event, "type");
  const json& object = member(event, "object");
  if (string_at(object, "kind") != "Pod" && !string_at(object, "kind").empty()) return std::nullopt;
  if (type == "DELETED") return pod_ref(object);
  if (type == "ADDED" || type == "MODIFIED") {
    if (finished_phase(string_at(member(object, "status"), "phase"))) return pod_ref(object);
  }
  return std::nullopt;
}

std::vector<PodRef> stale_after_relist(const json& held, const json& list) {
  struct Listed {
    std::string uid;
    bool finished = false;
  };
  std::map<std::string, Listed> listed;
  for (const json& item :
       member(list, "items").is_array() ? member(list, "items") : json::array()) {
    auto ref = pod_ref(item);
    if (!ref) continue;
    listed[ref->key()] =
        Listed{ref->uid, finished_phase(string_at(member(item, "status"), "phase"))};
  }
  std::vector<PodRef> out;
  if (!held.is_array()) return out;
  for (const json& pod : held) {
    PodRef ref;
    ref.name = string_at(pod, "name");
    if (ref.name.empty()) continue;
    if (std::string ns = string_at(pod, "namespace"); !ns.empty()) ref.ns = std::move(ns);
    ref.uid = string_at(pod, "uid");
    auto it = listed.find(ref.key());
    const bool gone = it == listed.end() || it->second.finished ||
                      (!ref.uid.empty() && !it->second.uid.empty() && it->second.uid != ref.uid);
    if (gone) out.push_back(std::move(ref));
  }
  return out;
}

PodWatcher::PodWatcher(Extender& extender, KubeApiOptions api, int retry_seconds)
    : extender_(extender), api_(std::move(api)), retry_seconds_(retry_seconds) {}

PodWatcher::~PodWatcher() {
  stop();
}

Result<json> PodWatcher::list_pods() {
  auto token = read_api_token(api_.token_file);
  if (!token.ok()) return Error{token.error()};
  auto client = kube_api_client(api_, api_.timeout_seconds * 6);
  const httplib::Headers headers{{"Authorization", "Bearer " + token.value()},
                                 {"Accept", "application/json"}};
  auto res = client->Get("/api/v1/pods", headers);
  if (!res) {
    return Error{
        fmt::format("GET {}/api/v1/pods: {}", api_.server, httplib::to_string(res.error()))};
  }
  if (res->status != 200) {
    return Error{
        fmt::format("GET /api/v1/pods: HTTP {}: {}", res->status, res->body.substr(0, 300))};
  }
  json list = parse_json_or_discarded(res->body);
  if (list.is_discarded() || !list.is_object()) return Error{"GET /api/v1/pods: not a PodList"};
  resource_version_ = string_at(member(list, "metadata"), "resourceVersion");
  return list;
}

Result<ResyncOutcome> PodWatcher::initial_sync() {
  auto list = list_pods();
  if (!list.ok()) return Error{list.error()};
  auto pods = parse_resync(list.value());
  if (!pods.ok()) return Error{pods.error()};
  ResyncOutcome outcome = extender_.resync(std::move(pods.value()));
  if (!outcome.error.empty()) return Error{outcome.error};
  return outcome;
}

Status PodWatcher::relist() {
  const json held = extender_.pods();  // before the list: pods bound later are never judged
  auto list = list_pods();
  if (!list.ok()) return Error{list.error()};
  for (const PodRef& ref : stale_after_relist(held, list.value())) {
    if (extender_.release(ref).http_status == 200) {
      std::lock_guard lock(mu_);
      ++stats_.released;
    }
  }
  std::lock_guard lock(mu_);
  ++stats_.relists;
  return Status::Ok();
}

void PodWatcher::handle_line(std::string_view line) {
  if (line.empty()) return;
  const json event = parse_json_or_discarded(line);
  if (event.is_discarded()) return;
  {
    std::lock_guard lock(mu_);
    ++stats_.events;
  }
  const json& object = member(event, "object");
  if (string_at(event, "type") == "ERROR") {
    // 410 Gone: the resourceVersion is too old; anything else: start over the same way.
    relist_ = true;
    return;
  }
  if (std::string rv = string_at(member(object, "metadata"), "resourceVersion"); !rv.empty()) {
    resource_version_ = std::move(rv);
  }
  if (auto ref = pod_to_release(event)) {
    if (extender_.release(*ref).http_status == 200) {
      std::lock_guard lock(mu_);
      ++stats_.released;
    }
    return;
  }
  // A live pod's greensched.io/movable annotation, which may have changed since its bind.
  if (const std::string type = string_at(event, "type"); type == "ADDED" || type == "MODIFIED") {
    if (auto ref = pod_ref(object)) (void)extender_.mark_movable(*ref, movable_annotation(object));
  }
}

Status PodWatcher::watch_once() {
  auto token = read_api_token(api_.token_file);
  if (!token.ok()) return Error{token.error()};
  auto client = kube_api_client(api_, kWatchSeconds + 30);
  const httplib::Headers headers{{"Authorization", "Bearer " + token.value()},
                                 {"Accept", "application/json"}};
  const std::string path = fmt::format(
      "/api/v1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds={}&resourceVersion={}",
      kWatchSeconds, resource_version_);
  std::string pending;
  int status = 0;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Ok();
    active_ = client.get();
  }
  auto res = client->Get(
      path, headers,
      [&](const httplib::Response& response) {
        status = response.status;
        return response.status == 200;
      },
      [&](const char* data, size_t length) {
        pending.append(data, length);
        std::size_t start = 0;
        for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos;
             start = nl + 1) {
          handle_line(std::string_view(pending).substr(start, nl - start));
        }
        pending.erase(0, start);
        return !stopping_ && !relist_;
      });
  {
    std::lock_guard lock(mu_);
    active_ = nullptr;
  }
  if (stopping_ || relist_) return Status::Ok();
  if (status == 410) {
    relist_ = true;
    return Status::Ok();
  }
  if (status != 0 && status != 200) return Error{fmt::format("watch: HTTP {}", status)};
  if (!res && res.error() != httplib::Error::Canceled) {
    return Error{fmt::format("watch {}: {}", api_.server, httplib::to_string(res.error()))};
  }
  return Status::Ok();
}

void PodWatcher::sleep_for_retry() {
  std::unique_lock lock(mu_);
  wake_.wait_for(lock, std::chrono::seconds(retry_seconds_), [&] { return stopping_.load(); });
}

void PodWatcher::run() {
  while (!stopping_) {
    Status s = Status::Ok();
    if (relist_) {
      s = relist();
      if (s.ok()) relist_ = false;
    } else {
      s = watch_once();
    }
    if (!s.ok() && !stopping_) {
      {
        std::lock_guard lock(mu_);
        ++stats_.errors;
      }
      fmt::print(stderr, "greensched serve: pod watch: {}; retrying in {} s\n", s.message(),
                 retry_seconds_);
      sleep_for_retry();
    }
  }
}

void PodWatcher::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void PodWatcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (active_ != nullptr) active_->stop();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

PodWatchStats PodWatcher::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace greensched::serve
