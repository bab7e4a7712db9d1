#include "greensched/policy/registry.hpp"

#include <charconv>

#include <fmt/format.h>

#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

std::string known_names() {
  std::string known;
  for (const PolicyInfo& p : policy_catalog()) {
    known += known.empty() ? std::string(p.name) : fmt::format(", {}", p.name);
  }
  return known;
}

Result<std::unique_ptr<Policy>> make_single(std::string_view name, const PolicyContext& context) {
  if (name == "random") return make_random_policy();
  if (name == "dotprod") return make_dot_product_policy();
  if (name == "clustering") return make_gpu_clustering_policy();
  if (name == "packing") return make_gpu_packing_policy();
  if (name == "bestfit") return make_best_fit_policy();
  if (name == "fgd") {
    if (!context.frag) return Error{"fgd needs a target workload (fragmentation model)"};
    return make_fgd_policy(context.frag, context.shape_count);
  }
  if (name == "pwr") {
    if (!context.power) return Error{"pwr needs the nodes' power figures (power model)"};
    return make_pwr_policy(context.power);
  }
  return Error{fmt::format("unknown policy '{}' (known: {})", name, known_names())};
}

}  // namespace

std::span<const PolicyInfo> policy_catalog() {
  static constexpr PolicyInfo kCatalog[] = {
      {"random", "a feasible node uniformly at random"},
      {"dotprod", "DotProduct: smallest dot product of free and requested CPU/GPU"},
      {"clustering", "GpuClustering: keep pods of the same GPU shape together"},
      {"packing", "GpuPacking: partly used GPUs first, then used nodes, then empty nodes"},
      {"bestfit", "BestFit: least CPU and GPU left after placement"},
      {"fgd", "FGD: smallest increase of GPU fragmentation (ATC'23)"},
      {"pwr", "PWR: smallest increase of node power (CCGrid'25)"},
  };
  return kCatalog;
}

Result<std::vector<MixTerm>> parse_policy_spec(std::string_view spec) {
  std::vector<MixTerm> terms;
  if (spec.empty()) return Error{"empty policy"};
  while (true) {
    const std::size_t plus = spec.find('+');
    const std::string_view term = spec.substr(0, plus);
    const std::size_t colon = term.find(':');
    MixTerm t;
    t.name = std::string(term.substr(0, colon));
    if (colon != std::string_view::npos) {
      const std::string_view w = term.substr(colon + 1);
      auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), t.weight);
      if (w.empty() || ec != std::errc() || ptr != w.data() + w.size() || t.weight < 0) {
        return Error{
            fmt::format("policy '{}': weight '{}' is not a non-negative integer", spec, w)};
      }
    }
    bool known = false;
    for (const PolicyInfo& p : policy_catalog()) known = known || p.name == t.name;
    if (!known) {
      return Error{fmt::format("unknown policy '{}' (known: {}; mix as name:weight+name:weight)",
                               t.name, known_names())};
    }
    for (const MixTerm& other : terms) {
      if (other.name == t.name)
        return Error{fmt::format("policy '{}' named twice in a mix", t.name)};
    }
    terms.push_back(std::move(t));
    if (plus == std::string_view::npos) break;
    spec.remove_prefix(plus + 1);
  }
  return terms;
}

Result<std::unique_ptr<Policy>> make_policy(std::string_view spec, const PolicyContext& context) {
  auto terms = parse_policy_spec(spec);
  if (!terms.ok()) return Error{terms.error()};
  if (terms.value().size() == 1 && spec.find(':') == std::string_view::npos) {
    if (!context.gpu_select.empty() && context.gpu_select != spec) {
      return Error{
          fmt::format("--gpu-select {}: not part of policy '{}'", context.gpu_select, spec)};
    }
    return make_single(spec, context);
  }
  std::vector<MixMember> members;
  std::size_t gpu_select = terms.value().size();
  for (const MixTerm& t : terms.value()) {
    auto made = make_single(t.name, context);
    if (!made.ok()) return Error{made.error()};
    if (t.name == context.gpu_select) gpu_select = members.size();
    members.push_back(MixMember{std::move(made.value()), t.weight});
  }
  if (!context.gpu_select.empty() && gpu_select == members.size()) {
    return Error{
        fmt::format("--gpu-select {}: not part of the mix '{}'", context.gpu_select, spec)};
  }
  if (context.gpu_select.empty()) {
    // Default: FGD's rule when FGD is in the mix, else the first member's.
    gpu_select = 0;
    for (std::size_t i = 0; i < terms.value().size(); ++i) {
      if (terms.value()[i].name == "fgd") gpu_select = i;
    }
  }
  return make_mix_policy(std::string(spec), std::move(members), gpu_select);
}

}  // namespace greensched::policy
