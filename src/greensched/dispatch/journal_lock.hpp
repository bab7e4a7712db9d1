// One writer per decision journal. Two dispatch services appending to one journal would
// interleave their lines and each replay commitments the other never made, so the service
// holds an exclusive lock (flock) on <journal>.lock for as long as it runs; a second one on
// the same journal is refused at start, naming the holder's pid. The lock goes with the
// process: a service that dies (SIGKILL included) frees it at once, so a standby waiting on
// it (`greensched dispatch --standby`) takes over, replaying the same journal. The lock file,
// not the journal, is locked, because compaction replaces the journal by a rename.
//
// The lock is as good as the file system's flock: local disks, and shared ones that honour it
// (NFSv4, CephFS) when the two replicas run on different nodes.
#pragma once

#include <memory>
#include <string>

#include "greensched/core/status.hpp"

namespace greensched::dispatch {

class JournalLock {
 public:
  // Takes the lock of `journal_path` without waiting. Ok(nullptr) when another process holds
  // it and `held` is given (*held then says by whom); an error naming the holder otherwise.
  static Result<std::unique_ptr<JournalLock>> try_acquire(const std::string& journal_path,
                                                          std::string* held = nullptr);
  ~JournalLock();
  JournalLock(const JournalLock&) = delete;
  JournalLock& operator=(const JournalLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  JournalLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

}  // namespace greensched::dispatch
