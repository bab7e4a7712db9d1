#include "greensched/core/gpu_model.hpp"

namespace greensched {

GpuModelRegistry::GpuModelRegistry() {
  for (const char* name : {"A10", "G1", "G2", "G3", "P100", "T4", "V100M16", "V100M32", "A100",
                           "A100-80G", "H100", "H200", "L4", "L40S", "A30", "A40", "V100"}) {
    names_.emplace_back(name);
  }
}

std::optional<GpuModelId> GpuModelRegistry::find(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<GpuModelId>(i);
  }
  return std::nullopt;
}

std::optional<GpuModelId> GpuModelRegistry::intern(std::string_view name) {
  if (auto id = find(name)) return id;
  if (names_.size() >= kMaxGpuModels) return std::nullopt;
  names_.emplace_back(name);
  return static_cast<GpuModelId>(names_.size() - 1);
}

std::string GpuModelRegistry::known_names() const {
  std::string out;
  for (const auto& n : names_) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string GpuModelRegistry::describe(GpuModelSet set) const {
  if (set == 0) return "any";
  std::string out;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if ((set >> i) & 1U) {
      if (!out.empty()) out += "|";
      out += names_[i];
    }
  }
  return out;
}

}  // namespace greensched
