// Makes the learn/ policies reachable by name through the policy registry:
//   fgd-online[=WINDOW[/REFRESH]]   FGD with a target workload estimated from recent arrivals
//   learned=MODEL.json (or learned:MODEL.json)   the linear model in MODEL.json
// Call once at start-up (the app and tests do); calling again is harmless. Fails only if a
// name clashes with a built-in policy.
#pragma once

#include "greensched/core/status.hpp"

namespace greensched::learn {

Status register_learn_policies();

}  // namespace greensched::learn
