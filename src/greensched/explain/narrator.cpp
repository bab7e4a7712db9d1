#include "greensched/explain/narrator.hpp"

#include <httplib.h>
#include <openssl/evp.h>

#include <algorithm>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/explain/placeholders.hpp"

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

namespace {

// GET /v1/models: the entry of the model asked (or the first).
// `unreachable`, where given, is set when no HTTP answer came.
Result<nlohmann::json> listed_model(const NarratorConfig& config, const Endpoint& endpoint,
                                    bool* unreachable = nullptr) {
  // The models list sits beside chat/completions.
  std::string path = endpoint.path;
  path.resize(path.size() - std::string_view("/chat/completions").size());
  path += "/models";
  httplib::Client client = client_for(config, endpoint);
  auto res = client.Get(path, auth_headers(config));
  if (!res) {
    if (unreachable != nullptr) *unreachable = true;
    return Error{
        fmt::format("narrator: {}{}: {}", endpoint.origin, path, httplib::to_string(res.error()))};
  }
  if (res->status != 200) {
    return Error{fmt::format("narrator: HTTP {} from {}{} (name one with --narrator-model)",
                             res->status, endpoint.origin, path)};
  }
  auto list = parse_json_text(res->body, "narrator: models");
  if (!list.ok()) return Error{list.error()};
  const nlohmann::json* data = json_member(list.value(), "data");
  if (data != nullptr && data->is_array()) {
    for (const nlohmann::json& m : *data) {
      if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
      if (config.model.empty() || m["id"] == config.model) return m;
    }
  }
  return Error{fmt::format("narrator: {}{} lists no {} (name one with --narrator-model)",
                           endpoint.origin, path,
                           config.model.empty() ? "model" : "model " + config.model)};
}

bool lists(const nlohmann::json& entry, const char* key, std::initializer_list<const char*> any) {
  if (!entry.is_array()) return false;
  for (const nlohmann::json& e : entry) {
    for (const char* want : any) {
      if (e.is_string() && e.get<std::string>() == want) return true;
    }
  }
  (void)key;
  return false;
}

// The image as a data URL (base64 by OpenSSL's encoder).
std::string png_data_url(const std::string& png) {
  std::string out((png.size() + 2) / 3 * 4 + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(png.data()),
                                static_cast<int>(png.size()));
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return "data:image/png;base64," + out;
}

}  // namespace

Result<std::string> narrator_model(const NarratorConfig& config) {
  if (!config.model.empty()) return config.model;
  auto endpoint = split_url(config.url);
  if (!endpoint.ok()) return Error{endpoint.error()};
  auto entry = listed_model(config, endpoint.value());
  if (!entry.ok()) return Error{entry.error()};
  return entry.value()["id"].get<std::string>();
}

Result<NarratorInfo> probe_narrator(const NarratorConfig& config) {
  auto endpoint = split_url(config.url);
  if (!endpoint.ok()) return Error{endpoint.error()};
  NarratorInfo info;
  bool unreachable = false;
  auto entry = listed_model(config, endpoint.value(), &unreachable);
  if (!entry.ok()) {
    if (config.model.empty() || unreachable) return Error{entry.error()};
    info.model = config.model;  // named, and the server lists none: ask it anyway
  } else {
    const nlohmann::json& m = entry.value();
    info.model = m["id"].get<std::string>();
    if (m.contains("owned_by") && m["owned_by"].is_string()) {
      info.server = m["owned_by"].get<std::string>();
    }
    info.vision =
        lists(m.value("capabilities", nlohmann::json()), "capabilities", {"vision", "image"}) ||
        (m.contains("architecture") && m["architecture"].is_object() &&
         lists(m["architecture"].value("input_modalities", nlohmann::json()), "input_modalities",
               {"image"}));
  }
  // llama.cpp's server says what its model takes at /props (at the server's root).
  httplib::Client client = client_for(config, endpoint.value());
  if (auto res = client.Get("/props", auth_headers(config)); res && res->status == 200) {
    const nlohmann::json props = parse_json_or_discarded(res->body);
    if (props.is_object() && (props.contains("default_generation_settings") ||
                              props.contains("modalities") || props.contains("build_info"))) {
      info.server = "llama.cpp";
      if (const nlohmann::json* modalities = json_member(props, "modalities");
          modalities != nullptr && modalities->is_object()) {
        info.vision = modalities->value("vision", false);
      }
    }
  }
  if (info.server == "llamacpp") info.server = "llama.cpp";
  switch (config.mode) {
    case NarratorMode::kProse:
      info.placeholders = false;
      break;
    case NarratorMode::kPlaceholders:
      info.placeholders = true;
      break;
    case NarratorMode::kAuto:
      info.placeholders = info.server == "llama.cpp" || info.server == "vllm";
      break;
  }
  return info;
}

