// Runs independent jobs (simulation runs, solves) on a few threads. Callers store results by
// index, so what they produce never depends on the number of threads.
#pragma once

#include <cstddef>
#include <functional>

#include "greensched/core/status.hpp"

namespace greensched {

// Runs fn(i) for i in [0, count) on `jobs` threads (0: all cores). The first error stops the
// jobs not yet started; of the errors, the one with the lowest index is returned.
Status parallel_for(std::size_t count, int jobs, const std::function<Status(std::size_t)>& fn);

}  // namespace greensched
