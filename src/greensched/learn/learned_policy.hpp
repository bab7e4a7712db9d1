// The learned policy: every feasible node (and, for a sharing pod, every distinct GPU it could
// take there) is scored by a linear model over placement features; the highest score wins and
// ties go to the reference tie order, as for every policy. With LinearModel::fgd() it makes
// exactly FGD's decisions.
#pragma once

#include <memory>
#include <string>

#include "greensched/learn/linear_model.hpp"
#include "greensched/policy/policy.hpp"
#include "greensched/policy/registry.hpp"

namespace greensched::learn {

// Needs context.frag (FGD's target workload) and context.power.
Result<std::unique_ptr<policy::Policy>> make_learned_policy(LinearModel model, std::string name,
                                                            const policy::PolicyContext& context);

}  // namespace greensched::learn
