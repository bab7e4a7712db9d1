// Arrival times, lifetimes and QoS for pods that have none (the built-in workload), drawn from
// the openb default trace's own statistics: arrivals follow its hour-of-day profile, lifetimes
// its empirical quantiles (median 540 s, p90 6574 s, p99 about 28 h), QoS its LS/BE mix.
#pragma once

#include <cstdint>
#include <vector>

#include "greensched/core/pod.hpp"

namespace greensched::trace {

// Sets creation_time, deletion_time and qos of every pod; arrivals spread over `days` days.
void assign_synthetic_times(std::vector<PodSpec>& pods, uint64_t seed, int days);

}  // namespace greensched::trace
