#include "greensched/serve/kube_binder.hpp"

#include <cstdlib>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "greensched/core/text_file.hpp"
#include "greensched/serve/gpu_index.hpp"

namespace greensched::serve {
namespace {

constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

}  // namespace

bool kube_name_ok(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

Result<std::string> read_api_token(const std::string& path) {
  auto text = read_file(path);
  if (!text.ok()) return Error{fmt::format("cannot read the API token {}", path)};
  std::string token = std::move(text.value());
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  return token;
}

std::string binding_body(const BindingArgs& args, const std::string& gpu_index) {
  nlohmann::json metadata{{"name", args.pod.name}, {"namespace", args.pod.ns}};
  if (!args.pod.uid.empty()) metadata["uid"] = args.pod.uid;
  if (!gpu_index.empty()) {
    metadata["annotations"] = nlohmann::json{{std::string(kGpuIndexAnnotation), gpu_index}};
  }
  return nlohmann::json{{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", std::move(metadata)},
                        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", args.node}}}}
      .dump();
}

Result<KubeApiOptions> resolve_kube_api(KubeApiOptions options) {
  if (options.server.empty()) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (host == nullptr || port == nullptr) {
      return Error{
          "Kubernetes API: not in a cluster (KUBERNETES_SERVICE_HOST/PORT unset); give "
          "--kube-api URL"};
    }
    const std::string h = host;
    options.server = h.find(':') != std::string::npos ? fmt::format("https://[{}]:{}", h, port)
                                                      : fmt::format("https://{}:{}", h, port);
  }
  if (options.token_file.empty()) options.token_file = std::string(kServiceAccountDir) + "/token";
  if (options.ca_file.empty() && options.server.starts_with("https://")) {
    options.ca_file = std::string(kServiceAccountDir) + "/ca.crt";
  }
  if (auto token = read_api_token(options.token_file); !token.ok()) return Error{token.error()};
  return options;
}

std::unique_ptr<httplib::Client> kube_api_client(const KubeApiOptions& api,
                                                 int read_timeout_seconds) {
  auto client = std::make_unique<httplib::Client>(api.server);
  client->set_connection_timeout(api.timeout_seconds, 0);
  client->set_read_timeout(read_timeout_seconds, 0);
  client->set_write_timeout(api.timeout_seconds, 0);
  if (!api.ca_file.empty()) {
    client->set_ca_cert_path(api.ca_file.c_str());
    client->enable_server_certificate_verification(true);
  }
  return client;
}

Result<nlohmann::json> kube_get_json(const KubeApiOptions& api, const std::string& path) {
  auto token = read_api_token(api.token_file);
  if (!token.ok()) return Error{token.error()};
  auto client = kube_api_client(api, api.timeout_seconds);
  const httplib::Headers headers{{"Authorization", "Bearer " + token.value()},
                                 {"Accept", "application/json"}};
  auto res = client->Get(path.c_str(), headers);
  if (!res) {
    return Error{fmt::format("GET {}{}: {}", api.server, path, httplib::to_string(res.error()))};
  }
  if (res->status != 200) {
    return Error{fmt::format("GET {}{}: HTTP {}: {}", api.server, path, res->status,
                             res->body.substr(0, 300))};
  }
  auto parsed = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    return Error{fmt::format("GET {}{}: the reply is not JSON", api.server, path)};
  return parsed;
}

Result<KubeReply> kube_request(const KubeApiOptions& api, const std::string& method,
                               const std::string& path, const std::string& body) {
  auto token = read_api_token(api.token_file);
  if (!token.ok()) return Error{token.error()};
  auto client = kube_api_client(api, api.timeout_seconds);
  client->set_tcp_nodelay(true);
  const httplib::Headers headers{{"Authorization", "Bearer " + token.value()},
                                 {"Accept", "application/json"}};
  httplib::Result res = method == "POST"
                            ? client->Post(path.c_str(), headers, body, "application/json")
                            : client->Get(path.c_str(), headers);
  if (!res) {
    return Error{
        fmt::format("{} {}{}: {}", method, api.server, path, httplib::to_string(res.error())),
        ErrorCode::kIo};
  }
  return KubeReply{res->status, res->body};
}

Result<Binder> make_kube_binder(KubeApiOptions options) {
  auto resolved = resolve_kube_api(std::move(options));
  if (!resolved.ok()) return Error{resolved.error()};
  options = std::move(resolved.value());
  return Binder([options](const BindingArgs& args, const std::string& gpu_index) -> Status {
    if (!kube_name_ok(args.pod.ns) || !kube_name_ok(args.pod.name)) {
      return Error{"pod namespace or name is not a valid Kubernetes name"};
    }
    auto token = read_api_token(options.token_file);
    if (!token.ok()) return Error{token.error()};
    auto client = kube_api_client(options, options.timeout_seconds);
    client->set_tcp_nodelay(true);
    const httplib::Headers headers{{"Authorization", "Bearer " + token.value()},
                                   {"Accept", "application/json"}};
    const std::string path =
        fmt::format("/api/v1/namespaces/{}/pods/{}/binding", args.pod.ns, args.pod.name);
    auto res =
        client->Post(path.c_str(), headers, binding_body(args, gpu_index), "application/json");
    if (!res) {
      return Error{
          fmt::format("POST {}{}: {}", options.server, path, httplib::to_string(res.error()))};
    }
    if (res->status != 200 && res->status != 201) {
      return Error{
          fmt::format("POST {}: HTTP {}: {}", path, res->status, res->body.substr(0, 300))};
    }
    return Status::Ok();
  });
}

}  // namespace greensched::serve
