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

httplib::Client client_for(const NarratorConfig& config, const Endpoint& endpoint) {
  httplib::Client client(endpoint.origin);
  client.set_connection_timeout(config.timeout_s, 0);
  client.set_read_timeout(config.timeout_s, 0);
  client.set_write_timeout(config.timeout_s, 0);
  return client;
}

httplib::Headers auth_headers(const NarratorConfig& config) {
  httplib::Headers headers;
  if (!config.api_key.empty()) headers.emplace("Authorization", "Bearer " + config.api_key);
  return headers;
}

}  // namespace

std::string narrator_url_problem(const std::string& url) {
  auto e = split_url(url);
  if (!e.ok()) return e.error();
  const std::string& origin = e.value().origin;
  const std::size_t host = origin.find("://") + 3;
  if (host >= origin.size() || origin[host] == ':') {
    return fmt::format("narrator URL '{}' names no host", url);
  }
  return "";
}

Result<std::string> narrator_model(const NarratorConfig& config) {
  if (!config.model.empty()) return config.model;
  auto endpoint = split_url(config.url);
  if (!endpoint.ok()) return Error{endpoint.error()};
  // The models list sits beside chat/completions.
  std::string path = endpoint.value().path;
  path.resize(path.size() - std::string_view("/chat/completions").size());
  path += "/models";
  httplib::Client client = client_for(config, endpoint.value());
  auto res = client.Get(path, auth_headers(config));
  if (!res) {
    return Error{fmt::format("narrator: {}{}: {}", endpoint.value().origin, path,
                             httplib::to_string(res.error()))};
  }
  if (res->status != 200) {
    return Error{fmt::format("narrator: HTTP {} from {}{} (name one with --narrator-model)",
                             res->status, endpoint.value().origin, path)};
  }
  auto list = parse_json_text(res->body, "narrator: models");
  if (!list.ok()) return Error{list.error()};
  const nlohmann::json* data = json_member(list.value(), "data");
  if (data == nullptr || !data->is_array() || data->empty() || !(*data)[0].is_object() ||
      !(*data)[0].contains("id") || !(*data)[0]["id"].is_string()) {
    return Error{fmt::format("narrator: {}{} lists no model (name one with --narrator-model)",
                             endpoint.value().origin, path)};
  }
  return (*data)[0]["id"].get<std::string>();
}

Result<Narration> narrate(const NarratorConfig& config, const nlohmann::json& facts,
                          const std::string& template_text) {
  auto endpoint = split_url(config.url);
  if (!endpoint.ok()) return Error{endpoint.error()};
  auto model = narrator_model(config);
  if (!model.ok()) return Error{model.error()};

  const nlohmann::json body = {
      {"model", model.value()},
      {"temperature", 0},
      {"seed", config.seed},
      {"max_tokens", config.max_tokens},
      {"messages",
       {{{"role", "system"},
         {"content",
          "You explain a GPU cluster scheduler's decision to an operator in a short, plain "
          "paragraph of two or three sentences. Use only the facts given: every number and "
          "name you write must appear in them, written as they are written there. Do not "
          "compute new numbers (no sums, differences or percentages of your own)."}},
        {{"role", "user"},
         {"content", fmt::format("Facts (JSON):\n{}\n\nExact explanation:\n{}", facts.dump(2),
                                 template_text)}}}}};
  httplib::Client client = client_for(config, endpoint.value());
  auto res =
      client.Post(endpoint.value().path, auth_headers(config), body.dump(), "application/json");
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
    const nlohmann::json& choice = reply.value().at("choices").at(0);
    const nlohmann::json& content = choice.at("message").at("content");
    if (!content.is_string() || content.get<std::string>().empty()) {
      return Error{"narrator: the reply has no message content"};
    }
    Narration n;
    n.text = content.get<std::string>();
    if (const auto it = choice.find("finish_reason"); it != choice.end() && it->is_string()) {
      n.finish_reason = it->get<std::string>();
    }
    return n;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("narrator: malformed reply: {}", e.what())};
  }
}

}  // namespace greensched::explain
