#include "greensched/serve/deschedule.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <httplib.h>

#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/serve/json_fields.hpp"
#include "greensched/serve/pod_request.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

std::string text_at(const json& object, std::string_view key) {
  const json* v = object.is_object() ? find_field(object, key) : nullptr;
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

const json& object_at(const json& object, std::string_view key) {
  static const json kNull;
  const json* v = object.is_object() ? find_field(object, key) : nullptr;
  return v != nullptr ? *v : kNull;
}

std::string now_rfc3339() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const int64_t s = duration_cast<seconds>(now.time_since_epoch()).count();
  const int64_t ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::string t = format_utc_time(s);  // "YYYY-MM-DD HH:MM:SS"
  if (t.size() > 10) t[10] = 'T';
  return fmt::format("{}.{:03}Z", t, ms);
}

// "ns/name" -> (ns, name) when both may go into an API path.
bool split_key(const std::string& key, std::string& ns, std::string& name) {
  const std::size_t slash = key.find('/');
  if (slash == std::string::npos) return false;
  ns = key.substr(0, slash);
  name = key.substr(slash + 1);
  return kube_name_ok(ns) && kube_name_ok(name);
}

std::string pod_path(const std::string& ns, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
}

// The message of a v1.Status reply, with the causes a PodDisruptionBudget refusal lists.
std::string status_message(const std::string& body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string message = text_at(j, "message");
  const json& causes = object_at(object_at(j, "details"), "causes");
  if (causes.is_array()) {
    for (const json& c : causes) {
      if (const std::string m = text_at(c, "message"); !m.empty()) message += " (" + m + ")";
    }
  }
  if (message.empty()) message = body.substr(0, 300);
  return message;
}

}  // namespace

json EvictionAttempt::to_json() const {
  return json{
      {"time", time},      {"pod", pod},     {"uid", uid},         {"from", from},
      {"to", to},          {"for", for_pod}, {"outcome", outcome}, {"http_status", http_status},
      {"message", message}};
}

Result<json> fetch_defrag_plan(const ExtenderClient& server, int budget,
                               const std::set<std::string>& exclude) {
  // "scheme://host:port" for the client, the rest (serve's --prefix) for the path.
  const std::size_t scheme = server.url.find("://");
  const std::size_t path_at = server.url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  const std::string base = server.url.substr(0, path_at);
  std::string prefix = path_at == std::string::npos ? "/" : server.url.substr(path_at);
  if (prefix.back() != '/') prefix += '/';
  std::string path = fmt::format("{}v1/defrag?budget={}", prefix, budget);
  if (!exclude.empty()) {
    path += "&exclude=";
    bool first = true;
    for (const std::string& key : exclude) {
      path += (first ? "" : ",") + key;
      first = false;
    }
  }
  const std::string url = base + path;
  if (!server.url.starts_with("http://") && !server.url.starts_with("https://")) {
    return Error{fmt::format("{}: not an http:// or https:// URL", server.url), ErrorCode::kIo};
  }
  std::unique_ptr<httplib::Client> client;
  if (!server.client_cert.empty()) {
    client = std::make_unique<httplib::Client>(base, server.client_cert, server.client_key);
  } else {
    client = std::make_unique<httplib::Client>(base);
  }
  if (!client->is_valid()) {
    return Error{
        fmt::format("{}: cannot set up the client (URL, or the client certificate)", server.url),
        ErrorCode::kIo};
  }
  const auto s = static_cast<time_t>(std::floor(server.timeout_seconds));
  const auto us = static_cast<time_t>((server.timeout_seconds - static_cast<double>(s)) * 1e6);
  client->set_connection_timeout(s, us);
  client->set_read_timeout(s, us);
  client->set_write_timeout(s, us);
  if (server.url.starts_with("https://")) {
    if (!server.ca_file.empty()) client->set_ca_cert_path(server.ca_file.c_str());
    client->enable_server_certificate_verification(true);
  }
  httplib::Headers headers{{"Accept", "application/json"}};
  if (!server.token_file.empty()) {
    auto token = read_file(server.token_file);
    if (!token.ok()) {
      return Error{fmt::format("cannot read the token {}", server.token_file), ErrorCode::kIo};
    }
    std::string t = std::move(token.value());
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
    headers.emplace("Authorization", "Bearer " + t);
  }
  auto res = client->Get(path.c_str(), headers);
  if (!res) {
    return Error{fmt::format("GET {}: no answer: {} (each request may take {:g} s)", url,
                             httplib::to_string(res.error()), server.timeout_seconds),
                 ErrorCode::kIo};
  }
  const json reply = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (res->status != 200) {
    const std::string why = text_at(reply, "Error");
    return Error{fmt::format("GET {}: HTTP {}: {}", url, res->status,
                             why.empty() ? res->body.substr(0, 300) : why),
                 ErrorCode::kIo};
  }
  if (!reply.is_object() || !object_at(reply, "plans").is_array()) {
    return Error{fmt::format("GET {}: the reply is not a defragmentation plan", url),
                 ErrorCode::kIo};
  }
  return reply;
}

