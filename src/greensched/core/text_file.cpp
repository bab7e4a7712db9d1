#include "greensched/core/text_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace greensched {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot open file", path), ErrorCode::kNotFound};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error{fmt::format("{}: read error", path), ErrorCode::kIo};
  return buffer.str();
}

namespace {

// The folder a file goes in, created when absent: --record quick/decisions.jsonl writes into a
// quick/ that --out has not made yet.
Status ensure_parent(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (parent.empty() || std::filesystem::is_directory(parent, ec)) return Status::Ok();
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    return Error{
        fmt::format("{}: cannot create its folder {}: {}", path, parent.string(), ec.message()),
        ErrorCode::kIo};
  }
  return Status::Ok();
}

}  // namespace

Status write_text_file(const std::string& path, std::string_view text) {
  if (Status s = ensure_parent(path); !s.ok()) return s;
  std::ofstream out(path, std::ios::binary);
  if (!out) return Error{fmt::format("{}: cannot open for writing", path), ErrorCode::kIo};
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Error{fmt::format("{}: write failed", path), ErrorCode::kIo};
  return Status::Ok();
}

Status write_stream_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (Status s = ensure_parent(path); !s.ok()) return s;
  std::ofstream out(path, std::ios::binary);
  if (!out) return Error{fmt::format("{}: cannot open for writing", path), ErrorCode::kIo};
  write(out);
  out.close();
  if (!out) return Error{fmt::format("{}: write failed", path), ErrorCode::kIo};
  return Status::Ok();
}

Status write_text_file_atomic(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  if (Status s = write_text_file(tmp, text); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Error{fmt::format("{}: cannot rename to {}: {}", tmp, path, ec.message()),
                 ErrorCode::kIo};
  }
  return Status::Ok();
}

Status write_text_files(const std::string& dir,
                        const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Error{fmt::format("{}: cannot create directory: {}", dir, ec.message()), ErrorCode::kIo};
  }
  for (const auto& [name, text] : files) {
    if (Status s = write_text_file((std::filesystem::path(dir) / name).string(), text); !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

}  // namespace greensched
