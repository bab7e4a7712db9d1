// Policies by name, as the command line and config files spell them.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/policy.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::policy {

struct PolicyInfo {
  std::string_view name;
  std::string_view summary;
};

// The built-in policies, in the order reports list them.
std::span<const PolicyInfo> policy_catalog();

// What a policy may need from the run that creates it.
struct PolicyContext {
  std::shared_ptr<frag::FragmentationModel> frag;              // required by fgd
  uint32_t shape_count = 0;                                    // pods' shape ids are below this
  std::shared_ptr<const std::vector<power::NodePower>> power;  // per node; required by pwr
  std::string gpu_select;  // in a mix, the member whose rule picks GPUs ("" = default)
};

// One term of a policy spec: "fgd" or "pwr:200". For a registered factory (below) the name
// keeps its argument: "learned=models/x.json".
struct MixTerm {
  std::string name;
  int64_t weight = 1;
};
// Parses "name" or "name:weight+name:weight"; names must be in the catalogue or registered.
Result<std::vector<MixTerm>> parse_policy_spec(std::string_view spec);

// Policies made by layers above policy/ (e.g. learn/), registered at start-up. A factory named
// NAME serves the specs "NAME", "NAME=ARG" and "NAME:ARG" (when ARG is not a whole number,
// which would be a mix weight); in a mix, "NAME=ARG:WEIGHT". ARG may not contain '+' or ','.
using PolicyFactory = std::function<Result<std::unique_ptr<Policy>>(std::string_view arg,
                                                                    const PolicyContext& context)>;
// Registering a name again replaces its factory. Built-in names cannot be registered.
Status register_policy_factory(std::string name, std::string summary, PolicyFactory factory);
// The registered factories' names and summaries, in name order.
std::vector<std::pair<std::string, std::string>> registered_policy_factories();

// A policy by name ("fgd") or a weighted mix ("pwr:200+fgd:800", kube-scheduler style: the
// sum of weight x normalised score).
Result<std::unique_ptr<Policy>> make_policy(std::string_view spec, const PolicyContext& context);

}  // namespace greensched::policy
