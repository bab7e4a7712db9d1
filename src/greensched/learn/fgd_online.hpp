// FGD with an online target workload: the target is re-estimated from recent arrivals
// (online_target.hpp) every `refresh` arrivals (and at 1, 2, 4, ... while warming up), and
// FGD's fragmentation model and score memo are rebuilt for it. Nothing about the trace is
// known in advance. The policy sees the pods that reach scoring, i.e. those with at least one
// feasible node; a pod that fits nowhere never reaches a policy.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "greensched/core/status.hpp"
#include "greensched/policy/policy.hpp"
#include "greensched/policy/registry.hpp"

namespace greensched::learn {

struct FgdOnlineOptions {
  std::size_t window = 2000;  // arrivals; 0 = all so far
  std::size_t refresh = 100;  // re-estimate every this many arrivals
};

// "" -> defaults; "W" or "all" -> window; "W/K" -> window and refresh.
Result<FgdOnlineOptions> parse_fgd_online_options(std::string_view arg);

// Needs context.shape_count (pods' shape ids, for the score memo).
std::unique_ptr<policy::Policy> make_fgd_online_policy(const FgdOnlineOptions& options,
                                                       std::string name,
                                                       const policy::PolicyContext& context);

}  // namespace greensched::learn
