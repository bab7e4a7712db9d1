// The durable record of every change to the extender's state (bind, release, node added),
// kept in SQLite in WAL mode with synchronous=FULL in <state dir>/journal.sqlite. A change is
// acknowledged only after its journal entry is committed, so on restart replaying the journal
// rebuilds exactly the acknowledged state (plus, at most, changes whose commit finished just
// before a crash but whose reply never left).
//
// Group commit: changes are queued in the order they were applied (callers hold the state lock
// while queueing), and whichever waiter finds no commit in flight writes everything queued in
// one transaction, so concurrent binds share one fsync. A failed commit is sticky: the journal
// refuses further changes until restart, and /healthz reports it.
//
// Compaction: the whole journal can be replaced by one snapshot entry (state at that point);
// replay then applies the snapshot and the tail after it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace greensched::serve {

struct JournalStats {
  uint64_t events = 0;   // entries committed since start
  uint64_t commits = 0;  // transactions committed since start
  uint64_t since_snapshot = 0;
  bool failed = false;
  std::string failure;
  std::string wal_checkpoint_error;  // the last failed WAL truncation (harmless: the WAL grows)
};

class Journal {
 public:
  // Opens (creating) <dir>/journal.sqlite; creates `dir` if needed.
  static Result<std::unique_ptr<Journal>> open(const std::string& dir);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Calls `apply` on every stored entry in order (a snapshot first, if any). Stops at the
  // first error `apply` returns. Call before any enqueue.
  Status replay(const std::function<Status(const std::string& entry)>& apply);

  // Queues entries (JSON texts) to be committed in order, as one unit; returns the ticket to
  // wait on. Call with the caller's state lock held so that the journal order is the order in
  // which the changes were applied.
  uint64_t enqueue(std::vector<std::string> entries);
  // Blocks until everything up to `ticket` is committed; an error if the commit failed.
  Status wait_durable(uint64_t ticket);

  // Commits everything queued so far.
  Status flush();

  // Commits what is queued, then replaces every entry with `snapshot` in one transaction.
  // Call with the caller's state lock held (so nothing is queued meanwhile).
  Status compact(const std::string& snapshot);

  JournalStats stats() const;

 private:
  Journal(sqlite3* db, int lock_fd);
  Status write(const std::vector<std::string>& entries);
  Status exec(const char* sql);
  // Takes the commit token (waits for a commit in flight); `lock` holds mu_.
  void acquire_writer(std::unique_lock<std::mutex>& lock);
  void release_writer(std::unique_lock<std::mutex>& lock);

  sqlite3* db_;
  sqlite3_stmt* insert_ = nullptr;
  int lock_fd_;  // flock on <dir>/LOCK: one server per state directory
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> queue_;
  uint64_t queued_upto_ = 0;   // entries ever queued
  uint64_t durable_upto_ = 0;  // entries committed
  bool writing_ = false;
  JournalStats stats_;
};

}  // namespace greensched::serve
