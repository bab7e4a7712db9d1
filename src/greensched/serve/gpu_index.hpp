// The GPU indices a pod was given on its node, written as Alibaba's GPU-share scheduler and
// the openb simulator write the pod annotation alibabacloud.com/gpu-index: the indices in
// ascending order joined by '-' ("0" one GPU, "0-1" GPUs 0 and 1, "2-3-5-7").
#pragma once

#include <string>
#include <string_view>

#include "greensched/core/resources.hpp"
#include "greensched/core/status.hpp"

namespace greensched::serve {

inline constexpr std::string_view kGpuIndexAnnotation = "alibabacloud.com/gpu-index";

// "" for no GPU.
std::string format_gpu_index(GpuMask gpus);

// Parses "0-1" (also accepts ',' between indices); indices must be below kMaxGpusPerNode and
// not repeat. "" is no GPU.
Result<GpuMask> parse_gpu_index(std::string_view text);

}  // namespace greensched::serve
