// Binds a pod through the Kubernetes API server, as kube-scheduler's default binder does, for
// when the extender is configured with a bindVerb (kube-scheduler then leaves the binding to
// the extender). POSTs a v1.Binding to /api/v1/namespaces/<ns>/pods/<name>/binding; the API
// server copies the Binding's metadata.annotations onto the pod, so the pod receives
// alibabacloud.com/gpu-index in the same step (no separate patch, no webhook needed).
// In a cluster: the API server from KUBERNETES_SERVICE_HOST/PORT, the service account token
// and CA from /var/run/secrets/kubernetes.io/serviceaccount (the token is re-read per call, as
// kubelet rotates it).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/serve/extender.hpp"

namespace httplib {
class Client;
}

namespace greensched::serve {

struct KubeApiOptions {
  std::string server;      // "https://10.0.0.1:443"; "" = in-cluster from the environment
  std::string token_file;  // "" = the service account token
  std::string ca_file;     // "" = the service account CA (https only)
  int timeout_seconds = 10;
};

// Fills in the in-cluster defaults (server from the environment, the service account's token
// and CA) and checks that the token can be read.
Result<KubeApiOptions> resolve_kube_api(KubeApiOptions options);

// The bearer token, re-read on every call (kubelet rotates it).
Result<std::string> read_api_token(const std::string& path);

// A client of the API server with the options' timeouts (reads: `read_timeout_seconds`) and CA.
std::unique_ptr<httplib::Client> kube_api_client(const KubeApiOptions& api,
                                                 int read_timeout_seconds);

// GET `path` (e.g. /api/v1/nodes) as JSON, with the bearer token; errors name the path and
// the HTTP status or the connection failure.
Result<nlohmann::json> kube_get_json(const KubeApiOptions& api, const std::string& path);

// One request to the API server with the bearer token, within api.timeout_seconds
// (connection, write, read): GET, or POST of the JSON `body`. The reply whatever its status;
// an error (naming the method, URL and failure) only when no reply came.
struct KubeReply {
  int status = 0;
  std::string body;
};
Result<KubeReply> kube_request(const KubeApiOptions& api, const std::string& method,
                               const std::string& path, const std::string& body = "");

// Whether `s` may go into an API path as a namespace or name (letters, digits, '-', '.', '_').
bool kube_name_ok(const std::string& s);

// The binder; fails when the in-cluster environment is missing.
Result<Binder> make_kube_binder(KubeApiOptions options);

// The Binding object posted for a pod (exposed for tests).
std::string binding_body(const BindingArgs& args, const std::string& gpu_index);

}  // namespace greensched::serve
