#include "greensched/serve/journal.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace greensched::serve {
namespace {

constexpr std::string_view kSnapshotPrefix = "{\"op\":\"snapshot\"";

std::string sqlite_error(sqlite3* db, std::string_view what) {
  return fmt::format("journal: {}: {}", what, db != nullptr ? sqlite3_errmsg(db) : "no database");
}

}  // namespace

Result<std::unique_ptr<Journal>> Journal::open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{fmt::format("state directory {}: {}", dir, ec.message())};
  const std::string lock_path = dir + "/LOCK";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("{}: {}", lock_path, std::strerror(errno))};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Error{fmt::format("state directory {} is in use by another greensched serve", dir)};
  }
  const std::string path = dir + "/journal.sqlite";
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string message = sqlite_error(db, path);
    sqlite3_close(db);
    ::close(fd);
    return Error{message};
  }
  std::unique_ptr<Journal> journal(new Journal(db, fd));
  for (const char* sql :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA busy_timeout=5000",
        "CREATE TABLE IF NOT EXISTS journal(seq INTEGER PRIMARY KEY, entry TEXT "
        "NOT NULL)"}) {
    if (Status s = journal->exec(sql); !s.ok()) return Error{s.message()};
  }
  // journal_mode answers with the mode in force; make sure WAL took.
  sqlite3_stmt* mode = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &mode, nullptr) != SQLITE_OK ||
      sqlite3_step(mode) != SQLITE_ROW ||
      std::string_view(reinterpret_cast<const char*>(sqlite3_column_text(mode, 0))) != "wal") {
    sqlite3_finalize(mode);
    return Error{sqlite_error(db, "cannot switch to WAL mode")};
  }
  sqlite3_finalize(mode);
  if (sqlite3_prepare_v2(db, "INSERT INTO journal(entry) VALUES (?)", -1, &journal->insert_,
                         nullptr) != SQLITE_OK) {
    return Error{sqlite_error(db, "prepare insert")};
  }
  return journal;
}

Journal::Journal(sqlite3* db, int lock_fd) : db_(db), lock_fd_(lock_fd) {}

Journal::~Journal() {
  sqlite3_finalize(insert_);
  sqlite3_close(db_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

Status Journal::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = fmt::format("journal: {}: {}", sql, message != nullptr ? message : "?");
    sqlite3_free(message);
    return Error{text};
  }
  return Status::Ok();
}

Status Journal::replay(const std::function<Status(const std::string& entry)>& apply) {
  sqlite3_stmt* select = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT entry FROM journal ORDER BY seq", -1, &select, nullptr) !=
      SQLITE_OK) {
    return Error{sqlite_error(db_, "prepare replay")};
  }
  Status result;
  uint64_t since = 0;
  int rc;
  while ((rc = sqlite3_step(select)) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(select, 0));
    const int bytes = sqlite3_column_bytes(select, 0);
    std::string entry(text != nullptr ? text : "", static_cast<std::size_t>(bytes));
    since = entry.starts_with(kSnapshotPrefix) ? 0 : since + 1;
    result = apply(entry);
    if (!result.ok()) break;
  }
  if (result.ok() && rc != SQLITE_DONE) result = Error{sqlite_error(db_, "replay")};
  sqlite3_finalize(select);
  std::lock_guard lock(mu_);
  stats_.since_snapshot = since;
  return result;
}

