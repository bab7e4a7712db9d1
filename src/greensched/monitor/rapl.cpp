#include "greensched/monitor/rapl.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "greensched/monitor/proc_stats.hpp"

namespace greensched::monitor {
namespace {

Result<uint64_t> read_u64(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.ok()) return Error{text.error()};
  std::string s = text.value();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    return Error{fmt::format("{}: '{}' is not a counter", path, s)};
  }
  return v;
}

}  // namespace

uint64_t rapl_delta_uj(uint64_t before, uint64_t after, uint64_t max_range_uj) {
  if (after >= before) return after - before;
  if (max_range_uj == 0 || before > max_range_uj) return 0;
  return (max_range_uj - before) + after;
}

Result<RaplReader> RaplReader::open(const std::string& sys_root) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(sys_root) / "class" / "powercap";
  std::error_code ec;
  if (!fs::is_directory(base, ec)) {
    return Error{fmt::format("{}: no powercap interface", base.string())};
  }
  RaplReader reader;
  std::string first_error;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const std::string zone = entry.path().filename().string();
    // Top-level zones only: intel-rapl:N (sub-zones intel-rapl:N:M are parts of a package).
    if (zone.rfind("intel-rapl:", 0) != 0 || zone.find(':', 11) != std::string::npos) continue;
    auto name = read_text_file((entry.path() / "name").string());
    if (!name.ok()) continue;
    std::string n = name.value();
    while (!n.empty() && (n.back() == '\n' || n.back() == ' ')) n.pop_back();
    if (n.rfind("package-", 0) != 0) continue;  // psys and others are not a CPU package
    RaplZone z;
    z.zone = zone;
    z.path = entry.path().string();
    std::from_chars(n.data() + 8, n.data() + n.size(), z.package);
    auto range = read_u64(z.path + "/max_energy_range_uj");
    z.max_range_uj = range.ok() ? range.value() : 0;
    auto now = read_u64(z.path + "/energy_uj");
    if (!now.ok()) {
      if (first_error.empty()) first_error = now.error();
      continue;
    }
    z.last_uj = now.value();
    reader.zones_.push_back(std::move(z));
  }
  if (reader.zones_.empty()) {
    if (!first_error.empty()) {
      return Error{fmt::format("{} (RAPL counters are readable by root only since Linux 5.10)",
                               first_error)};
    }
    return Error{fmt::format("{}: no intel-rapl package zone", base.string())};
  }
  std::sort(reader.zones_.begin(), reader.zones_.end(),
            [](const RaplZone& a, const RaplZone& b) { return a.package < b.package; });
  return reader;
}

void RaplReader::read(std::vector<std::string>& errors) {
  for (RaplZone& z : zones_) {
    auto now = read_u64(z.path + "/energy_uj");
    if (!now.ok()) {
      errors.push_back(now.error());
      continue;
    }
    z.total_joules +=
        static_cast<double>(rapl_delta_uj(z.last_uj, now.value(), z.max_range_uj)) / 1e6;
    z.last_uj = now.value();
  }
}

}  // namespace greensched::monitor
