// Readers of the kernel's CPU and memory figures: per-core CPU times from /proc/stat, memory
// from /proc/meminfo, the CPU's name and cores per socket from /proc/cpuinfo, and each core's
// package from sysfs topology. Parsers take text so that tests can feed known contents.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::monitor {

// Cumulative times of one CPU line of /proc/stat, in clock ticks (USER_HZ).
struct CpuTimes {
  int cpu = -1;       // -1 for the aggregate "cpu" line
  uint64_t busy = 0;  // user + nice + system + irq + softirq + steal (guest is inside user)
  uint64_t idle = 0;  // idle + iowait
  uint64_t total() const { return busy + idle; }
};

struct CpuStat {
  CpuTimes all;
  std::vector<CpuTimes> cores;  // in file order
};

Result<CpuStat> parse_proc_stat(std::string_view text, const std::string& source);

// Busy share of [before, after]; 0 when no tick passed.
double utilization(const CpuTimes& before, const CpuTimes& after);

struct MemInfo {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
  uint64_t used_bytes() const { return total_bytes - available_bytes; }
};

// Needs MemTotal and MemAvailable (Linux >= 3.14).
Result<MemInfo> parse_meminfo(std::string_view text, const std::string& source);

struct CpuInfo {
  std::string model;         // "model name" of the first processor; empty when absent
  int cores_per_socket = 0;  // "cpu cores"; 0 when absent
};
CpuInfo parse_cpuinfo(std::string_view text);

// Package id of each core from <sys_root>/devices/system/cpu/cpuN/topology/physical_package_id;
// cores without the file map to package 0.
std::map<int, int> read_core_packages(const std::string& sys_root, const std::vector<int>& cores);

// Clock ticks per second of /proc/stat (sysconf(_SC_CLK_TCK)).
double clock_ticks_per_second();

// Reads a whole (small) file; the error names the path. Works on /proc files (size 0).
Result<std::string> read_text_file(const std::string& path);

}  // namespace greensched::monitor
