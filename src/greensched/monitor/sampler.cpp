#include "greensched/monitor/sampler.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace greensched::monitor {

Sampler::Sampler(SamplerOptions options, NoteSink note)
    : options_(std::move(options)), note_(std::move(note)) {
  // NVML first: its start-up can take a while and must not fall inside the first interval.
  if (options_.nvml) {
    const std::string lib =
        options_.nvml_library.empty() ? default_nvml_library() : options_.nvml_library;
    auto nvml = Nvml::open(lib);
    if (nvml.ok()) {
      nvml_ = std::move(nvml.value());
    } else {
      note_once(fmt::format("GPUs (NVML) skipped: {}", nvml.error()));
    }
  }
  ticks_per_second_ = clock_ticks_per_second();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) host_ = host;
  if (auto text = read_text_file(options_.proc_root + "/cpuinfo"); text.ok()) {
    cpu_info_ = parse_cpuinfo(text.value());
  }
  last_cpu_ = read_cpu();
  if (last_cpu_) {
    std::vector<int> ids;
    for (const CpuTimes& t : last_cpu_->cores) ids.push_back(t.cpu);
    core_package_ = read_core_packages(options_.sys_root, ids);
  }
  auto rapl = RaplReader::open(options_.sys_root);
  if (rapl.ok()) {
    rapl_ = std::move(rapl.value());
  } else {
    note_once(fmt::format("CPU package energy (RAPL) skipped: {}", rapl.error()));
  }
  last_time_ = std::chrono::steady_clock::now();
}

Sampler::~Sampler() = default;

void Sampler::note_once(const std::string& message) {
  if (noted_.insert(message).second && note_) note_(message);
}

std::optional<CpuStat> Sampler::read_cpu() {
  const std::string path = options_.proc_root + "/stat";
  auto text = read_text_file(path);
  if (!text.ok()) {
    note_once(fmt::format("CPU utilisation skipped: {}", text.error()));
    return std::nullopt;
  }
  auto stat = parse_proc_stat(text.value(), path);
  if (!stat.ok()) {
    note_once(fmt::format("CPU utilisation skipped: {}", stat.error()));
    return std::nullopt;
  }
  return std::move(stat.value());
}

NodeSample Sampler::sample() {
  NodeSample s;
  s.seq = ++seq_;
  const auto now = std::chrono::steady_clock::now();
  s.interval_s = std::chrono::duration<double>(now - last_time_).count();
  last_time_ = now;
  s.time_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  s.host = host_;
  s.cpu_model = cpu_info_.model;
  s.cores_per_socket = cpu_info_.cores_per_socket;

  // CPU: utilisation over the interval since the previous reading, matched by CPU id.
  std::optional<CpuStat> cpu = read_cpu();
  sources_.proc_stat = cpu.has_value();
  if (cpu && last_cpu_) {
    s.has_cpu = true;
    s.cpu_utilization = utilization(last_cpu_->all, cpu->all);
    for (const CpuTimes& t : cpu->cores) {
      CoreUsage c;
      c.cpu = t.cpu;
      auto pkg = core_package_.find(t.cpu);
      c.package = pkg == core_package_.end() ? 0 : pkg->second;
      for (const CpuTimes& b : last_cpu_->cores) {
        if (b.cpu == t.cpu) c.utilization = utilization(b, t);
      }
      c.busy_seconds = static_cast<double>(t.busy) / ticks_per_second_;
      c.idle_seconds = static_cast<double>(t.idle) / ticks_per_second_;
      s.cores.push_back(c);
    }
  }
  if (cpu) last_cpu_ = std::move(cpu);

  // Memory.
  const std::string meminfo_path = options_.proc_root + "/meminfo";
  auto meminfo_text = read_text_file(meminfo_path);
  if (meminfo_text.ok()) {
    auto m = parse_meminfo(meminfo_text.value(), meminfo_path);
    if (m.ok()) {
      s.has_memory = true;
      s.memory_total_bytes = m.value().total_bytes;
      s.memory_available_bytes = m.value().available_bytes;
      s.memory_used_bytes = m.value().used_bytes();
    } else {
      note_once(fmt::format("memory skipped: {}", m.error()));
    }
  } else {
    note_once(fmt::format("memory skipped: {}", meminfo_text.error()));
  }
  sources_.meminfo = s.has_memory;

  // RAPL: energy since start, power over the interval, utilisation of the package's cores.
  sources_.rapl = false;
  if (rapl_) {
    std::vector<double> before;
    for (const RaplZone& z : rapl_->zones()) before.push_back(z.total_joules);
    std::vector<std::string> errors;
    rapl_->read(errors);
    for (const std::string& e : errors) note_once(fmt::format("RAPL read failed: {}", e));
    sources_.rapl = errors.size() < rapl_->zones().size();
    for (std::size_t i = 0; i < rapl_->zones().size(); ++i) {
      const RaplZone& z = rapl_->zones()[i];
      PackageEnergy p;
      p.package = z.package;
      p.zone = z.zone;
      p.energy_joules = z.total_joules;
      p.power_watts = s.interval_s > 0 ? (z.total_joules - before[i]) / s.interval_s : 0.0;
      double sum = 0;
      int n = 0;
      for (const CoreUsage& c : s.cores) {
        if (c.package == z.package) {
          sum += c.utilization;
          ++n;
        }
      }
      p.has_utilization = n > 0;
      p.utilization = n > 0 ? sum / n : 0.0;
      s.packages.push_back(std::move(p));
    }
  }

  // GPUs.
  if (nvml_) {
    std::vector<std::string> errors;
    s.gpus = nvml_->read(errors);
    for (const std::string& e : errors) note_once(fmt::format("GPU figure skipped: {}", e));
    sources_.nvml = true;
  }
  return s;
}

}  // namespace greensched::monitor
