// Policies by name, as the command line and config files spell them.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "greensched/core/status.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/policy.hpp"

namespace greensched::policy {

struct PolicyInfo {
  std::string_view name;
  std::string_view summary;
};

// The built-in policies, in the order reports list them.
std::span<const PolicyInfo> policy_catalog();

// What a policy may need from the run that creates it.
struct PolicyContext {
  std::shared_ptr<frag::FragmentationModel> frag;  // required by fgd
  uint32_t shape_count = 0;                        // pods' shape ids are below this
};

Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const PolicyContext& context);

}  // namespace greensched::policy
