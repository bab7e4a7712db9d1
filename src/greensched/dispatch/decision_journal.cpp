#include "greensched/dispatch/decision_journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "greensched/core/text_file.hpp"
#include "greensched/explain/explanation.hpp"

namespace greensched::dispatch {

using nlohmann::json;

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

Status write_all(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("{}: cannot write: {}", path, errno_text()), ErrorCode::kIo};
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

// Appends `text` to `path` (creating it) and syncs it.
Status append_synced(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Error{fmt::format("{}: cannot open for appending: {}", path, errno_text()),
                 ErrorCode::kIo};
  }
  Status s = write_all(fd, text, path);
  if (s.ok() && ::fsync(fd) != 0) {
    s = Error{fmt::format("{}: cannot sync: {}", path, errno_text()), ErrorCode::kIo};
  }
  if (::close(fd) != 0 && s.ok()) {
    s = Error{fmt::format("{}: cannot close: {}", path, errno_text()), ErrorCode::kIo};
  }
  return s;
}

Status sync_folder_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("{}: cannot open: {}", dir, errno_text()), ErrorCode::kIo};
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return Error{fmt::format("{}: cannot sync: {}", dir, errno_text()), ErrorCode::kIo};
  return Status::Ok();
}

// Replaces `path` by `text`: a temporary file written and synced, renamed over it, the folder
// synced.
Status replace_synced(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("{}: cannot create: {}", tmp, errno_text()), ErrorCode::kIo};
  Status s = write_all(fd, text, tmp);
  if (s.ok() && ::fsync(fd) != 0) {
    s = Error{fmt::format("{}: cannot sync: {}", tmp, errno_text()), ErrorCode::kIo};
  }
  if (::close(fd) != 0 && s.ok()) {
    s = Error{fmt::format("{}: cannot close: {}", tmp, errno_text()), ErrorCode::kIo};
  }
  if (s.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Error{fmt::format("{}: cannot rename over {}: {}", tmp, path, errno_text()),
              ErrorCode::kIo};
  }
  if (!s.ok()) {
    std::remove(tmp.c_str());
    return s;
  }
  return sync_folder_of(path);
}

// Cuts `path` at `size` and syncs it.
Status truncate_synced(const std::string& path, uint64_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("{}: cannot open: {}", path, errno_text()), ErrorCode::kIo};
  Status s = Status::Ok();
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 || ::fsync(fd) != 0) {
    s = Error{fmt::format("{}: cannot cut the torn line off: {}", path, errno_text()),
              ErrorCode::kIo};
  }
  ::close(fd);
  return s;
}

bool is_integer(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer();
}

struct Line {
  std::size_t number = 0;
  uint64_t offset = 0;  // of its first byte in the file
  std::string_view text;
  bool newline = false;  // ends with '\n'
  json record;
  std::string problem;  // "" = a good record
};

std::string line_problem(std::string_view text, json* record) {
  try {
    *record = json::parse(text);
  } catch (const json::exception& e) {
    return fmt::format("not JSON ({})", e.what());
  }
  return journal_record_problem(*record);
}

}  // namespace

std::string journal_record_problem(const json& r) {
  if (!r.is_object()) return "not a JSON object";
  if (Status s = explain::check_decision_record(r); !s.ok()) {
    return fmt::format("not a decision record: {}", s.message());
  }
  if (r.value("kind", std::string()) != "dispatch") return "not a dispatch record (kind)";
  auto service = r.find("service");
  if (service == r.end() || !service->is_object()) return "service: missing (an object)";
  if (auto uid = service->find("uid"); uid == service->end() || !uid->is_string()) {
    return "service.uid: missing (a string)";
  }
  for (const char* key : {"wall_s", "until_wall_s"}) {
    if (!is_integer(*service, key)) return fmt::format("service.{}: missing (an integer)", key);
  }
  auto commit = service->find("commit");
  if (commit == service->end() || !commit->is_object()) {
    return "service.commit: missing (an object)";
  }
  if (auto site = commit->find("site"); site == commit->end() || !site->is_string()) {
    return "service.commit.site: missing (a string)";
  }
  for (const char* key : {"from_s", "to_s", "gpu_milli"}) {
    if (!is_integer(*commit, key)) {
      return fmt::format("service.commit.{}: missing (an integer)", key);
    }
  }
  if (auto reply = service->find("reply"); reply == service->end() || !reply->is_object()) {
    return "service.reply: missing (an object)";
  }
  if (auto re = r.find("renominated"); re != r.end()) {
    if (!re->is_object() || !re->contains("reason") || !(*re)["reason"].is_string() ||
        !re->contains("from") || !(*re)["from"].is_string()) {
      return "renominated: expected {\"reason\", \"from\"}";
    }
  }
  return "";
}

void DecisionJournal::warn(const std::string& message) const {
  if (options_.warn) {
    options_.warn(message);
  } else {
    std::fprintf(stderr, "greensched dispatch: warning: %s\n", message.c_str());
  }
}

