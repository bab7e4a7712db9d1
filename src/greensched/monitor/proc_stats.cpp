#include "greensched/monitor/proc_stats.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace greensched::monitor {
namespace {

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool to_u64(std::string_view s, uint64_t& out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

template <typename F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t pos = 0;
  std::size_t number = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    f(text.substr(pos, end - pos), number);
    pos = end + 1;
  }
}

}  // namespace

Result<CpuStat> parse_proc_stat(std::string_view text, const std::string& source) {
  CpuStat stat;
  bool have_all = false;
  std::optional<Error> err;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    if (err || line.substr(0, 3) != "cpu") return;
    const auto f = split_ws(line);
    // cpuN user nice system idle iowait irq softirq steal [guest guest_nice]
    if (f.size() < 5) {
      err = Error{fmt::format("{}:{}: expected at least 4 CPU times", source, number)};
      return;
    }
    uint64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (std::size_t i = 1; i < f.size() && i <= 8; ++i) {
      if (!to_u64(f[i], v[i - 1])) {
        err = Error{fmt::format("{}:{}: '{}' is not a tick count", source, number, f[i])};
        return;
      }
    }
    CpuTimes t;
    t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    t.idle = v[3] + v[4];
    const std::string_view id = f[0].substr(3);
    if (id.empty()) {
      t.cpu = -1;
      stat.all = t;
      have_all = true;
      return;
    }
    int cpu = 0;
    const auto [ptr, ec] = std::from_chars(id.data(), id.data() + id.size(), cpu);
    if (ec != std::errc() || ptr != id.data() + id.size() || cpu < 0) {
      err = Error{fmt::format("{}:{}: bad CPU name '{}'", source, number, f[0])};
      return;
    }
    t.cpu = cpu;
    stat.cores.push_back(t);
  });
  if (err) return *err;
  if (!have_all) return Error{fmt::format("{}: no aggregate 'cpu' line", source)};
  return stat;
}

double utilization(const CpuTimes& before, const CpuTimes& after) {
  if (after.total() <= before.total() || after.busy < before.busy) return 0.0;
  const double busy = static_cast<double>(after.busy - before.busy);
  const double total = static_cast<double>(after.total() - before.total());
  const double u = busy / total;
  return u < 0 ? 0.0 : (u > 1 ? 1.0 : u);
}

Result<MemInfo> parse_meminfo(std::string_view text, const std::string& source) {
  MemInfo m;
  bool total = false, available = false;
  std::optional<Error> err;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    if (err) return;
    const bool is_total = line.substr(0, 9) == "MemTotal:";
    const bool is_avail = line.substr(0, 13) == "MemAvailable:";
    if (!is_total && !is_avail) return;
    const auto f = split_ws(line);
    uint64_t kib = 0;
    if (f.size() < 2 || !to_u64(f[1], kib) || (f.size() > 2 && f[2] != "kB")) {
      err = Error{fmt::format("{}:{}: cannot read '{}'", source, number, line)};
      return;
    }
    (is_total ? m.total_bytes : m.available_bytes) = kib * 1024;
    (is_total ? total : available) = true;
  });
  if (err) return *err;
  if (!total || !available) return Error{fmt::format("{}: no MemTotal or MemAvailable", source)};
  if (m.available_bytes > m.total_bytes) m.available_bytes = m.total_bytes;
  return m;
}

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo info;
  for_each_line(text, [&](std::string_view line, std::size_t) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (key == "model name" && info.model.empty()) info.model = std::string(value);
    if (key == "cpu cores" && info.cores_per_socket == 0) {
      int n = 0;
      std::from_chars(value.data(), value.data() + value.size(), n);
      info.cores_per_socket = n > 0 ? n : 0;
    }
  });
  return info;
}

std::map<int, int> read_core_packages(const std::string& sys_root, const std::vector<int>& cores) {
  std::map<int, int> out;
  for (int cpu : cores) {
    out[cpu] = 0;
    auto text = read_text_file(
        fmt::format("{}/devices/system/cpu/cpu{}/topology/physical_package_id", sys_root, cpu));
    if (!text.ok()) continue;
    int id = 0;
    const std::string& s = text.value();
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
    if (ec == std::errc() && id >= 0) out[cpu] = id;
  }
  return out;
}

double clock_ticks_per_second() {
  const long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? static_cast<double>(hz) : 100.0;
}

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: {}", path, std::strerror(errno))};
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Error{fmt::format("{}: read failed", path)};
  return buf.str();
}

}  // namespace greensched::monitor
