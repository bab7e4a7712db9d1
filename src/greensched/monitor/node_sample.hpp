// One reading of a node by the monitor agent: CPU use per core over the last interval, memory,
// CPU package energy (RAPL) and per-GPU figures (NVML). A source that is absent leaves its part
// empty (has_cpu / has_memory false, no packages, no GPUs); a GPU figure the driver does not
// support is an empty optional.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace greensched::monitor {

struct CoreUsage {
  int cpu = 0;              // the N of cpuN in /proc/stat
  int package = 0;          // physical package (socket) id
  double utilization = 0;   // busy share of the last interval, 0..1
  double busy_seconds = 0;  // since boot: user+nice+system+irq+softirq+steal
  double idle_seconds = 0;  // since boot: idle+iowait
};

struct PackageEnergy {
  int package = 0;
  std::string zone;          // e.g. intel-rapl:0
  double energy_joules = 0;  // since the agent started, wrap-around removed
  double power_watts = 0;    // mean over the last interval
  double utilization = 0;    // mean CPU utilisation of the package's cores, 0..1
  bool has_utilization = false;
};

struct GpuReading {
  unsigned index = 0;
  std::string name;  // e.g. "NVIDIA A100-SXM4-40GB"
  std::string uuid;  // empty when unknown
  std::optional<double> power_watts;
  std::optional<double> energy_joules;  // driver counter (since driver load)
  std::optional<double> utilization;    // share of time a kernel ran, 0..1
  std::optional<double> memory_utilization;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<double> temperature_celsius;
};

struct NodeSample {
  uint64_t seq = 0;       // 1, 2, ... within one agent run
  double time_s = 0;      // Unix time of the reading
  double interval_s = 0;  // since the previous reading (or the agent's start)
  std::string host;
  std::string cpu_model;     // /proc/cpuinfo "model name"
  int cores_per_socket = 0;  // /proc/cpuinfo "cpu cores"; 0 when unknown
  bool has_cpu = false;
  double cpu_utilization = 0;  // all cores, 0..1
  std::vector<CoreUsage> cores;
  bool has_memory = false;
  uint64_t memory_total_bytes = 0;
  uint64_t memory_used_bytes = 0;  // MemTotal - MemAvailable
  uint64_t memory_available_bytes = 0;
  std::vector<PackageEnergy> packages;
  std::vector<GpuReading> gpus;
};

}  // namespace greensched::monitor
