// The features a learned policy scores a placement by: one vector per option of placing a pod
// on a node (for a sharing pod, each distinct GPU it could take). They are the quantities the
// simulator's policies already compute: FGD's fragmentation change and score, PWR's power
// change, BestFit's residual CPU, memory and GPU, GpuPacking's reuse of used GPUs and nodes,
// and the scarcity of the node's GPU model. Pod shape and cluster load select and scale the
// weights (linear_model.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::learn {

enum Feature : int {
  kFgdScore,        // FGD's score / 100 (the integer the reference computes)
  kFragGain,        // F_n before - F_n after, in GPUs (FGD's measure; > 0: less fragmented)
  kPowerIncrease,   // node power after - before, in kW (PWR's measure)
  kCpuLeft,         // free CPU after / node CPU
  kMemoryLeft,      // free memory after / node memory
  kGpuLeft,         // free GPU milli after / node GPU milli
  kShareOnUsedGpu,  // 1: a sharing pod lands on a GPU that is already partly used
  kShareGpuLeft,    // sharing pod: what its GPU has left after, in GPUs
  kOpensNode,       // 1: the node hosted no pod before
  kWholeGpusTaken,  // fully free GPUs the placement starts using / node GPUs
  kModelFree,       // free GPU milli of the node's GPU model / that model's capacity
  kModelPressure,   // unrestricted pods: target demand that may only use this model, per unit
                    // of its capacity, relative to the cluster (0 for restricted pods)
  kNodeGpus,        // node GPUs / 8
  kCpuStarvedGain,  // starved GPUs before - after: free GPUs beyond what the node's free CPU
                    // serves at the target workload's CPU per GPU (> 0: fewer stranded)
  kFeatureCount
};
std::string_view feature_name(int feature);

// Pods get their own weights by class: the pod's kind (core/pod.hpp), named in model files
// "cpu_only", "sharing", "one_gpu", "multi_gpu".
enum PodClass : int {
  kCpuOnlyPod = static_cast<int>(PodKind::kCpuOnly),
  kSharingPod = static_cast<int>(PodKind::kSharedGpu),
  kOneGpuPod = static_cast<int>(PodKind::kOneGpu),
  kMultiGpuPod = static_cast<int>(PodKind::kMultiGpu),
  kPodClassCount = kPodKinds
};
std::string_view pod_class_name(int pod_class);
inline int pod_class(const PodSpec& pod) {
  return static_cast<int>(pod_kind(pod));
}

using FeatureVector = std::array<double, kFeatureCount>;

class FeatureExtractor {
 public:
  FeatureExtractor(std::shared_ptr<frag::FragmentationModel> frag, uint32_t shape_count,
                   std::shared_ptr<const std::vector<power::NodePower>> power);

  // Once per pod, before options(): the cluster-level quantities (load, model scarcity).
  void begin(const Cluster& cluster, const PodSpec& pod);
  // Allocated GPU milli / cluster GPU milli, as of begin().
  double load() const { return load_; }

  // The options of placing `pod` on feasible `node`: one for non-sharing pods; for sharing
  // pods one per distinct free share among the fitting GPUs, largest share first. Features
  // that do not depend on the option are in `base` (zero in the option-specific slots).
  struct Option {
    int32_t gpu_free = 0;  // sharing pod: the free share of the GPU it takes; else 0
    double fgd_score = 0;
    double frag_gain = 0;
    double power_increase = 0;
    double share_on_used_gpu = 0;
    double share_gpu_left = 0;
    double whole_gpus_taken = 0;
  };
  struct NodeOptions {
    FeatureVector base{};
    std::vector<Option> options;
    // The full feature vector of option i.
    FeatureVector features(std::size_t i) const;
    // sum_f w_f x_f for option i, given dot(w, base).
    static double score(const FeatureVector& w, double base_dot, const Option& o) {
      return base_dot + w[kFgdScore] * o.fgd_score + w[kFragGain] * o.frag_gain +
             w[kPowerIncrease] * o.power_increase + w[kShareOnUsedGpu] * o.share_on_used_gpu +
             w[kShareGpuLeft] * o.share_gpu_left + w[kWholeGpusTaken] * o.whole_gpus_taken;
    }
  };
  // Valid until the next call.
  const NodeOptions& options(const Cluster& cluster, NodeIndex node, const PodSpec& pod);

  // Nodes with equal keys have equal options for every pod between two begin() calls: the
  // same spec and power figures, interned fragmentation state, free CPU and memory, and
  // whether they host a pod. Call after begin().
  std::array<uint64_t, 3> option_key(const Cluster& cluster, NodeIndex node);

 private:
  struct FragPart {  // what depends only on the interned node state and the pod's shape
    int32_t gpu_free = 0;
    double fgd_score = 0;
    double frag_gain = 0;
  };
  std::span<const FragPart> frag_parts(frag::StateId id, const PodSpec& pod);
  std::vector<FragPart> compute_frag_parts(const frag::NodeFragState& st, const PodSpec& pod) const;
  double fgd_score(int64_t before_scaled, int64_t after_scaled) const;

  std::shared_ptr<frag::FragmentationModel> frag_;
  uint32_t stride_;
  std::shared_ptr<const std::vector<power::NodePower>> power_;
  // Memo of frag parts per (state, shape), stored one after another in parts_ (one lookup,
  // no second indirection on the hot path): offset << 8 | count, + 1 (0 = unknown).
  std::vector<uint64_t> memo_;
  std::vector<FragPart> parts_;
  std::vector<FragPart> scratch_parts_;
  NodeOptions out_;
  // Per node, fixed: reciprocals of capacities and the CPU power parameters.
  struct NodeStatic {
    double inv_cpu = 0;
    double inv_memory = 0;
    double inv_gpu_milli = 0;
    double gpu_up_watts = 0;  // max - idle of one GPU
    int64_t physical_cores = 0;
    int64_t cores_per_socket = 1;
    double cpu_max_watts = 0;
    double cpu_idle_watts = 0;
  };
  std::vector<NodeStatic> static_;
  std::vector<uint32_t> static_class_;  // per node: nodes with equal spec and NodeStatic share it
  double cpu_watts(const NodeStatic& ns, int64_t cpu_free_milli) const;
  // Per GPU model id: capacity, free milli (as of begin()), pressure.
  bool models_ready_ = false;
  std::array<double, 256> model_capacity_{};
  std::array<double, 256> model_free_{};
  std::array<double, 256> model_pressure_{};
  double load_ = 0;
  double cpu_milli_per_gpu_ = 0;  // the target workload's, over its GPU shapes
  double starved_gpus(int64_t cpu_free_milli, int64_t gpu_free_milli) const;
  bool pod_restricted_ = false;
};

}  // namespace greensched::learn
