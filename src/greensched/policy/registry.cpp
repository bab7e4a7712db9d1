#include "greensched/policy/registry.hpp"

#include <fmt/format.h>

#include "greensched/policy/policies.hpp"

namespace greensched::policy {

std::span<const PolicyInfo> policy_catalog() {
  static constexpr PolicyInfo kCatalog[] = {
      {"random", "a feasible node uniformly at random"},
      {"dotprod", "DotProduct: smallest dot product of free and requested CPU/GPU"},
      {"clustering", "GpuClustering: keep pods of the same GPU shape together"},
      {"packing", "GpuPacking: partly used GPUs first, then used nodes, then empty nodes"},
      {"bestfit", "BestFit: least CPU and GPU left after placement"},
      {"fgd", "FGD: smallest increase of GPU fragmentation (ATC'23)"},
  };
  return kCatalog;
}

Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const PolicyContext& context) {
  if (name == "random") return make_random_policy();
  if (name == "dotprod") return make_dot_product_policy();
  if (name == "clustering") return make_gpu_clustering_policy();
  if (name == "packing") return make_gpu_packing_policy();
  if (name == "bestfit") return make_best_fit_policy();
  if (name == "fgd") {
    if (!context.frag) return Error{"fgd needs a target workload (fragmentation model)"};
    return make_fgd_policy(context.frag, context.shape_count);
  }
  std::string known;
  for (const PolicyInfo& p : policy_catalog())
    known += known.empty() ? p.name : fmt::format(", {}", p.name);
  return Error{fmt::format("unknown policy '{}' (known: {})", name, known)};
}

}  // namespace greensched::policy
