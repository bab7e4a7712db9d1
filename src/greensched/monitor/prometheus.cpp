#include "greensched/monitor/prometheus.hpp"

#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "greensched/core/prometheus_text.hpp"

namespace greensched::monitor {
namespace {

// Writes one metric family: HELP and TYPE once, then its series (skipped when it has none).
class Family {
 public:
  Family(std::string& out, const char* name, const char* type, const char* help)
      : out_(out), name_(name), type_(type), help_(help) {}
  void add(const std::string& labels, double value) {
    if (!std::isfinite(value)) return;
    if (!header_) {
      prometheus_header(out_, name_, type_, help_);
      header_ = true;
    }
    prometheus_sample(out_, name_, labels, value);
  }

 private:
  std::string& out_;
  const char* name_;
  const char* type_;
  const char* help_;
  bool header_ = false;
};

std::string gpu_labels(const GpuReading& g) {
  std::string l = fmt::format("gpu=\"{}\"", g.index);
  if (!g.uuid.empty()) l += fmt::format(",uuid=\"{}\"", prometheus_label(g.uuid));
  l += fmt::format(",name=\"{}\"", prometheus_label(g.name));
  return l;
}

}  // namespace

std::string prometheus_text(const NodeSample* s, const AgentStats& stats) {
  std::string out;
  out.reserve(4096);
  if (s && s->has_cpu) {
    Family util(out, "greensched_node_cpu_utilization_ratio", "gauge",
                "Busy share of each CPU over the last sampling interval (0-1), from /proc/stat.");
    for (const CoreUsage& c : s->cores) util.add(fmt::format("cpu=\"{}\"", c.cpu), c.utilization);
    Family avg(out, "greensched_node_cpu_utilization_average_ratio", "gauge",
               "Busy share of all CPUs together over the last sampling interval (0-1).");
    avg.add("", s->cpu_utilization);
    Family secs(out, "greensched_node_cpu_seconds_total", "counter",
                "CPU time since boot by mode (busy: user+nice+system+irq+softirq+steal; idle: "
                "idle+iowait).");
    for (const CoreUsage& c : s->cores) {
      secs.add(fmt::format("cpu=\"{}\",mode=\"busy\"", c.cpu), c.busy_seconds);
      secs.add(fmt::format("cpu=\"{}\",mode=\"idle\"", c.cpu), c.idle_seconds);
    }
  }
  if (s && s->has_memory) {
    Family total(out, "greensched_node_memory_total_bytes", "gauge", "MemTotal of /proc/meminfo.");
    total.add("", static_cast<double>(s->memory_total_bytes));
    Family used(out, "greensched_node_memory_used_bytes", "gauge",
                "Memory in use: MemTotal - MemAvailable of /proc/meminfo.");
    used.add("", static_cast<double>(s->memory_used_bytes));
    Family avail(out, "greensched_node_memory_available_bytes", "gauge",
                 "MemAvailable of /proc/meminfo.");
    avail.add("", static_cast<double>(s->memory_available_bytes));
  }
  if (s && !s->packages.empty()) {
    Family energy(out, "greensched_node_cpu_package_energy_joules_total", "counter",
                  "CPU package energy from RAPL since the agent started (wrap-around removed).");
    for (const PackageEnergy& p : s->packages) {
      energy.add(fmt::format("package=\"{}\",zone=\"{}\"", p.package, prometheus_label(p.zone)),
                 p.energy_joules);
    }
    Family power(out, "greensched_node_cpu_package_power_watts", "gauge",
                 "Mean CPU package power over the last sampling interval, from RAPL.");
    for (const PackageEnergy& p : s->packages) {
      power.add(fmt::format("package=\"{}\",zone=\"{}\"", p.package, prometheus_label(p.zone)),
                p.power_watts);
    }
  }
  if (s && !s->gpus.empty()) {
    const auto family = [&](const char* name, const char* type, const char* help,
                            const std::function<std::optional<double>(const GpuReading&)>& get) {
      Family f(out, name, type, help);
      for (const GpuReading& g : s->gpus) {
        if (auto v = get(g)) f.add(gpu_labels(g), *v);
      }
    };
    family("greensched_gpu_power_watts", "gauge",
           "GPU power draw (nvmlDeviceGetPowerUsage; DCGM_FI_DEV_POWER_USAGE).",
           [](const GpuReading& g) { return g.power_watts; });
    family("greensched_gpu_energy_joules_total", "counter",
           "GPU energy since the driver was loaded (nvmlDeviceGetTotalEnergyConsumption; "
           "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION).",
           [](const GpuReading& g) { return g.energy_joules; });
    family("greensched_gpu_utilization_ratio", "gauge",
           "Share of time a kernel ran on the GPU (0-1; DCGM_FI_DEV_GPU_UTIL / 100).",
           [](const GpuReading& g) { return g.utilization; });
    family("greensched_gpu_memory_utilization_ratio", "gauge",
           "Share of time GPU memory was read or written (0-1; DCGM_FI_DEV_MEM_COPY_UTIL / 100).",
           [](const GpuReading& g) { return g.memory_utilization; });
    family("greensched_gpu_memory_used_bytes", "gauge",
           "GPU memory in use (nvmlDeviceGetMemoryInfo; DCGM_FI_DEV_FB_USED in bytes).",
           [](const GpuReading& g) -> std::optional<double> {
             if (!g.memory_used_bytes) return std::nullopt;
             return static_cast<double>(*g.memory_used_bytes);
           });
    family("greensched_gpu_memory_total_bytes", "gauge", "GPU memory size.",
           [](const GpuReading& g) -> std::optional<double> {
             if (!g.memory_total_bytes) return std::nullopt;
             return static_cast<double>(*g.memory_total_bytes);
           });
    family("greensched_gpu_temperature_celsius", "gauge",
           "GPU core temperature (DCGM_FI_DEV_GPU_TEMP).",
           [](const GpuReading& g) { return g.temperature_celsius; });
  }
  Family samples(out, "greensched_monitor_samples_total", "counter", "Readings taken.");
  samples.add("", static_cast<double>(stats.samples));
  Family interval(out, "greensched_monitor_interval_seconds", "gauge", "Sampling interval.");
  interval.add("", stats.interval_s);
  if (s) {
    Family last(out, "greensched_monitor_last_sample_timestamp_seconds", "gauge",
                "Unix time of the latest reading.");
    last.add("", s->time_s);
  }
  Family cpu(out, "greensched_monitor_cpu_seconds_total", "counter",
             "User + system CPU time of the monitor process itself.");
  cpu.add("", stats.cpu_seconds);
  Family up(out, "greensched_monitor_source_up", "gauge",
            "1 when the source delivered at the latest reading, else 0.");
  up.add("source=\"proc_stat\"", stats.sources.proc_stat ? 1 : 0);
  up.add("source=\"meminfo\"", stats.sources.meminfo ? 1 : 0);
  up.add("source=\"rapl\"", stats.sources.rapl ? 1 : 0);
  up.add("source=\"nvml\"", stats.sources.nvml ? 1 : 0);
  return out;
}

}  // namespace greensched::monitor