Result<Narration> narrate(const NarratorConfig& config, const NarratorInfo& info,
                          const nlohmann::json& facts, const std::string& template_text,
                          const std::string& png) {
  auto endpoint = split_url(config.url);
  if (!endpoint.ok()) return Error{endpoint.error()};
  Narration out;
  out.asked_json = info.placeholders;
  std::string system =
      "You explain a GPU cluster scheduler's decision to an operator in a short, plain "
      "paragraph of two or three sentences. Use only the facts given: every number and "
      "name you write must appear in them, written as they are written there. Do not "
      "compute new numbers (no sums, differences or percentages of your own).";
  std::string user;
  nlohmann::ordered_json body = {{"model", info.model},
                                 {"temperature", 0},
                                 {"seed", config.seed},
                                 {"max_tokens", config.max_tokens}};
  if (info.placeholders) {
    const nlohmann::json values = placeholder_values(facts);
    system +=
        " Answer with JSON: {\"text\": your paragraph, \"facts\": the keys you used}. In the "
        "text write every number and name as its placeholder in braces, exactly as the "
        "explanation below writes it, e.g. \"{pod} went to {chosen_node}, {margin} points "
        "ahead.\"; never write a digit yourself.";
    std::string listing;
    for (const auto& [key, value] : values.items()) {
      listing += fmt::format("{{{}}} = {}\n", key, value.get<std::string>());
    }
    user = fmt::format("Placeholders:\n{}\nExplanation to reword:\n{}", listing,
                       with_placeholders(template_text, values));
    body["response_format"] = {
        {"type", "json_schema"},
        {"json_schema",
         {{"name", "narration"}, {"strict", true}, {"schema", placeholder_schema(values)}}}};
  } else {
    user = fmt::format("Facts (JSON):\n{}\n\nExact explanation:\n{}", facts.dump(2), template_text);
  }
  if (const auto q = facts.find("question"); q != facts.end() && q->is_string()) {
    // explain --ask: the question first, answered from the facts alone.
    user = fmt::format(
        "Question: {}\n\n{}\n\nAnswer the question from these facts alone; where they do not "
        "answer it, say what they do say.",
        q->get<std::string>(), user);
  }
  const bool with_image = info.vision && !png.empty();
  const auto messages = [&](bool image) {
    nlohmann::ordered_json content = user;
    if (image) {
      content = nlohmann::ordered_json::array(
          {{{"type", "text"}, {"text", user + "\n\nThe chart shows the same decision."}},
           {{"type", "image_url"}, {"image_url", {{"url", png_data_url(png)}}}}});
    }
    return nlohmann::ordered_json::array(
        {{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", content}}});
  };
  httplib::Client client = client_for(config, endpoint.value());
  body["messages"] = messages(with_image);
  auto res =
      client.Post(endpoint.value().path, auth_headers(config), body.dump(), "application/json");
  if (with_image && res && res->status != 200) {
    // llama.cpp's server without a projector answers 500 to an image: the text alone then.
    out.notes.push_back(
        fmt::format("the narrator refused the chart (HTTP {}); sent the text only", res->status));
    body["messages"] = messages(false);
    res = client.Post(endpoint.value().path, auth_headers(config), body.dump(), "application/json");
  }
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
    out.text = content.get<std::string>();
    if (const auto it = choice.find("finish_reason"); it != choice.end() && it->is_string()) {
      out.finish_reason = it->get<std::string>();
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("narrator: malformed reply: {}", e.what())};
  }
}

}  // namespace greensched::explain
