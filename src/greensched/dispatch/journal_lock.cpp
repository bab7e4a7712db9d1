#include "greensched/dispatch/journal_lock.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

namespace greensched::dispatch {
namespace {

// The pid the holder wrote into the lock file ("" when unreadable).
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return {};
  std::string pid(buf, static_cast<std::size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

Result<std::unique_ptr<JournalLock>> JournalLock::try_acquire(const std::string& journal_path,
                                                              std::string* held) {
  const std::string path = journal_path + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Error{fmt::format("{}: cannot open: {}", path, std::strerror(errno)), ErrorCode::kIo};
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = holder_of(fd);
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return Error{fmt::format("{}: cannot lock: {}", path, std::strerror(err)), ErrorCode::kIo};
    }
    const std::string who = fmt::format("another dispatch service{} holds {}",
                                        pid.empty() ? "" : " (pid " + pid + ")", path);
    if (held != nullptr) {
      *held = who;
      return std::unique_ptr<JournalLock>();
    }
    return Error{
        fmt::format("{}: one service writes a journal (start a standby with --standby)", who)};
  }
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The pid is only for messages: the lock holds without it.
  }
  return std::unique_ptr<JournalLock>(new JournalLock(path, fd));
}

JournalLock::~JournalLock() {
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace greensched::dispatch
