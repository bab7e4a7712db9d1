// GPU model names as converted dumps give them ("NVIDIA-A100-SXM4-40GB" from the GPU feature
// discovery label, "a100" from Slurm's gres) to the names the simulator's registry and built-in
// power model use ("A100"), so that nodes and the pods asking for a model agree and
// `greensched simulate` finds the model's power figures; and which models still lack them.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/convert/openb_writer.hpp"
#include "greensched/core/gpu_model.hpp"
#include "greensched/core/status.hpp"

namespace greensched::convert {

// The registry's name for `raw`: greensched::canonical_gpu_model (core/gpu_model.hpp), the one
// mapping the simulator, the service and the power model also use.
using greensched::canonical_gpu_model;

// `convert --gpu-model LABEL=MODEL`: a dump's model names (as labelled, as greensched names
// them, or "unlabelled" for GPU nodes without a model label) to the model to use instead.
using GpuModelMap = std::map<std::string, std::string, std::less<>>;

// "LABEL=MODEL" each; an error names the malformed one.
Result<GpuModelMap> parse_gpu_model_map(const std::vector<std::string>& pairs);

// The model a dump's name `raw` becomes: the map's model for `raw` (else for its canonical
// name), itself in greensched's name; without one, the canonical name.
std::string converted_gpu_model(std::string_view raw, const GpuModelMap& map);

// The GPU models of `nodes` (each once) that the built-in power model has no figures for.
std::vector<std::string> models_without_power(const std::vector<OpenbNodeRow>& nodes);

// The summary note for `missing` (empty when none is missing).
std::string power_note(const std::vector<std::string>& missing);

}  // namespace greensched::convert
