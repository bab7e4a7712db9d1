// A stand-in for libnvidia-ml.so.1 used by the monitor tests: exports the NVML functions the
// agent resolves, with their C signatures, and returns fixed known figures for two GPUs.
//   GPU 0 "NVIDIA A100-SXM4-40GB": 123.456 W, 987654.321 J, 42 % / 17 % utilisation,
//     12 GiB of 40 GiB used, 55 °C, a UUID.
//   GPU 1 "Tesla T4": 35 W, no energy counter and no UUID (NVML_ERROR_NOT_SUPPORTED),
//     7 % / 3 %, 1 GiB of 15 GiB, 41 °C.
// FAKE_NVML_FAIL_INIT=1 makes nvmlInit_v2 fail with NVML_ERROR_DRIVER_NOT_LOADED.
// fake_nvml_init_calls / fake_nvml_shutdown_calls count the calls, for the tests.
#include <cstdlib>
#include <cstring>

extern "C" {

struct nvmlDevice_st {
  int index;
};
typedef nvmlDevice_st* nvmlDevice_t;
typedef struct {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;
typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;
typedef int nvmlReturn_t;

__attribute__((visibility("default"))) int fake_nvml_init_calls = 0;
__attribute__((visibility("default"))) int fake_nvml_shutdown_calls = 0;

}  // extern "C"

namespace {

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr nvmlReturn_t kDriverNotLoaded = 9;
constexpr unsigned long long kGiB = 1024ULL * 1024ULL * 1024ULL;

nvmlDevice_st devices[2] = {{0}, {1}};

int index_of(nvmlDevice_t d) {
  if (d == &devices[0]) return 0;
  if (d == &devices[1]) return 1;
  return -1;
}

nvmlReturn_t copy(const char* text, char* out, unsigned int length) {
  if (!out) return kInvalidArgument;
  if (std::strlen(text) + 1 > length) return kInsufficientSize;
  std::strcpy(out, text);
  return kSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2(void) {
  ++fake_nvml_init_calls;
  const char* fail = std::getenv("FAKE_NVML_FAIL_INIT");
  return fail && std::strcmp(fail, "1") == 0 ? kDriverNotLoaded : kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown(void) {
  ++fake_nvml_shutdown_calls;
  return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case kSuccess:
      return "Success";
    case kNotSupported:
      return "Not Supported";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!count) return kInvalidArgument;
  *count = 2;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(
    unsigned int index, nvmlDevice_t* device) {
  if (index > 1 || !device) return kInvalidArgument;
  *device = &devices[index];
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device,
                                                                      char* name,
                                                                      unsigned int length) {
  const int i = index_of(device);
  if (i < 0) return kInvalidArgument;
  return copy(i == 0 ? "NVIDIA A100-SXM4-40GB" : "Tesla T4", name, length);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device,
                                                                      char* uuid,
                                                                      unsigned int length) {
  const int i = index_of(device);
  if (i < 0) return kInvalidArgument;
  if (i == 1) return kNotSupported;
  return copy("GPU-00000000-1111-2222-3333-444444444444", uuid, length);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device,
                                                                            unsigned int* power) {
  const int i = index_of(device);
  if (i < 0 || !power) return kInvalidArgument;
  *power = i == 0 ? 123456U : 35000U;  // milliwatts
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(
    nvmlDevice_t device, unsigned long long* energy) {
  const int i = index_of(device);
  if (i < 0 || !energy) return kInvalidArgument;
  if (i == 1) return kNotSupported;
  *energy = 987654321ULL;  // millijoules
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUtilizationRates(
    nvmlDevice_t device, nvmlUtilization_t* utilization) {
  const int i = index_of(device);
  if (i < 0 || !utilization) return kInvalidArgument;
  utilization->gpu = i == 0 ? 42U : 7U;
  utilization->memory = i == 0 ? 17U : 3U;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                                            nvmlMemory_t* memory) {
  const int i = index_of(device);
  if (i < 0 || !memory) return kInvalidArgument;
  memory->total = i == 0 ? 40 * kGiB : 15 * kGiB;
  memory->used = i == 0 ? 12 * kGiB : 1 * kGiB;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                                             int sensor,
                                                                             unsigned int* temp) {
  const int i = index_of(device);
  if (i < 0 || !temp || sensor != 0) return kInvalidArgument;
  *temp = i == 0 ? 55U : 41U;
  return kSuccess;
}

}  // extern "C"
