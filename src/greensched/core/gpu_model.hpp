// GPU model names ("T4", "V100M32", "H100", ...) interned to small ids so that a pod's
// allowed-model list (gpu_spec) is a bit set and the model check is one AND. Names are put in
// one spelling on the way in (canonical_gpu_model): a node list, a Kubernetes label, a Slurm
// gres and a power-model file may each spell a model differently ("NVIDIA-H100-80GB-HBM3",
// "h100", "H100 SXM5"), and they must meet on one name to match pods and power figures.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace greensched {

using GpuModelId = uint8_t;
using GpuModelSet = uint64_t;  // bit per model id; 0 means "any model"

inline constexpr GpuModelId kNoGpuModel = 0xFF;  // CPU-only nodes
inline constexpr int kMaxGpuModels = 64;

// The names every registry starts with: the openb trace's models and common data-centre GPUs.
// "H100" is the SXM5 module (the common one in clouds); the PCIe card is "H100-PCIe".
std::span<const std::string_view> builtin_gpu_model_names();

// The one spelling of a GPU model. `raw` is matched, ignoring case, against the built-in
// names and then `extra_names` (models a registry has interned); failing that, a product
// string is read by its tokens (split at '-', '_', ' '): NVIDIA-A100-SXM4-80GB -> A100-80G,
// Tesla-V100-SXM2-16GB -> V100M16, NVIDIA-H100-PCIe -> H100-PCIe, NVIDIA-H100-80GB-HBM3 ->
// H100, "AMD Instinct MI300X" -> MI300X. A name none of this recognises comes back unchanged.
std::string canonical_gpu_model(std::string_view raw,
                                const std::vector<std::string>& extra_names = {});

class GpuModelRegistry {
 public:
  // Starts with builtin_gpu_model_names().
  GpuModelRegistry();

  // Both look `name` up in its canonical spelling.
  std::optional<GpuModelId> find(std::string_view name) const;
  // Adds the model if new; nullopt when the registry is full. `where` ("nodes.csv:12", "Node
  // gpu-7") is kept as where the model was first named by a node, for error messages.
  std::optional<GpuModelId> intern(std::string_view name, std::string_view where = {});
  const std::string& name(GpuModelId id) const { return names_.at(id); }
  // Where a node first named the model ("" when none said).
  const std::string& first_seen(GpuModelId id) const { return first_seen_.at(id); }
  std::size_t size() const { return names_.size(); }
  // Comma-separated list of known names, for error messages.
  std::string known_names() const;
  // "A|B" for a set, "any" for the empty set.
  std::string describe(GpuModelSet set) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::string> first_seen_;
};

inline bool model_allowed(GpuModelSet allowed, GpuModelId model) {
  return allowed == 0 || (model != kNoGpuModel && ((allowed >> model) & 1U));
}

}  // namespace greensched