Status Journal::write(const std::vector<std::string>& entries) {
  if (Status s = exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  for (const std::string& e : entries) {
    sqlite3_bind_text(insert_, 1, e.data(), static_cast<int>(e.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(insert_);
    sqlite3_reset(insert_);
    sqlite3_clear_bindings(insert_);
    if (rc != SQLITE_DONE) {
      std::string message = sqlite_error(db_, "insert");
      if (Status r = exec("ROLLBACK"); !r.ok()) message += "; " + r.message();
      return Error{message, ErrorCode::kIo};
    }
  }
  if (Status s = exec("COMMIT"); !s.ok()) {
    if (Status r = exec("ROLLBACK"); !r.ok()) {
      return Error{fmt::format("{}; {}", s.message(), r.message()), ErrorCode::kIo};
    }
    return s;
  }
  return Status::Ok();
}

uint64_t Journal::enqueue(std::vector<std::string> entries) {
  std::lock_guard lock(mu_);
  queued_upto_ += entries.size();
  for (std::string& e : entries) queue_.push_back(std::move(e));
  return queued_upto_;
}

void Journal::acquire_writer(std::unique_lock<std::mutex>& lock) {
  cv_.wait(lock, [&] { return !writing_; });
  writing_ = true;
}

void Journal::release_writer(std::unique_lock<std::mutex>& lock) {
  (void)lock;
  writing_ = false;
  cv_.notify_all();
}

Status Journal::wait_durable(uint64_t ticket) {
  std::unique_lock lock(mu_);
  while (true) {
    if (durable_upto_ >= ticket) return Status::Ok();
    if (stats_.failed) return Error{stats_.failure};
    if (writing_) {
      cv_.wait(lock);
      continue;
    }
    writing_ = true;
    std::vector<std::string> batch;
    batch.swap(queue_);
    const uint64_t upto = queued_upto_;
    lock.unlock();
    Status s = write(batch);
    lock.lock();
    if (s.ok()) {
      durable_upto_ = upto;
      stats_.events += batch.size();
      stats_.since_snapshot += batch.size();
      ++stats_.commits;
    } else {
      stats_.failed = true;
      stats_.failure = s.message();
    }
    release_writer(lock);
  }
}

Status Journal::flush() {
  uint64_t ticket = 0;
  {
    std::lock_guard lock(mu_);
    ticket = queued_upto_;
  }
  return wait_durable(ticket);
}

Status Journal::compact(const std::string& snapshot) {
  std::unique_lock lock(mu_);
  acquire_writer(lock);
  if (stats_.failed) {
    release_writer(lock);
    return Error{stats_.failure};
  }
  std::vector<std::string> batch;
  batch.swap(queue_);
  const uint64_t upto = queued_upto_;
  lock.unlock();
  Status s = batch.empty() ? Status::Ok() : write(batch);
  bool batch_ok = s.ok();
  if (s.ok()) {
    s = exec("BEGIN IMMEDIATE");
    if (s.ok()) s = exec("DELETE FROM journal");
    if (s.ok()) {
      sqlite3_bind_text(insert_, 1, snapshot.data(), static_cast<int>(snapshot.size()),
                        SQLITE_STATIC);
      const int rc = sqlite3_step(insert_);
      sqlite3_reset(insert_);
      sqlite3_clear_bindings(insert_);
      if (rc != SQLITE_DONE) s = Error{sqlite_error(db_, "insert snapshot")};
    }
    if (s.ok()) s = exec("COMMIT");
    if (!s.ok()) {
      if (Status r = exec("ROLLBACK"); !r.ok()) s = Error{s.message() + "; " + r.message()};
    }
  }
  // Only shrinks the WAL file; the snapshot is durable either way, so a failure is kept in the
  // stats rather than failing the compaction.
  Status truncated = s.ok() ? exec("PRAGMA wal_checkpoint(TRUNCATE)") : Status::Ok();
  lock.lock();
  if (!truncated.ok()) stats_.wal_checkpoint_error = truncated.message();
  if (batch_ok) {
    durable_upto_ = upto;
    stats_.events += batch.size();
    if (!batch.empty()) ++stats_.commits;
    if (s.ok()) {
      stats_.since_snapshot = 0;
    } else {
      stats_.since_snapshot += batch.size();
    }
  } else {
    stats_.failed = true;
    stats_.failure = s.message();
  }
  release_writer(lock);
  return s;
}

JournalStats Journal::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace greensched::serve
