// What a Kubernetes pod asks for, read from its v1.Pod JSON the way openb / Alibaba's GPU
// share scheduler and HAMi express GPU requests:
//   cpu, memory          container resources (requests, else limits), Kubernetes quantities;
//                        the pod's request is max(sum over containers, each init container)
//                        plus spec.overhead, as the kube-scheduler computes it;
//   GPU (Alibaba/openb)  alibabacloud.com/gpu-milli (per GPU, 1000 = one GPU) and
//                        alibabacloud.com/gpu-count, as container resources or, as the openb
//                        simulator writes them, pod annotations;
//   GPU (HAMi)           nvidia.com/gpu (count) and nvidia.com/gpumem-percentage (percent
//                        of one GPU; 30 -> 300 milli);
//   GPU models           annotation alibabacloud.com/gpu-card-model ("V100M16|V100M32"), else
//                        the nodeSelector of the same key;
//   movable              annotation greensched.io/movable: "true" (exactly): the pod may be
//                        evicted to defragment the cluster (GET /v1/defrag, greensched
//                        deschedule).
// A pod takes no GPU, a share of one GPU, or whole GPUs (see core/pod.hpp); anything else, a
// negative or out-of-range quantity, or a malformed object is an error naming the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"

namespace greensched::serve {

inline constexpr std::string_view kGpuMilliResource = "alibabacloud.com/gpu-milli";
inline constexpr std::string_view kGpuCountResource = "alibabacloud.com/gpu-count";
inline constexpr std::string_view kGpuModelKey = "alibabacloud.com/gpu-card-model";
// GPU feature discovery's node label of the GPU model; a pod selects it by nodeSelector or
// node affinity.
inline constexpr std::string_view kGpuProductKey = "nvidia.com/gpu.product";
inline constexpr std::string_view kHamiGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kHamiMemPercentResource = "nvidia.com/gpumem-percentage";
// The annotation that lets greensched move a running pod ("true"; anything else: it stays).
inline constexpr std::string_view kMovableAnnotation = "greensched.io/movable";

// Requests above these are rejected as malformed rather than merely unschedulable.
inline constexpr int64_t kMaxPodCpuMilli = int64_t{1} << 40;
inline constexpr int64_t kMaxPodMemoryMib = int64_t{1} << 40;

// Which pod: Kubernetes identifies a live pod by namespace/name; the UID tells incarnations apart.
struct PodRef {
  std::string ns = "default";
  std::string name;
  std::string uid;
  std::string key() const { return ns + "/" + name; }
};

struct PodRequest {
  PodRef ref;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;                // per GPU; 0 when no GPU
  std::vector<std::string> gpu_models;  // allowed models; empty = any
  bool movable = false;                 // annotated greensched.io/movable: "true"
};

// Whether a v1.Pod's metadata (or the pod itself) carries greensched.io/movable: "true".
bool movable_annotation(const nlohmann::json& pod);

// Reads a v1.Pod object.
Result<PodRequest> parse_pod(const nlohmann::json& pod);

// The Pending v1.Pod kube-scheduler sends for `pod` (one container; cpu and memory requests;
// the openb GPU resources as limits; its GPU models as the annotation): parse_pod reads it back
// to the same request. For load tests and benchmarks that play the scheduler's side.
nlohmann::json pending_pod_object(const PodSpec& pod, const PodRef& ref,
                                  const GpuModelRegistry& models);

// Checks and normalises a GPU request given as (count, milli per GPU) where either may be
// unknown (-1): milli alone means one GPU, count alone means whole GPUs.
Status normalise_gpu_request(int64_t count, int64_t milli, PodRequest& out, std::string_view where);

}  // namespace greensched::serve
