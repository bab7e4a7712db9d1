// Rules for choosing GPUs inside a chosen node, as the reference simulator applies them.
#pragma once

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"

namespace greensched::policy {

// The first `count` fully free GPUs in index order (0 if there are fewer).
GpuMask first_whole_free_gpus(const NodeSpec& spec, const NodeState& s, int count);
// The GPU with the least free share that still fits `milli`; first index among equals.
GpuMask tightest_fitting_gpu(const NodeSpec& spec, const NodeState& s, int32_t milli);
// A uniformly random GPU among those that fit `milli`.
GpuMask random_fitting_gpu(const NodeSpec& spec, const NodeState& s, int32_t milli, Rng& rng);

}  // namespace greensched::policy
