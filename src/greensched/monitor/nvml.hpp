// NVIDIA GPUs through NVML, loaded at run time with dlopen (no link-time dependency, so the
// binary runs on machines without a driver). The functions are resolved by name with their
// C signatures from nvml.h; a library missing one of them is refused with its name. A figure
// the driver does not support for a GPU (e.g. the energy counter before Volta) is left empty.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/monitor/node_sample.hpp"

namespace greensched::monitor {

// The library to load: $GREENSCHED_NVML_LIBRARY when set, else "libnvidia-ml.so.1".
std::string default_nvml_library();

class Nvml {
 public:
  // dlopen + dlsym + nvmlInit_v2 + the device list. Errors say which step failed.
  static Result<std::unique_ptr<Nvml>> open(const std::string& library);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::size_t device_count() const;
  // Reads every GPU. A call that fails adds "GPU i (name): function: reason" to `errors` and
  // leaves that figure empty.
  std::vector<GpuReading> read(std::vector<std::string>& errors) const;

  struct Impl;

 private:
  explicit Nvml(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace greensched::monitor