Result<std::string> eviction_version(const KubeApiOptions& api) {
  auto reply = kube_request(api, "GET", "/api/v1");
  if (!reply.ok()) return Error{reply.error(), ErrorCode::kIo};
  if (reply.value().status != 200) {
    return Error{fmt::format("GET {}/api/v1: HTTP {}: {}", api.server, reply.value().status,
                             status_message(reply.value().body)),
                 ErrorCode::kIo};
  }
  const json list = json::parse(reply.value().body, nullptr, /*allow_exceptions=*/false);
  const json& resources = object_at(list, "resources");
  if (resources.is_array()) {
    for (const json& r : resources) {
      if (text_at(r, "name") != "pods/eviction") continue;
      const std::string group = text_at(r, "group");
      const std::string version = text_at(r, "version");
      if (group.empty() || version.empty()) return std::string("policy/v1beta1");
      return group + "/" + version;
    }
  }
  return Error{fmt::format("{}: the API server offers no pods/eviction (GET /api/v1)", api.server),
               ErrorCode::kIo};
}

std::string eviction_body(const std::string& version, const std::string& ns,
                          const std::string& name, const std::string& uid) {
  json body{{"apiVersion", version},
            {"kind", "Eviction"},
            {"metadata", {{"name", name}, {"namespace", ns}}}};
  if (!uid.empty()) body["deleteOptions"] = {{"preconditions", {{"uid", uid}}}};
  return body.dump();
}

