#include "greensched/learn/register.hpp"

#include <string>

#include <fmt/format.h>

#include "greensched/learn/fgd_online.hpp"
#include "greensched/learn/learned_policy.hpp"
#include "greensched/learn/linear_model.hpp"
#include "greensched/policy/registry.hpp"

namespace greensched::learn {

Status register_learn_policies() {
  Status online = policy::register_policy_factory(
      "fgd-online", "FGD with its target workload estimated online from recent arrivals",
      [](std::string_view arg,
         const policy::PolicyContext& context) -> Result<std::unique_ptr<policy::Policy>> {
        auto options = parse_fgd_online_options(arg);
        if (!options.ok()) return Error{options.error()};
        const std::string name =
            arg.empty() ? std::string("fgd-online") : fmt::format("fgd-online={}", arg);
        return make_fgd_online_policy(options.value(), name, context);
      });
  if (!online.ok()) return online;
  return policy::register_policy_factory(
      "learned", "a learned linear scoring model: learned=MODEL.json",
      [](std::string_view arg,
         const policy::PolicyContext& context) -> Result<std::unique_ptr<policy::Policy>> {
        if (arg.empty()) return Error{"learned needs a model file: learned=MODEL.json"};
        auto model = load_linear_model(std::string(arg));
        if (!model.ok()) return Error{model.error()};
        return make_learned_policy(std::move(model.value()), fmt::format("learned={}", arg),
                                   context);
      });
}

}  // namespace greensched::learn
