#include "greensched/sim/shard.hpp"

#include <charconv>

#include <fmt/format.h>

namespace greensched::sim {
namespace {

bool parse_size(std::string_view text, std::size_t& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

}  // namespace

Result<Shard> parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !parse_size(text.substr(0, slash), s.index) ||
      !parse_size(text.substr(slash + 1), s.count)) {
    return Error{
        fmt::format("--shard: expected I/N (0-based index I of N shards), got '{}'", text)};
  }
  if (s.count < 1) return Error{fmt::format("--shard {}: the shard count N must be >= 1", text)};
  if (s.index >= s.count) {
    return Error{
        fmt::format("--shard {}: the index I is 0-based and must be < N ({})", text, s.count)};
  }
  return s;
}

RunRange shard_range(const Shard& shard, std::size_t total) {
  return RunRange{shard.index * total / shard.count, (shard.index + 1) * total / shard.count};
}

Status check_shard_fits(const Shard& shard, std::size_t total) {
  if (shard.count > total) {
    return Error{fmt::format("--shard {}/{}: the plan has {} run(s); use at most {} shards",
                             shard.index, shard.count, total, total)};
  }
  return Status::Ok();
}

Result<RunRange> shard_runs(std::string_view text, std::size_t total) {
  if (text.empty()) return RunRange{0, total};
  auto shard = parse_shard(text);
  if (!shard.ok()) return shard.status().error();
  if (Status s = check_shard_fits(shard.value(), total); !s.ok()) return s.error();
  return shard_range(shard.value(), total);
}

std::string plan_fingerprint(std::string_view description,
                             const std::vector<std::string>& run_ids) {
  uint64_t h = 14695981039346656037ull;
  const auto add = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // a separator no text holds
    h *= 1099511628211ull;
  };
  add(description);
  for (const std::string& id : run_ids) add(id);
  return fmt::format("{:016x}", h);
}

}  // namespace greensched::sim
