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
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::explain {

// How the narrator is asked to answer: prose, or (a server that can be held to a JSON schema
// through response_format) a text whose numbers and names are placeholders naming facts, which
// greensched fills in (placeholders.hpp). Auto: placeholders where the server is one known to
// honour a schema (llama.cpp's server, vLLM), prose elsewhere.
enum class NarratorMode { kAuto, kProse, kPlaceholders };

struct NarratorConfig {
  std::string url;    // http(s)://host[:port][/base]; "/v1/chat/completions" is appended
                      // unless the path already ends in "/chat/completions" ("/v1": only the rest)
  std::string model;  // empty: the first model the server lists (GET /v1/models)
  std::string api_key;  // sent as "Authorization: Bearer" when non-empty
  int timeout_s = 60;   // for each request: connecting, sending, and waiting for the reply
  int max_tokens = 400;
  int64_t seed = 42;
  NarratorMode mode = NarratorMode::kAuto;
};

// What the server says of itself and its model: GET /v1/models, and GET /props where it exists
// (llama.cpp's server).
struct NarratorInfo {
  std::string model;          // the model asked
  std::string server;         // "llama.cpp", "vllm", "ollama", or its models' owned_by
  bool placeholders = false;  // the request asks for the placeholder JSON
  bool vision = false;        // the model takes images (/props modalities, or the model's
                              // listed capabilities or input modalities)
};

// Why `url` cannot be a narrator's endpoint ("" when it can).
std::string narrator_url_problem(const std::string& url);

// The model to ask: config.model, else the first the server lists at GET /v1/models.
Result<std::string> narrator_model(const NarratorConfig& config);

// Asks the server once (for all the explanations of a run); an error where /v1/models cannot
// be read and no model is named.
Result<NarratorInfo> probe_narrator(const NarratorConfig& config);

struct Narration {
  std::string text;                // the message content as the server gave it
  std::string finish_reason;       // as the server gives it ("stop", "length", ...; "" if none)
  bool asked_json = false;         // the request asked for the placeholder JSON
  std::vector<std::string> notes;  // what did not go as asked (an image refused ...)
};

// `png`: a chart to show the model, sent only where info.vision; a server that refuses the
// request with it is asked again without it (and a note says so).
Result<Narration> narrate(const NarratorConfig& config, const NarratorInfo& info,
                          const nlohmann::json& facts, const std::string& template_text,
                          const std::string& png = "");

}  // namespace greensched::explain
