// The dispatch service's decision journal: JSON Lines, one dispatch record per decision (the
// record `greensched explain` reads, with a "service" object holding what a restart needs:
// the workload's uid, its commitment and the reply). A line is appended and synced before its
// decision is answered, so a restart answers as before.
//
// Opening reads every line back and recovers from what a crash or a hand edit leaves:
//  - a torn last line (no trailing newline, or not a record: a write cut short) is cut off,
//    copied to <journal>.rejected first, with a warning naming file:line;
//  - a bad line elsewhere refuses the start, the error naming file:line and what is wrong;
//    with `repair`, every bad line is moved to <journal>.rejected (appended, as it was) and
//    the journal rewritten without them, with a warning saying how many moved and where.
//
// Compaction: the journal only grows, one line per decision, so once it is over
// compact_bytes, or compact_age_s has passed since it was last compacted, it is rewritten to
// hold only the records it is given (the decisions still standing) and the newest record
// (whose step carries the decision count, and which carries the agent's state). The new journal is
// written to a temporary file, synced, renamed over the old one, and the folder synced: a crash
// leaves the old journal or the new one, never half of either. The kept lines are the records as
// first written, so replay and `greensched explain` read a compacted journal as any other.
//
// Not thread-safe: the service calls it under its mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::dispatch {

struct JournalOptions {
  std::string path;
  bool repair = false;                          // move bad lines aside instead of failing
  uint64_t compact_bytes = uint64_t{64} << 20;  // 0: never by size
  int64_t compact_age_s = 24 * 3600;            // 0: never by age
  // Where warnings go (a torn line cut off, bad lines moved); nullptr: standard error.
  std::function<void(const std::string&)> warn;
};

// Why `record` is not a journal record ("" when it is): a dispatch record explain reads, with
// the service's fields of the right types.
std::string journal_record_problem(const nlohmann::json& record);

class DecisionJournal {
 public:
  // Opens the journal (creating it), recovering as above; `records` gets its records in order.
  static Result<std::unique_ptr<DecisionJournal>> open(JournalOptions options, int64_t wall_now_s,
                                                       std::vector<nlohmann::json>* records);

  // Appends one record and syncs it.
  Status append(const nlohmann::json& record);

  // Whether the journal has outgrown its size or age.
  bool compaction_due(int64_t wall_now_s) const;
  // Replaces the journal with `standing` (in the order given) and the newest record; a
  // non-null `agent_state` goes into the newest record as service.agent_state (replacing one
  // there): what the agent had learned by then, which the dropped records no longer tell.
  Status compact(const std::vector<nlohmann::json>& standing, int64_t wall_now_s,
                 const nlohmann::json& agent_state = nullptr);

  const std::string& path() const { return options_.path; }
  std::string rejected_path() const { return options_.path + ".rejected"; }
  uint64_t bytes() const { return bytes_; }
  uint64_t compactions() const { return compactions_; }

 private:
  explicit DecisionJournal(JournalOptions options) : options_(std::move(options)) {}
  void warn(const std::string& message) const;

  JournalOptions options_;
  uint64_t bytes_ = 0;
  uint64_t compact_above_bytes_ = 0;  // compact_bytes, or more when the standing set is larger
  int64_t compacted_wall_s_ = 0;      // when last compacted (or its first record's time)
  uint64_t lines_since_compaction_ = 0;
  uint64_t compactions_ = 0;
  nlohmann::json newest_;  // the last record (null when none)
};

}  // namespace greensched::dispatch
