// The extender's decision log: one JSON line per filter that left a pod with no node, with
// the counted reasons, a few nodes per reason with the numbers that decided them, and whether
// free GPU was split across GPUs. The lines are decision records (explain/decision_record.hpp),
// so `greensched explain --record <state>/decisions.jsonl --pod ns/name` reads them. Not
// journalled or fsynced: it is a diagnostic, not state.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::serve {

class DecisionLog {
 public:
  // Opens `path` for appending, creating it if absent.
  static Result<std::unique_ptr<DecisionLog>> open(const std::string& path);
  ~DecisionLog();
  DecisionLog(const DecisionLog&) = delete;
  DecisionLog& operator=(const DecisionLog&) = delete;

  // Appends one record as a line; a failed write is reported once on stderr, not to the caller
  // (a full disk must not fail scheduling).
  void append(const nlohmann::json& record);

 private:
  DecisionLog(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}

  std::mutex mu_;  // taken with no other lock held
  std::FILE* file_;
  std::string path_;
  bool failed_ = false;
};

}  // namespace greensched::serve