Result<std::unique_ptr<DecisionJournal>> DecisionJournal::open(JournalOptions options,
                                                               int64_t wall_now_s,
                                                               std::vector<json>* records) {
  std::unique_ptr<DecisionJournal> j(new DecisionJournal(std::move(options)));
  const std::string& path = j->options_.path;
  j->compacted_wall_s_ = wall_now_s;
  j->compact_above_bytes_ = j->options_.compact_bytes;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (Status s = append_synced(path, ""); !s.ok()) {
      return Error{fmt::format("journal {}: cannot create it: {}", path, s.message()),
                   ErrorCode::kIo};
    }
    return j;
  }
  auto text = read_file(path);
  if (!text.ok()) return Error{fmt::format("journal {}", text.error()), ErrorCode::kIo};
  const std::string& all = text.value();

  std::vector<Line> lines;
  for (std::size_t pos = 0, number = 1; pos < all.size(); ++number) {
    const std::size_t end = all.find('\n', pos);
    Line l;
    l.number = number;
    l.offset = pos;
    l.newline = end != std::string::npos;
    l.text = std::string_view(all).substr(pos, (l.newline ? end : all.size()) - pos);
    pos = l.newline ? end + 1 : all.size();
    if (l.text.empty()) continue;  // a blank line holds nothing
    l.problem = line_problem(l.text, &l.record);
    if (l.problem.empty() && !l.newline) l.problem = "no newline at its end (a write cut short)";
    lines.push_back(std::move(l));
  }
  std::vector<const Line*> bad;
  for (const Line& l : lines) {
    if (!l.problem.empty()) bad.push_back(&l);
  }
  const Line* torn = !lines.empty() && !lines.back().problem.empty() ? &lines.back() : nullptr;
  const std::size_t bad_inside = bad.size() - (torn != nullptr ? 1 : 0);
  const std::string rejected = j->rejected_path();
  if (bad_inside > 0 && !j->options_.repair) {
    const Line& first = *bad.front();
    return Error{fmt::format(
        "journal {}:{}: {}{}; start with --record-repair to move the bad "
        "lines to {} and go on without them",
        path, first.number, first.problem,
        bad_inside > 1 ? fmt::format(" (and {} more bad lines)", bad_inside - 1) : "", rejected)};
  }
  if (bad_inside > 0) {
    // Repair: every bad line (a torn last one too) to the side file, then the journal without.
    std::string moved, kept;
    std::vector<std::string> where;
    for (const Line* l : bad) {
      moved += l->text;
      moved += '\n';
      where.push_back(fmt::format("line {}: {}", l->number, l->problem));
    }
    for (const Line& l : lines) {
      if (!l.problem.empty()) continue;
      kept += l.text;
      kept += '\n';
    }
    if (Status s = append_synced(rejected, moved); !s.ok()) {
      return Error{fmt::format("journal {}: repair: {}", path, s.message()), ErrorCode::kIo};
    }
    if (Status s = replace_synced(path, kept); !s.ok()) {
      return Error{fmt::format("journal {}: repair: {}", path, s.message()), ErrorCode::kIo};
    }
    j->warn(fmt::format("journal {}: moved {} bad line{} to {} ({})", path, bad.size(),
                        bad.size() == 1 ? "" : "s", rejected, fmt::join(where, "; ")));
    j->bytes_ = kept.size();
  } else if (torn != nullptr) {
    // A crash mid-write: that decision was never answered. Kept aside, then cut off.
    if (Status s = append_synced(rejected, std::string(torn->text) + "\n"); !s.ok()) {
      return Error{fmt::format("journal {}: {}", path, s.message()), ErrorCode::kIo};
    }
    if (Status s = truncate_synced(path, torn->offset); !s.ok()) {
      return Error{fmt::format("journal {}: {}", path, s.message()), ErrorCode::kIo};
    }
    j->warn(fmt::format("journal {}:{}: torn last line cut off ({}); kept in {}", path,
                        torn->number, torn->problem, rejected));
    j->bytes_ = torn->offset;
  } else {
    j->bytes_ = all.size();
  }
  for (const Line& l : lines) {
    if (!l.problem.empty()) continue;
    if (records->empty()) {
      j->compacted_wall_s_ = l.record["service"]["wall_s"].get<int64_t>();
    }
    records->push_back(l.record);
    j->newest_ = l.record;
    ++j->lines_since_compaction_;
  }
  return j;
}

Status DecisionJournal::append(const json& record) {
  const std::string line = record.dump() + "\n";
  if (Status s = append_synced(options_.path, line); !s.ok()) {
    return Error{fmt::format("journal {}: the decision could not be written ({})", options_.path,
                             s.message()),
                 ErrorCode::kIo};
  }
  bytes_ += line.size();
  newest_ = record;
  ++lines_since_compaction_;
  return Status::Ok();
}

bool DecisionJournal::compaction_due(int64_t wall_now_s) const {
  if (lines_since_compaction_ == 0) return false;
  return (options_.compact_bytes > 0 && bytes_ > compact_above_bytes_) ||
         (options_.compact_age_s > 0 && wall_now_s - compacted_wall_s_ >= options_.compact_age_s);
}

Status DecisionJournal::compact(const std::vector<json>& standing, int64_t wall_now_s,
                                const json& agent_state) {
  json newest = newest_;
  if (!newest.is_null() && !agent_state.is_null()) newest["service"]["agent_state"] = agent_state;
  std::string text;
  bool newest_kept = newest.is_null();
  for (const json& r : standing) {
    const bool is_newest = !newest_kept && r.value("step", json()) == newest.value("step", json());
    text += (is_newest ? newest : r).dump();
    text += '\n';
    newest_kept = newest_kept || is_newest;
  }
  if (!newest_kept) {
    text += newest.dump();
    text += '\n';
  }
  if (Status s = replace_synced(options_.path, text); !s.ok()) {
    return Error{fmt::format("journal {}: compaction: {}", options_.path, s.message()),
                 ErrorCode::kIo};
  }
  newest_ = std::move(newest);
  bytes_ = text.size();
  // A standing set larger than the threshold would be compacted again at every decision.
  compact_above_bytes_ = std::max(options_.compact_bytes, 2 * bytes_);
  compacted_wall_s_ = wall_now_s;
  lines_since_compaction_ = 0;
  ++compactions_;
  return Status::Ok();
}

}  // namespace greensched::dispatch
