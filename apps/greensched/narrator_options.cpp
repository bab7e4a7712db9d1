#include "narrator_options.hpp"

#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "cli_conventions.hpp"

namespace greensched::app {

void add_narrator_options(CLI::App* cmd, NarratorOptions& o) {
  cmd->add_option("--narrator-url", o.url,
                  "OpenAI-compatible endpoint (llama-server, Ollama's /v1, vLLM, a hosted API) "
                  "that words the facts anew; shown only when every number and name in its "
                  "reply is in the facts (off by default)");
  cmd->add_option("--narrator-model", o.model,
                  "model name for the narrator (default: the first the server lists)");
  cmd->add_option("--narrator-key-env", o.key_env,
                  "environment variable holding the narrator's API key")
      ->capture_default_str();
  as_duration(cmd->add_option("--narrator-timeout", o.timeout_s,
                              "time the narrator may take per request (1s to 1h)")
                  ->capture_default_str(),
              {.bare_unit_s = 1})
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--narrator-mode", o.mode,
                  "prose: ask for a paragraph; placeholders: ask, through response_format's JSON "
                  "schema, for a paragraph whose numbers and names are placeholders that "
                  "greensched fills in; auto: placeholders where the server is llama.cpp's or "
                  "vLLM, prose elsewhere")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, explain::NarratorMode>{
              {"auto", explain::NarratorMode::kAuto},
              {"prose", explain::NarratorMode::kProse},
              {"placeholders", explain::NarratorMode::kPlaceholders}},
          CLI::ignore_case))
      ->default_str("auto");
  cmd->add_option("--narrator-max-tokens", o.max_tokens,
                  "the most tokens the narrator may answer with")
      ->capture_default_str()
      ->check(CLI::Range(16, 32768));
}

std::string narrator_usage_problem(const NarratorOptions& o) {
  return o.url.empty() ? std::string() : explain::narrator_url_problem(o.url);
}

OpenNarrator open_narrator(const NarratorOptions& o) {
  OpenNarrator n;
  if (o.url.empty()) return n;
  n.config.url = o.url;
  n.config.model = o.model;
  const char* key = o.key_env.empty() ? nullptr : std::getenv(o.key_env.c_str());
  n.config.api_key = key != nullptr ? key : "";
  n.config.timeout_s = o.timeout_s;
  n.config.max_tokens = o.max_tokens;
  n.config.mode = o.mode;
  auto probed = explain::probe_narrator(n.config);
  if (probed.ok()) {
    n.info = probed.value();
  } else {
    fmt::print(stderr, "note: {}; showing the template text only\n", probed.error());
    n.config.url.clear();
  }
  return n;
}

std::string model_name(const std::string& model) {
  return model.rfind('/', 0) == 0 ? model.substr(model.rfind('/') + 1) : model;
}

}  // namespace greensched::app
