// Canonical GPU model names for converted dumps; see gpu_names.hpp.
#include "greensched/convert/gpu_names.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/node.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::convert {

Result<GpuModelMap> parse_gpu_model_map(const std::vector<std::string>& pairs) {
  GpuModelMap map;
  for (const std::string& pair : pairs) {
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
      return Error{
          fmt::format("--gpu-model '{}': expected LABEL=MODEL, e.g. unlabelled=A100", pair)};
    }
    map[pair.substr(0, eq)] = canonical_gpu_model(pair.substr(eq + 1));
  }
  return map;
}

std::string converted_gpu_model(std::string_view raw, const GpuModelMap& map) {
  if (auto it = map.find(raw); it != map.end()) return it->second;
  const std::string canonical = canonical_gpu_model(raw);
  if (auto it = map.find(canonical); it != map.end()) return it->second;
  return canonical;
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
