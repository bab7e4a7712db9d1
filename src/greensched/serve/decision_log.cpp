#include "greensched/serve/decision_log.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace greensched::serve {

Result<std::unique_ptr<DecisionLog>> DecisionLog::open(const std::string& path, long max_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (f == nullptr) return Error{fmt::format("{}: {}", path, std::strerror(errno))};
  std::fseek(f, 0, SEEK_END);
  return std::unique_ptr<DecisionLog>(new DecisionLog(f, path, std::ftell(f), max_bytes));
}

DecisionLog::~DecisionLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void DecisionLog::append(const nlohmann::json& record) {
  std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  std::lock_guard lock(mu_);
  if (file_ != nullptr && size_ > 0 && size_ + static_cast<long>(line.size()) > max_bytes_) {
    std::fclose(file_);
    std::rename(path_.c_str(), (path_ + ".1").c_str());
    file_ = std::fopen(path_.c_str(), "ae");
    size_ = 0;
  }
  const bool ok = file_ != nullptr &&
                  std::fwrite(line.data(), 1, line.size(), file_) == line.size() &&
                  std::fflush(file_) == 0;
  if (ok) size_ += static_cast<long>(line.size());
  if (!ok && !failed_) {
    failed_ = true;
    fmt::print(stderr, "greensched serve: writing the decision log {} failed: {}\n", path_,
               std::strerror(errno));
  }
}

}  // namespace greensched::serve
