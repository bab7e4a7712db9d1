// An optional narrator: sends an explanation's exact facts to an OpenAI-compatible chat
// endpoint and returns its prose, to be printed under the facts. Off unless a URL is given;
// any failure (network, HTTP status, malformed reply, timeout) is an error the caller turns
// into the template text, so an explanation never depends on the narrator.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::explain {

struct NarratorConfig {
  std::string url;  // http(s)://host[:port][/base]; "/v1/chat/completions" is appended
                    // unless the path already ends in "/chat/completions"
  std::string model;
  std::string api_key;  // sent as "Authorization: Bearer" when non-empty
  int timeout_s = 30;
};

Result<std::string> narrate(const NarratorConfig& config, const nlohmann::json& facts,
                            const std::string& template_text);

}  // namespace greensched::explain
