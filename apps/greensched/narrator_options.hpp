// The narrator's command-line options, shared by explain and report: where the
// OpenAI-compatible server is, which model, its key, and how to ask; and opening it (one probe
// for the run, a note and the template text alone where it cannot be read).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "greensched/explain/narrator.hpp"

namespace greensched::app {

struct NarratorOptions {
  std::string url;
  std::string model;
  std::string key_env = "OPENAI_API_KEY";
  int timeout_s = 60;
  int max_tokens = 400;
  explain::NarratorMode mode = explain::NarratorMode::kAuto;
};

void add_narrator_options(CLI::App* cmd, NarratorOptions& o);

// Why --narrator-url cannot be used ("" when it can, or is not given).
std::string narrator_usage_problem(const NarratorOptions& o);

struct OpenNarrator {
  explain::NarratorConfig config;  // url empty: no narrator (none asked, or it cannot be read)
  explain::NarratorInfo info;
  bool on() const { return !config.url.empty(); }
};

// Probes the server once; where it cannot be read, says so on stderr and leaves it off.
OpenNarrator open_narrator(const NarratorOptions& o);

// The model as a person reads it: a file path (llama-server lists its model so) by its name.
std::string model_name(const std::string& model);

}  // namespace greensched::app
