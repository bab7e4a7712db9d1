// GPU model names as converted dumps give them ("NVIDIA-A100-SXM4-40GB" from the GPU feature
// discovery label, "a100" from Slurm's gres) to the names the simulator's registry and built-in
// power model use ("A100"), so that nodes and the pods asking for a model agree and
// `greensched simulate` finds the model's power figures; and which models still lack them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "greensched/convert/openb_writer.hpp"
#include "greensched/core/gpu_model.hpp"

namespace greensched::convert {

// The registry's name for `raw`: greensched::canonical_gpu_model (core/gpu_model.hpp), the one
// mapping the simulator, the service and the power model also use.
using greensched::canonical_gpu_model;

// The GPU models of `nodes` (each once) that the built-in power model has no figures for.
std::vector<std::string> models_without_power(const std::vector<OpenbNodeRow>& nodes);

// The summary note for `missing` (empty when none is missing).
std::string power_note(const std::vector<std::string>& missing);

}  // namespace greensched::convert
