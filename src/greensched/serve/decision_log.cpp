#include "greensched/serve/decision_log.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace greensched::serve {

Result<std::unique_ptr<DecisionLog>> DecisionLog::open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (f == nullptr) return Error{fmt::format("{}: {}", path, std::strerror(errno))};
  return std::unique_ptr<DecisionLog>(new DecisionLog(f, path));
}

DecisionLog::~DecisionLog() {
  std::fclose(file_);
}

void DecisionLog::append(const nlohmann::json& record) {
  std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  std::lock_guard lock(mu_);
  const bool ok =
      std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0;
  if (!ok && !failed_) {
    failed_ = true;
    fmt::print(stderr, "greensched serve: writing the decision log {} failed: {}\n", path_,
               std::strerror(errno));
  }
}

}  // namespace greensched::serve
