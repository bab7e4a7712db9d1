// Fits the power model's idle and max figures to measurements taken by the monitor agent.
//   GPUs: per power-model key (from the NVML name), every reading's power against its
//     utilisation, P = idle + (max - idle) x util by least squares: idle is the fitted line at
//     util 0, max at util 1. The PWR model only needs these two end points; a line through
//     all readings uses every sample (not just the few at the extremes) and its R² says how
//     well power follows utilisation on this workload.
//   CPUs: per package, the mean power between consecutive readings from the RAPL energy
//     difference (so power is averaged over exactly the interval the utilisation covers)
//     against the mean utilisation of the package's cores; the same line gives per-socket
//     idle and max watts.
// The result is written in the schema of data/power-model.json, merged into a base model so
// that anything not measured keeps its figures.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/monitor/linear_fit.hpp"
#include "greensched/monitor/node_sample.hpp"

namespace greensched::monitor {

struct CalibrationOptions {
  std::map<std::string, std::string> gpu_keys;  // NVML name -> power-model key (else guessed)
  std::string cpu_key;                          // power-model key of the CPU (else guessed)
  int64_t min_samples = 10;
};

struct CalibrationFit {
  std::string kind;    // "gpu" or "cpu"
  std::string key;     // the power model's entry
  std::string source;  // NVML name(s) or CPU model name
  LinearFit fit;
  double idle_watts = 0;
  double max_watts = 0;
  int cores_per_socket = 0;  // CPUs only
  std::vector<std::string> warnings;
};

struct Calibration {
  int64_t samples = 0;
  std::vector<CalibrationFit> fits;
  std::vector<std::string> skipped;  // what could not be fitted, and why
};

// Power-model key for an NVML name: a known key among the name's words (V100 with 16GB or
// 32GB -> V100M16 / V100M32), else the first word after the vendor words.
std::string gpu_model_key(std::string_view nvml_name, std::span<const std::string> known_keys);
// Power-model key for a /proc/cpuinfo model name: "Intel(R) Xeon(R) Platinum 8269CY CPU @
// 2.50GHz" -> "Xeon Platinum 8269CY"; a known key matching it case-insensitively wins.
std::string cpu_model_key(std::string_view cpu_model, std::span<const std::string> known_keys);

Calibration calibrate(std::span<const NodeSample> samples,
                      std::span<const std::string> known_gpu_keys,
                      std::span<const std::string> known_cpu_keys,
                      const CalibrationOptions& options);

// The base model (JSON text, e.g. data/power-model.json) with the fitted entries set; the
// result is checked to load with power::PowerModel::parse.
Result<std::string> calibrated_model_json(const Calibration& calibration,
                                          std::string_view base_json,
                                          const std::string& base_source);

std::string calibration_table(const Calibration& calibration);
nlohmann::json calibration_json(const Calibration& calibration);

}  // namespace greensched::monitor