Result<DescheduleReport> deschedule(const ExtenderClient& server, const KubeApiOptions& api,
                                    const DescheduleOptions& options,
                                    const std::function<void(const EvictionAttempt&)>& on_attempt) {
  DescheduleReport report;
  std::set<std::string> exclude;  // pods that may not move: refused, or failed their checks
  std::string version;            // the Eviction's group/version, found before the first
  for (int round = 0; round < std::max(options.max_rounds, 1); ++round) {
    if (round > 0 && report.evicted >= options.budget) break;
    auto plan = fetch_defrag_plan(server, options.budget - report.evicted, exclude);
    if (!plan.ok()) {
      if (round == 0) return Error{plan.error(), ErrorCode::kIo};
      report.failure = plan.error();
      break;
    }
    report.plans.push_back(plan.value());
    const json& plans = object_at(plan.value(), "plans");
    bool any_move = false;
    for (const json& p : plans) any_move |= !object_at(p, "moves").empty();
    if (!any_move) break;
    if (version.empty()) {
      auto found = eviction_version(api);
      if (!found.ok()) {
        if (report.evicted == 0) return Error{found.error(), ErrorCode::kIo};
        report.failure = found.error();
        break;
      }
      version = found.value();
    }

    bool replan = false;  // a move failed: the rest of its plan is dropped, and later plans
    for (const json& p : plans) {
      if (report.evicted >= options.budget || !report.failure.empty()) break;
      const std::string for_pod = text_at(p, "pod");
      const std::string for_uid = text_at(p, "uid");
      const json& moves = object_at(p, "moves");
      if (!moves.is_array() || moves.empty()) continue;
      // The pod the plan is for must still wait: else its moves would free room for nothing.
      std::string ns, name;
      if (!split_key(for_pod, ns, name)) {
        report.notes.push_back(fmt::format("plan for '{}' skipped: not namespace/name", for_pod));
        continue;
      }
      auto waiting = kube_request(api, "GET", pod_path(ns, name));
      if (!waiting.ok()) {
        report.failure = waiting.error();
        break;
      }
      const json pending = json::parse(waiting.value().body, nullptr, false);
      std::string why;
      if (waiting.value().status == 404) {
        why = "the pod is gone";
      } else if (waiting.value().status != 200) {
        why = fmt::format("GET {}: HTTP {}: {}", pod_path(ns, name), waiting.value().status,
                          status_message(waiting.value().body));
      } else if (!for_uid.empty() && text_at(object_at(pending, "metadata"), "uid") != for_uid) {
        why = "another pod of that name waits now";
      } else if (const std::string node = text_at(object_at(pending, "spec"), "nodeName");
                 !node.empty()) {
        why = fmt::format("it was scheduled meanwhile, on {}", node);
      }
      if (!why.empty()) {
        report.notes.push_back(fmt::format("plan for {} skipped: {}", for_pod, why));
        continue;
      }

      for (const json& m : moves) {
        if (report.evicted >= options.budget) break;
        EvictionAttempt a;
        a.pod = text_at(m, "pod");
        a.uid = text_at(m, "uid");
        a.from = text_at(m, "from");
        a.to = text_at(m, "to");
        a.for_pod = for_pod;
        const auto record = [&] {
          a.time = now_rfc3339();
          if (a.outcome == "evicted") {
            ++report.evicted;
          } else {
            exclude.insert(a.pod);
            replan = true;
            if (a.outcome == "refused") ++report.refused;
          }
          report.attempts.push_back(a);
          if (on_attempt) on_attempt(a);
        };
        if (!split_key(a.pod, ns, name)) {
          a.outcome = "error";
          a.message = "not namespace/name";
          record();
          break;
        }
        // The live pod, read again: the planned incarnation, where the plan saw it, movable.
        auto live = kube_request(api, "GET", pod_path(ns, name));
        if (!live.ok()) {
          report.failure = live.error();
          break;
        }
        const json pod = json::parse(live.value().body, nullptr, false);
        const json& metadata = object_at(pod, "metadata");
        if (live.value().status == 404) {
          a.outcome = "gone";
          a.message = "the pod no longer exists";
        } else if (live.value().status != 200) {
          a.outcome = "error";
          a.message = fmt::format("GET {}: HTTP {}: {}", pod_path(ns, name), live.value().status,
                                  status_message(live.value().body));
        } else if (!a.uid.empty() && text_at(metadata, "uid") != a.uid) {
          a.outcome = "moved";
          a.message =
              fmt::format("another incarnation (UID {}) runs now", text_at(metadata, "uid"));
        } else if (object_at(metadata, "deletionTimestamp") != nullptr) {
          a.outcome = "terminating";
          a.message = "the pod is already being deleted";
        } else if (const std::string node = text_at(object_at(pod, "spec"), "nodeName");
                   node != a.from) {
          a.outcome = "moved";
          a.message =
              fmt::format("the pod runs on {}, not on {}", node.empty() ? "no node" : node, a.from);
        } else if (!movable_annotation(pod)) {
          a.outcome = "not_movable";
          a.message =
              fmt::format("the pod is no longer annotated {}: \"true\"", kMovableAnnotation);
        }
        if (!a.outcome.empty()) {
          record();
          break;
        }
        auto evicted = kube_request(api, "POST", pod_path(ns, name) + "/eviction",
                                    eviction_body(version, ns, name, a.uid));
        if (!evicted.ok()) {
          report.failure = evicted.error();
          break;
        }
        a.http_status = evicted.value().status;
        switch (a.http_status) {
          case 200:
          case 201:
            a.outcome = "evicted";
            break;
          case 429:
            // A PodDisruptionBudget (or the API server's rate limit): this pod stays.
            a.outcome = "refused";
            a.message = status_message(evicted.value().body);
            break;
          case 404:
            a.outcome = "gone";
            a.message = status_message(evicted.value().body);
            break;
          case 409:
            a.outcome = "moved";
            a.message = status_message(evicted.value().body);
            break;
          default:
            a.outcome = "error";
            a.message = status_message(evicted.value().body);
            break;
        }
        record();
        if (a.outcome != "evicted") break;
      }
      if (replan || !report.failure.empty()) break;
    }
    if (!replan || !report.failure.empty()) break;
  }
  return report;
}

}  // namespace greensched::serve
