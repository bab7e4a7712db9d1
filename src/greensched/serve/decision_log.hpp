// The extender's decision log: one JSON line per filter that left a pod with no node, with
// the counted reasons, a few nodes per reason with the numbers that decided them, and whether
// free GPU was split across GPUs. The lines are decision records (sim/decision_record.hpp),
// so `greensched explain --record <state>/decisions.jsonl --pod ns/name` reads them. Not
// journalled or fsynced: it is a diagnostic, not state. kube-scheduler retries unschedulable
// pods every minute, so the file is bounded: past max_bytes it is renamed to <path>.1
// (replacing the previous one) and started afresh.
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
  static constexpr long kDefaultMaxBytes = 64L << 20;

  // Opens `path` for appending, creating it if absent.
  static Result<std::unique_ptr<DecisionLog>> open(const std::string& path,
                                                   long max_bytes = kDefaultMaxBytes);
  ~DecisionLog();
  DecisionLog(const DecisionLog&) = delete;
  DecisionLog& operator=(const DecisionLog&) = delete;

  // Appends one record as a line; a failed write is reported once on stderr, not to the caller
  // (a full disk must not fail scheduling).
  void append(const nlohmann::json& record);

 private:
  DecisionLog(std::FILE* file, std::string path, long size, long max_bytes)
      : file_(file), path_(std::move(path)), size_(size), max_bytes_(max_bytes) {}

  std::mutex mu_;    // taken with no other lock held
  std::FILE* file_;  // null after a failed rotation
  std::string path_;
  long size_;
  long max_bytes_;
  bool failed_ = false;
};

}  // namespace greensched::serve
