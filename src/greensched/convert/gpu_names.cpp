// Canonical GPU model names for converted dumps; see gpu_names.hpp.
#include "greensched/convert/gpu_names.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/node.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::convert {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

}  // namespace

std::string canonical_gpu_model(std::string_view raw) {
  const GpuModelRegistry registry;
  const std::string up = upper(raw);
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const std::string& name = registry.name(static_cast<GpuModelId>(i));
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
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const std::string& name = registry.name(static_cast<GpuModelId>(i));
    if (name.size() >= 2 && has(upper(name))) return name;
  }
  return std::string(raw);
}

std::vector<std::string> models_without_power(const std::vector<OpenbNodeRow>& nodes) {
  const power::PowerModel model = power::PowerModel::builtin();
  std::vector<std::string> missing;
  std::vector<std::string> seen;
  for (const OpenbNodeRow& r : nodes) {
    if (r.gpu == 0 || std::find(seen.begin(), seen.end(), r.model) != seen.end()) continue;
    seen.push_back(r.model);
    GpuModelRegistry registry;
    auto id = registry.intern(r.model);
    if (!id) continue;
    NodeSpec spec;
    spec.name = r.name;
    spec.cpu_milli = r.cpu_milli;
    spec.memory_mib = r.memory_mib;
    spec.gpu_count = r.gpu;
    spec.model = *id;
    if (!model.resolve(std::span<const NodeSpec>(&spec, 1), registry).ok()) {
      missing.push_back(r.model);
    }
  }
  return missing;
}

std::string power_note(const std::vector<std::string>& missing) {
  if (missing.empty()) return {};
  return fmt::format(
      "GPU model(s) {} have no figures in the built-in power model: give `greensched simulate` "
      "a --power-model that has them (an entry of its own, or \"same_as\" a listed model)",
      fmt::join(missing, ", "));
}

}  // namespace greensched::convert
