// GPU model names ("T4", "V100M32", ...) interned to small ids so that a pod's allowed-model
// list (gpu_spec) is a bit set and the model check is one AND.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace greensched {

using GpuModelId = uint8_t;
using GpuModelSet = uint64_t;  // bit per model id; 0 means "any model"

inline constexpr GpuModelId kNoGpuModel = 0xFF;  // CPU-only nodes
inline constexpr int kMaxGpuModels = 64;

class GpuModelRegistry {
 public:
  // Starts with the models of the openb trace and common data-centre GPUs.
  GpuModelRegistry();

  std::optional<GpuModelId> find(std::string_view name) const;
  // Adds the model if new; nullopt when the registry is full.
  std::optional<GpuModelId> intern(std::string_view name);
  const std::string& name(GpuModelId id) const { return names_.at(id); }
  std::size_t size() const { return names_.size(); }
  // Comma-separated list of known names, for error messages.
  std::string known_names() const;
  // "A|B" for a set, "any" for the empty set.
  std::string describe(GpuModelSet set) const;

 private:
  std::vector<std::string> names_;
};

inline bool model_allowed(GpuModelSet allowed, GpuModelId model) {
  return allowed == 0 || (model != kNoGpuModel && ((allowed >> model) & 1U));
}

}  // namespace greensched
