// The work of `greensched deschedule` (apps/greensched/deschedule_command.cpp): ask greensched
// serve for its defragmentation plan (GET <prefix>v1/defrag, serve/defrag.cpp) and carry it out
// through the Kubernetes Eviction API (POST /api/v1/namespaces/<ns>/pods/<name>/eviction), so
// that the pods' controllers recreate them and kube-scheduler, calling the extender, places
// them where the plan said, and the pending pods then fit.
//
// Safety, in the order the checks run:
//  - budget: never more than `budget` evictions in all, whatever the plans say;
//  - the pending pod of a plan must still be pending (same UID, no node), else its plan is
//    skipped;
//  - before each eviction the live pod is read again: the same incarnation (UID), on the node
//    the plan moves it from, not terminating, and annotated greensched.io/movable: "true";
//  - the eviction names the pod's UID as a precondition, and the API server refuses it (429)
//    when a PodDisruptionBudget would be violated. A refused pod is not asked again: the rest
//    of that plan is dropped and the extender is asked for a new plan that leaves the pod
//    where it is (`exclude`), at most `max_rounds` plans in all. Nothing is retried in a loop.
// Every request has its own deadline (the client options' timeouts).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/serve/kube_binder.hpp"

namespace greensched::serve {

// greensched serve as its clients reach it.
struct ExtenderClient {
  std::string url;          // "http://127.0.0.1:8888", with serve's --prefix if it has one
  std::string token_file;   // bearer token (serve's --auth-token-file); "" = none
  std::string ca_file;      // CA of serve's certificate (https); "" = the system's
  std::string client_cert;  // client certificate and key (serve's --client-ca)
  std::string client_key;
  double timeout_seconds = 10;  // per request: connection, write and read each
};

// GET <url>/v1/defrag?budget=N[&exclude=ns/name,...]: the plan. An error (ErrorCode::kIo)
// names the URL and what failed: no answer, an HTTP status with serve's Error, or a reply that
// is not a plan.
Result<nlohmann::json> fetch_defrag_plan(const ExtenderClient& server, int budget,
                                         const std::set<std::string>& exclude);

// The group/version of the API server's Eviction, found as kubectl drain finds it: the
// pods/eviction subresource of GET /api/v1 ("policy/v1beta1" up to Kubernetes 1.21,
// "policy/v1" from 1.22). An error when the server offers no eviction.
Result<std::string> eviction_version(const KubeApiOptions& api);

// The Eviction posted for ns/name; with `uid`, a precondition: only that incarnation.
std::string eviction_body(const std::string& version, const std::string& ns,
                          const std::string& name, const std::string& uid);

// One eviction attempt: a line of deschedule's record (JSON Lines).
struct EvictionAttempt {
  std::string time;     // UTC, RFC 3339
  std::string pod;      // namespace/name
  std::string uid;      // the incarnation planned
  std::string from;     // node it runs on
  std::string to;       // node the plan expects it to be recreated on
  std::string for_pod;  // the pending pod the move is for
  // evicted; refused (429: a PodDisruptionBudget, or the API server's rate limit); not_movable
  // (annotation gone), moved (another node or incarnation), terminating, gone (404); error.
  std::string outcome;
  int http_status = 0;  // of the eviction (0: not posted, the checks stopped it)
  std::string message;
  nlohmann::json to_json() const;
};

struct DescheduleOptions {
  int budget = 0;
  int max_rounds = 3;  // plans asked for, in all
};

struct DescheduleReport {
  std::vector<nlohmann::json> plans;  // each plan asked for, in order
  std::vector<EvictionAttempt> attempts;
  std::vector<std::string> notes;  // plans skipped, and why
  int evicted = 0;
  int refused = 0;
  // Why it stopped early: the API server or serve stopped answering ("" when it did not).
  std::string failure;
};

// Fetches the plan and carries it out (see the top of this file); `on_attempt` sees each
// attempt as it is made (to record it). An error (ErrorCode::kIo) when the first plan cannot
// be fetched or the API server's eviction cannot be found: then nothing was evicted.
Result<DescheduleReport> deschedule(const ExtenderClient& server, const KubeApiOptions& api,
                                    const DescheduleOptions& options,
                                    const std::function<void(const EvictionAttempt&)>& on_attempt);

}  // namespace greensched::serve
