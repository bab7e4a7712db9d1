// An optional narrator: sends an explanation's exact facts to an OpenAI-compatible chat
// endpoint (llama.cpp's server, Ollama's /v1, vLLM, hosted APIs) and returns its prose with
// the reason it stopped. The request asks for a reproducible, bounded answer: temperature 0,
// a seed and max_tokens. Off unless a URL is given; any failure (network, HTTP status,
// malformed reply, timeout) is an error the caller turns into the template text, and a reply
// is shown only once the guard (narration_guard.hpp) has checked it, so an explanation never
// depends on the narrator.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::explain {

struct NarratorConfig {
  std::string url;    // http(s)://host[:port][/base]; "/v1/chat/completions" is appended
                      // unless the path already ends in "/chat/completions" ("/v1": only the rest)
  std::string model;  // empty: the first model the server lists (GET /v1/models)
  std::string api_key;  // sent as "Authorization: Bearer" when non-empty
  int timeout_s = 60;   // for each request: connecting, sending, and waiting for the reply
  int max_tokens = 400;
  int64_t seed = 42;
};

// Why `url` cannot be a narrator's endpoint ("" when it can).
std::string narrator_url_problem(const std::string& url);

// The model to ask: config.model, else the first the server lists at GET /v1/models.
Result<std::string> narrator_model(const NarratorConfig& config);

struct Narration {
  std::string text;
  std::string finish_reason;  // as the server gives it ("stop", "length", ...; "" if none)
};

Result<Narration> narrate(const NarratorConfig& config, const nlohmann::json& facts,
                          const std::string& template_text);

}  // namespace greensched::explain
