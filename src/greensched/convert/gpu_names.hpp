// GPU model names as converted dumps give them ("NVIDIA-A100-SXM4-40GB" from the GPU feature
// discovery label, "a100" from Slurm's gres) to the names the simulator's registry and built-in
// power model use ("A100"), so that nodes and the pods asking for a model agree and
// `greensched simulate` finds the model's power figures; and which models still lack them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "greensched/convert/openb_writer.hpp"

namespace greensched::convert {

// The registry's name for `raw` when one is recognised (case-insensitively, or as a token of a
// product string: "NVIDIA-A100-SXM4-80GB" -> "A100-80G", "Tesla-V100-SXM2-16GB" -> "V100M16");
// else `raw` unchanged.
std::string canonical_gpu_model(std::string_view raw);

// The GPU models of `nodes` (each once) that the built-in power model has no figures for.
std::vector<std::string> models_without_power(const std::vector<OpenbNodeRow>& nodes);

// The summary note for `missing` (empty when none is missing).
std::string power_note(const std::vector<std::string>& missing);

}  // namespace greensched::convert
