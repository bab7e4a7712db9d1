// GPU model names and their one spelling; see gpu_model.hpp.
#include "greensched/core/gpu_model.hpp"

#include <algorithm>
#include <array>

namespace greensched {
namespace {

// New names go at the end: a model's id is its place here, and ids appear in outputs.
constexpr std::array<std::string_view, 22> kBuiltinNames = {
    "A10",  "G1",        "G2",       "G3",   "P100", "T4",    "V100M16", "V100M32",
    "A100", "A100-80G",  "H100",     "H200", "L4",   "L40S",  "A30",     "A40",
    "V100", "H100-PCIe", "H100-NVL", "B200", "A10G", "MI300X"};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

}  // namespace

std::span<const std::string_view> builtin_gpu_model_names() {
  return kBuiltinNames;
}

std::string canonical_gpu_model(std::string_view raw, const std::vector<std::string>& extra_names) {
  const std::string up = upper(raw);
  for (std::string_view name : kBuiltinNames) {
    if (upper(name) == up) return std::string(name);
  }
  for (const std::string& name : extra_names) {
    if (upper(name) == up) return name;
  }
  // Tokens of a product string: NVIDIA-A100-SXM4-80GB, Tesla-V100-PCIE-32GB, NVIDIA L40S.
  std::vector<std::string> tokens;
  std::string token;
  for (char c : up + "-") {
    if (c == '-' || c == '_' || c == ' ') {
      if (!token.empty()) tokens.push_back(token);
      token.clear();
    } else {
      token += c;
    }
  }
  const auto has = [&](std::string_view t) {
    return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
  };
  if (has("A100")) return has("80GB") ? "A100-80G" : "A100";
  if (has("V100")) {
    if (has("16GB")) return "V100M16";
    if (has("32GB")) return "V100M32";
    return "V100";
  }
  if (has("H100")) {
    if (has("PCIE")) return "H100-PCIe";
    if (has("NVL")) return "H100-NVL";
    return "H100";  // SXM5: "H100-SXM", "NVIDIA-H100-80GB-HBM3"
  }
  // The H200 NVL (PCIe, 600 W) is not the H200 SXM module: left for a power model to name.
  if (has("H200") && has("NVL")) return std::string(raw);
  for (std::string_view name : kBuiltinNames) {
    if (name.size() >= 2 && has(upper(name))) return std::string(name);
  }
  for (const std::string& name : extra_names) {
    if (name.size() >= 2 && has(upper(name))) return name;
  }
  return std::string(raw);
}

GpuModelRegistry::GpuModelRegistry()
    : names_(kBuiltinNames.begin(), kBuiltinNames.end()), first_seen_(kBuiltinNames.size()) {}

std::optional<GpuModelId> GpuModelRegistry::find(std::string_view name) const {
  const std::string canonical = canonical_gpu_model(name, names_);
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == canonical) return static_cast<GpuModelId>(i);
  }
  return std::nullopt;
}

std::optional<GpuModelId> GpuModelRegistry::intern(std::string_view name, std::string_view where) {
  std::optional<GpuModelId> id = find(name);
  if (!id) {
    if (names_.size() >= kMaxGpuModels) return std::nullopt;
    names_.push_back(canonical_gpu_model(name, names_));
    first_seen_.emplace_back();
    id = static_cast<GpuModelId>(names_.size() - 1);
  }
  if (first_seen_[*id].empty()) first_seen_[*id] = std::string(where);
  return id;
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
