// Takes node samples from every source the machine has: /proc/stat and /proc/meminfo, RAPL
// package energy, and NVML for NVIDIA GPUs. A source that is absent or unreadable is reported
// once through the note sink and skipped; nothing here is fatal. The first reading is taken
// at construction, so the first sample() already has utilisation over a real interval.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "greensched/monitor/node_sample.hpp"
#include "greensched/monitor/nvml.hpp"
#include "greensched/monitor/proc_stats.hpp"
#include "greensched/monitor/rapl.hpp"

namespace greensched::monitor {

struct SamplerOptions {
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  bool nvml = true;
  std::string nvml_library;  // empty: default_nvml_library()
};

using NoteSink = std::function<void(const std::string&)>;

// Which sources delivered at the last reading.
struct SourceStatus {
  bool proc_stat = false;
  bool meminfo = false;
  bool rapl = false;
  bool nvml = false;
};

class Sampler {
 public:
  Sampler(SamplerOptions options, NoteSink note);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  NodeSample sample();
  const SourceStatus& sources() const { return sources_; }
  std::size_t gpu_count() const { return nvml_ ? nvml_->device_count() : 0; }

 private:
  void note_once(const std::string& message);
  std::optional<CpuStat> read_cpu();

  SamplerOptions options_;
  NoteSink note_;
  std::set<std::string> noted_;
  SourceStatus sources_;
  double ticks_per_second_ = 100;
  std::string host_;
  CpuInfo cpu_info_;
  std::optional<CpuStat> last_cpu_;
  std::map<int, int> core_package_;
  std::optional<RaplReader> rapl_;
  std::unique_ptr<Nvml> nvml_;
  std::chrono::steady_clock::time_point last_time_;
  uint64_t seq_ = 0;
};

}  // namespace greensched::monitor
