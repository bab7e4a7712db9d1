// A time-dynamic workload at a stated load. Replayed at its own rate a sampled pod list keeps
// a cluster nearly empty; this draws jobs from the pod list (shape, duration and QoS kept
// together) until the offered GPU load over a measured window is the requested share of the
// cluster's GPU capacity:
//
//   offered load = sum over jobs of requested GPUs x run time inside the window
//                  / (cluster GPUs x window length)
//
// Arrivals follow the pod list's own hour-of-week profile (hour-of-day when the list spans
// less than two weeks), in trace time, so trace time 0 keeps its place on the wall clock and
// carbon and price series line up with the work. The cluster starts in its steady state: the
// jobs already running when the warm-up begins are those an infinite past would leave (drawn
// in proportion to their duration, each at a uniform age), so the load is flat from the
// first second instead of ramping up while long jobs accumulate.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"

namespace greensched::trace {

struct LoadSpec {
  double load_pct = 50;    // offered GPU load, % of cluster GPU capacity
  double days = 14;        // the measured window
  double warmup_days = 1;  // before the window; its jobs run but are not measured
  uint64_t seed = 42;
};

// The measured window, in trace seconds: [start_s, end_s).
struct LoadWindow {
  int64_t start_s = 0;
  int64_t end_s = 0;
  int64_t length_s() const { return end_s - start_s; }
};

struct GeneratedLoad {
  std::vector<PodSpec> pods;  // by creation_time, then draw order; names "<template>~<draw>"
  LoadWindow window;
  double target_load_pct = 0;
  double offered_load_pct = 0;   // realised (offered_load_pct() of `pods`)
  int64_t running_at_start = 0;  // jobs already running at time 0 (creation_time 0)
  std::string profile;           // "hour of week" or "hour of day"
};

// Draws the workload. `templates` need creation and deletion times; `cluster_gpu_milli` is the
// cluster's GPU capacity (1000 per GPU). Errors say which input is wrong.
Result<GeneratedLoad> generate_load(std::span<const PodSpec> templates, int64_t cluster_gpu_milli,
                                    const LoadSpec& spec);

// Offered GPU load of `pods` over `window`, in % of `cluster_gpu_milli`.
double offered_load_pct(std::span<const PodSpec> pods, int64_t cluster_gpu_milli,
                        LoadWindow window);

}  // namespace greensched::trace
