// Factories of the built-in policies; each lives in its own file. Use registry.hpp to make
// one by name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/policy.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::policy {

// One feasible node drawn uniformly at random; a random fitting GPU for sharing pods.
std::unique_ptr<Policy> make_random_policy();
// Tetris-style dot product of free and requested (CPU, GPU); the smaller product wins.
std::unique_ptr<Policy> make_dot_product_policy();
// Keep pods of the same GPU shape together (sharing pods with sharing pods, k-GPU with k-GPU).
std::unique_ptr<Policy> make_gpu_clustering_policy();
// Fill partly used GPUs first, then used nodes, then empty nodes.
std::unique_ptr<Policy> make_gpu_packing_policy();
// Least free CPU and GPU left after placement, min-max normalised.
std::unique_ptr<Policy> make_best_fit_policy();
// Fragmentation Gradient Descent: the smallest increase of the node's fragmentation measure.
// `shape_count` bounds the pods' shape ids (for the score memo).
std::unique_ptr<Policy> make_fgd_policy(std::shared_ptr<frag::FragmentationModel> model,
                                        uint32_t shape_count);
// PWR: the smallest increase of node power (CCGrid'25); `power` holds each node's figures.
std::unique_ptr<Policy> make_pwr_policy(std::shared_ptr<const std::vector<power::NodePower>> power);

// Energy-aware FGD: FGD's score, then among its ties a node already in use, the smallest power
// increase and BestFit (fgd_energy.cpp).
std::unique_ptr<Policy> make_fgd_energy_policy(
    std::shared_ptr<frag::FragmentationModel> model, uint32_t shape_count,
    std::shared_ptr<const std::vector<power::NodePower>> power);

struct MixMember {
  std::unique_ptr<Policy> policy;
  int64_t weight = 1;
};
// Weighted sum of the members' normalised scores; GPUs are picked by member `gpu_select`.
std::unique_ptr<Policy> make_mix_policy(std::string name, std::vector<MixMember> members,
                                        std::size_t gpu_select);

}  // namespace greensched::policy
