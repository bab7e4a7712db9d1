#include "greensched/policy/registry.hpp"

#include <charconv>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

struct RegisteredFactory {
  std::string summary;
  PolicyFactory make;
};

// Factories registered by higher layers; written at start-up, read when runs make policies.
struct FactoryTable {
  std::mutex mutex;
  std::map<std::string, RegisteredFactory, std::less<>> by_name;
};
FactoryTable& factory_table() {
  static FactoryTable table;
  return table;
}

std::optional<PolicyFactory> find_factory(std::string_view name) {
  FactoryTable& t = factory_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.by_name.find(name);
  if (it == t.by_name.end()) return std::nullopt;
  return it->second.make;
}

std::string known_names() {
  std::string known;
  for (const PolicyInfo& p : policy_catalog()) {
    known += known.empty() ? std::string(p.name) : fmt::format(", {}", p.name);
  }
  for (const auto& [name, summary] : registered_policy_factories()) {
    known += fmt::format(", {}", name);
  }
  return known;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// A term naming a registered factory, split into "NAME[=ARG]" and its weight text (empty when
// none was given). nullopt when the term does not name a factory.
struct FactoryTerm {
  std::string name;  // canonical: NAME or NAME=ARG
  std::string_view weight;
};
std::optional<FactoryTerm> split_factory_term(std::string_view term) {
  const std::size_t sep = term.find_first_of(":=");
  const std::string_view name = term.substr(0, sep);
  if (!find_factory(name)) return std::nullopt;
  FactoryTerm out;
  out.name = std::string(name);
  if (sep == std::string_view::npos) return out;
  std::string_view rest = term.substr(sep + 1);
  if (term[sep] == ':' && all_digits(rest)) {
    out.weight = rest;
    return out;
  }
  const std::size_t last = rest.rfind(':');
  if (last != std::string_view::npos && all_digits(rest.substr(last + 1))) {
    out.weight = rest.substr(last + 1);
    rest = rest.substr(0, last);
  }
  out.name.push_back('=');
  out.name.append(rest);
  return out;
}

Result<std::unique_ptr<Policy>> make_single(std::string_view name, const PolicyContext& context) {
  if (auto f = find_factory(name.substr(0, name.find('=')))) {
    const std::size_t eq = name.find('=');
    return (*f)(eq == std::string_view::npos ? std::string_view() : name.substr(eq + 1), context);
  }
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
  if (name == "fgd-energy") {
    if (!context.frag) return Error{"fgd-energy needs a target workload (fragmentation model)"};
    if (!context.power) return Error{"fgd-energy needs the nodes' power figures (power model)"};
    return make_fgd_energy_policy(context.frag, context.shape_count, context.power);
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
      {"fgd-energy",
       "energy-aware FGD: FGD, then among its ties a busy node, the least power, BestFit"},
  };
  return kCatalog;
}

Result<std::vector<MixTerm>> parse_policy_spec(std::string_view spec) {
  std::vector<MixTerm> terms;
  if (spec.empty()) return Error{"empty policy"};
  while (true) {
    const std::size_t plus = spec.find('+');
    const std::string_view term = spec.substr(0, plus);
    const std::optional<FactoryTerm> factory = split_factory_term(term);
    const std::size_t colon = term.find(':');
    MixTerm t;
    t.name = factory ? factory->name : std::string(term.substr(0, colon));
    if (factory ? !factory->weight.empty() : colon != std::string_view::npos) {
      const std::string_view w = factory ? factory->weight : term.substr(colon + 1);
      auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), t.weight);
      if (w.empty() || ec != std::errc() || ptr != w.data() + w.size() || t.weight < 0) {
        return Error{
            fmt::format("policy '{}': weight '{}' is not a non-negative integer", spec, w)};
      }
    }
    bool known = factory.has_value();
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
  // One term without a weight is the policy itself, not a mix.
  const std::optional<FactoryTerm> factory = split_factory_term(spec);
  if (terms.value().size() == 1 &&
      (factory ? factory->weight.empty() : spec.find(':') == std::string_view::npos)) {
    const std::string& name = terms.value().front().name;
    if (!context.gpu_select.empty() && context.gpu_select != name) {
      return Error{
          fmt::format("--gpu-select {}: not part of policy '{}'", context.gpu_select, spec)};
    }
    return make_single(name, context);
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

Status register_policy_factory(std::string name, std::string summary, PolicyFactory factory) {
  if (name.empty() || name.find_first_of(":=+,") != std::string::npos) {
    return Error{fmt::format("policy factory name '{}' must be non-empty without : = + ,", name)};
  }
  for (const PolicyInfo& p : policy_catalog()) {
    if (p.name == name) return Error{fmt::format("'{}' is a built-in policy", name)};
  }
  FactoryTable& t = factory_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.by_name[std::move(name)] = RegisteredFactory{std::move(summary), std::move(factory)};
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> registered_policy_factories() {
  FactoryTable& t = factory_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, f] : t.by_name) out.emplace_back(name, f.summary);
  return out;
}

}  // namespace greensched::policy
