#include "greensched/monitor/nvml.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

namespace greensched::monitor {
namespace {

// Types of nvml.h, declared here so that no NVIDIA header is needed at build time.
using nvmlReturn_t = int;  // an enum in C; NVML_SUCCESS = 0
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu;     // percent of time a kernel ran over the last sample period
  unsigned int memory;  // percent of time device memory was read or written
};
struct nvmlMemory_t {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
};
using nvmlTemperatureSensors_t = int;  // NVML_TEMPERATURE_GPU = 0
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlTemperatureSensors_t kNvmlTemperatureGpu = 0;
constexpr unsigned kNameLength = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidLength = 96;  // >= NVML_DEVICE_UUID_V2_BUFFER_SIZE (96)

}  // namespace

struct Nvml::Impl {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*get_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*get_handle)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*get_power)(nvmlDevice_t, unsigned int*) = nullptr;         // milliwatts
  nvmlReturn_t (*get_energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // millijoules
  nvmlReturn_t (*get_utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*get_memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*get_temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*) = nullptr;
  // Optional.
  nvmlReturn_t (*get_uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  bool initialised = false;
  std::vector<nvmlDevice_t> devices;
  std::vector<std::string> names;
  std::vector<std::string> uuids;

  std::string why(nvmlReturn_t r) const {
    const char* s = error_string ? error_string(r) : nullptr;
    return s ? fmt::format("{} ({})", s, r) : fmt::format("NVML error {}", r);
  }

  ~Impl() {
    if (initialised && shutdown) shutdown();
    if (handle) dlclose(handle);
  }
};

namespace {

template <typename F>
bool resolve(void* handle, const char* name, F& fn, std::string& missing) {
  void* sym = dlsym(handle, name);
  if (!sym) {
    missing += missing.empty() ? name : fmt::format(", {}", name);
    return false;
  }
  fn = reinterpret_cast<F>(sym);
  return true;
}

}  // namespace

std::string default_nvml_library() {
  const char* env = std::getenv("GREENSCHED_NVML_LIBRARY");
  return env && *env ? std::string(env) : std::string("libnvidia-ml.so.1");
}

Nvml::Nvml(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Nvml::~Nvml() = default;

Result<std::unique_ptr<Nvml>> Nvml::open(const std::string& library) {
  auto impl = std::make_unique<Impl>();
  impl->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->handle) {
    const char* e = dlerror();
    return Error{fmt::format("cannot load {}: {}", library, e ? e : "unknown error")};
  }
  std::string missing;
  Impl& n = *impl;
  resolve(n.handle, "nvmlInit_v2", n.init, missing);
  resolve(n.handle, "nvmlShutdown", n.shutdown, missing);
  resolve(n.handle, "nvmlDeviceGetCount_v2", n.get_count, missing);
  resolve(n.handle, "nvmlDeviceGetHandleByIndex_v2", n.get_handle, missing);
  resolve(n.handle, "nvmlDeviceGetName", n.get_name, missing);
  resolve(n.handle, "nvmlDeviceGetPowerUsage", n.get_power, missing);
  resolve(n.handle, "nvmlDeviceGetTotalEnergyConsumption", n.get_energy, missing);
  resolve(n.handle, "nvmlDeviceGetUtilizationRates", n.get_utilization, missing);
  resolve(n.handle, "nvmlDeviceGetMemoryInfo", n.get_memory, missing);
  resolve(n.handle, "nvmlDeviceGetTemperature", n.get_temperature, missing);
  if (!missing.empty()) return Error{fmt::format("{}: missing {}", library, missing)};
  std::string unused;
  resolve(n.handle, "nvmlDeviceGetUUID", n.get_uuid, unused);
  resolve(n.handle, "nvmlErrorString", n.error_string, unused);

  if (nvmlReturn_t r = n.init(); r != kNvmlSuccess) {
    return Error{fmt::format("nvmlInit_v2: {}", n.why(r))};
  }
  n.initialised = true;
  unsigned int count = 0;
  if (nvmlReturn_t r = n.get_count(&count); r != kNvmlSuccess) {
    return Error{fmt::format("nvmlDeviceGetCount_v2: {}", n.why(r))};
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (nvmlReturn_t r = n.get_handle(i, &device); r != kNvmlSuccess) {
      return Error{fmt::format("nvmlDeviceGetHandleByIndex_v2({}): {}", i, n.why(r))};
    }
    char name[kNameLength] = {};
    if (n.get_name(device, name, kNameLength) != kNvmlSuccess) name[0] = '\0';
    name[kNameLength - 1] = '\0';
    char uuid[kUuidLength] = {};
    if (!n.get_uuid || n.get_uuid(device, uuid, kUuidLength) != kNvmlSuccess) uuid[0] = '\0';
    uuid[kUuidLength - 1] = '\0';
    n.devices.push_back(device);
    n.names.emplace_back(name[0] ? name : "unknown");
    n.uuids.emplace_back(uuid);
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(impl)));
}

std::size_t Nvml::device_count() const {
  return impl_->devices.size();
}

std::vector<GpuReading> Nvml::read(std::vector<std::string>& errors) const {
  const Impl& n = *impl_;
  std::vector<GpuReading> out;
  out.reserve(n.devices.size());
  for (std::size_t i = 0; i < n.devices.size(); ++i) {
    nvmlDevice_t d = n.devices[i];
    GpuReading g;
    g.index = static_cast<unsigned>(i);
    g.name = n.names[i];
    g.uuid = n.uuids[i];
    const auto fail = [&](const char* fn, nvmlReturn_t r) {
      errors.push_back(fmt::format("GPU {} ({}): {}: {}", i, g.name, fn, n.why(r)));
    };
    unsigned int mw = 0;
    if (nvmlReturn_t r = n.get_power(d, &mw); r == kNvmlSuccess) {
      g.power_watts = mw / 1000.0;
    } else {
      fail("nvmlDeviceGetPowerUsage", r);
    }
    unsigned long long mj = 0;
    if (nvmlReturn_t r = n.get_energy(d, &mj); r == kNvmlSuccess) {
      g.energy_joules = static_cast<double>(mj) / 1000.0;
    } else {
      fail("nvmlDeviceGetTotalEnergyConsumption", r);
    }
    nvmlUtilization_t u{0, 0};
    if (nvmlReturn_t r = n.get_utilization(d, &u); r == kNvmlSuccess) {
      g.utilization = u.gpu / 100.0;
      g.memory_utilization = u.memory / 100.0;
    } else {
      fail("nvmlDeviceGetUtilizationRates", r);
    }
    nvmlMemory_t m{0, 0, 0};
    if (nvmlReturn_t r = n.get_memory(d, &m); r == kNvmlSuccess) {
      g.memory_used_bytes = m.used;
      g.memory_total_bytes = m.total;
    } else {
      fail("nvmlDeviceGetMemoryInfo", r);
    }
    unsigned int celsius = 0;
    if (nvmlReturn_t r = n.get_temperature(d, kNvmlTemperatureGpu, &celsius); r == kNvmlSuccess) {
      g.temperature_celsius = celsius;
    } else {
      fail("nvmlDeviceGetTemperature", r);
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace greensched::monitor
