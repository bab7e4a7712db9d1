#include "greensched/explain/narrator.hpp"

#include <httplib.h>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"

namespace greensched::explain {
namespace {

struct Endpoint {
  std::string origin;  // scheme://host[:port]
  std::string path;
};

Result<Endpoint> split_url(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos ||
      (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)) {
    return Error{fmt::format("narrator URL '{}' must start with http:// or https://", url)};
  }
  const std::size_t slash = url.find('/', scheme + 3);
  Endpoint e;
  e.origin = url.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : url.substr(slash);
  while (!path.empty() && path.back() == '/') path.pop_back();
  const std::string suffix = "/chat/completions";
  if (path.size() >= suffix.size() &&
      path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    e.path = path;
  } else if (path.size() >= 3 && path.compare(path.size() - 3, 3, "/v1") == 0) {
    e.path = path + suffix;
  } else {
    e.path = path + "/v1" + suffix;
  }
  return e;
}

}  // namespace

Result<std::string> narrate(const NarratorConfig& config, const nlohmann::json& facts,
                            const std::string& template_text) {
  auto endpoint = split_url(config.url);
  if (!endpoint.ok()) return Error{endpoint.error()};
  if (config.model.empty()) return Error{"narrator needs a model name (--narrator-model)"};

  const nlohmann::json body = {
      {"model", config.model},
      {"temperature", 0},
      {"messages",
       {{{"role", "system"},
         {"content",
          "You explain a GPU cluster scheduler's decision to an operator in a short, plain "
          "paragraph. Use only the facts given; do not invent numbers."}},
        {{"role", "user"},
         {"content", fmt::format("Facts (JSON):\n{}\n\nExact explanation:\n{}", facts.dump(2),
                                 template_text)}}}}};
  httplib::Client client(endpoint.value().origin);
  client.set_connection_timeout(config.timeout_s, 0);
  client.set_read_timeout(config.timeout_s, 0);
  client.set_write_timeout(config.timeout_s, 0);
  httplib::Headers headers;
  if (!config.api_key.empty()) headers.emplace("Authorization", "Bearer " + config.api_key);
  auto res = client.Post(endpoint.value().path, headers, body.dump(), "application/json");
  if (!res) {
    return Error{fmt::format("narrator: {} {}: {}", endpoint.value().origin, endpoint.value().path,
                             httplib::to_string(res.error()))};
  }
  if (res->status != 200) {
    return Error{fmt::format("narrator: HTTP {} from {}{}", res->status, endpoint.value().origin,
                             endpoint.value().path)};
  }
  auto reply = parse_json_text(res->body, "narrator: reply");
  if (!reply.ok()) return Error{reply.error()};
  try {
    const nlohmann::json& content = reply.value().at("choices").at(0).at("message").at("content");
    if (!content.is_string() || content.get<std::string>().empty()) {
      return Error{"narrator: the reply has no message content"};
    }
    return content.get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("narrator: malformed reply: {}", e.what())};
  }
}

}  // namespace greensched::explain
