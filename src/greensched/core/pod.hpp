// A pod's request. A pod asks for CPU and memory and either no GPU, a share of one GPU
// (num_gpu == 1, gpu_milli < 1000), or num_gpu whole GPUs (gpu_milli == 1000).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/resources.hpp"

namespace greensched {

enum class Qos : uint8_t { kUnknown, kLS, kBE, kBurstable, kGuaranteed };

// The QoS class as pod lists write it ("LS", "BE", "Burstable", "Guaranteed"; "unknown").
constexpr std::string_view qos_name(Qos q) {
  switch (q) {
    case Qos::kLS:
      return "LS";
    case Qos::kBE:
      return "BE";
    case Qos::kBurstable:
      return "Burstable";
    case Qos::kGuaranteed:
      return "Guaranteed";
    case Qos::kUnknown:
      break;
  }
  return "unknown";
}

// The class a pod list's qos field names; false for any other text (empty included).
constexpr bool parse_qos(std::string_view name, Qos& out) {
  for (Qos q : {Qos::kLS, Qos::kBE, Qos::kBurstable, Qos::kGuaranteed}) {
    if (name == qos_name(q)) {
      out = q;
      return true;
    }
  }
  return false;
}

// What a pod shape stands for: the request bar memory (and the name and times). Pods of one
// shape filter and score alike on every node; ordered as a tuple of its fields.
struct PodShape {
  int64_t cpu_milli = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;
  GpuModelSet gpu_spec = 0;

  bool operator==(const PodShape&) const = default;
  auto operator<=>(const PodShape&) const = default;
};

struct PodSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;       // per GPU
  GpuModelSet gpu_spec = 0;    // allowed models; 0 = any
  int64_t creation_time = -1;  // seconds; -1 when the trace has no timestamps
  int64_t deletion_time = -1;
  int64_t scheduled_time = -1;  // -1 when never scheduled (Pending) or absent
  uint32_t shape = 0;           // dense id of (cpu_milli, num_gpu, gpu_milli, gpu_spec); see trace
  Qos qos = Qos::kUnknown;      // after shape: 96 bytes, not 104 (a load holds millions)

  bool needs_gpu() const { return num_gpu > 0 && gpu_milli > 0; }
  bool shares_gpu() const { return num_gpu == 1 && gpu_milli < kGpuMilli && gpu_milli > 0; }
  int64_t total_gpu_milli() const { return needs_gpu() ? int64_t{num_gpu} * gpu_milli : 0; }
  PodShape shape_fields() const { return {cpu_milli, num_gpu, gpu_milli, gpu_spec}; }
};

// Latency-sensitive pods (QoS LS or Guaranteed) must start promptly; the rest are best effort.
inline bool is_latency_sensitive(const PodSpec& pod) {
  return pod.qos == Qos::kLS || pod.qos == Qos::kGuaranteed;
}

// GPU affinity tag used by the GpuClustering policy: 0 no GPU, 1 a shared GPU, 1+k k whole GPUs.
inline constexpr int kGpuTagCount = 2 + kMaxGpusPerNode;
inline int gpu_tag(const PodSpec& pod) {
  if (!pod.needs_gpu()) return 0;
  if (pod.shares_gpu()) return 1;
  return 1 + pod.num_gpu;
}

// The four kinds of pod the openb traces hold, for profiles and prediction groups.
enum class PodKind : int { kCpuOnly = 0, kSharedGpu = 1, kOneGpu = 2, kMultiGpu = 3 };
inline constexpr int kPodKinds = 4;
inline PodKind pod_kind(const PodSpec& pod) {
  if (!pod.needs_gpu()) return PodKind::kCpuOnly;
  if (pod.shares_gpu()) return PodKind::kSharedGpu;
  return pod.num_gpu == 1 ? PodKind::kOneGpu : PodKind::kMultiGpu;
}
// "cpu_only", "shared_gpu", "one_gpu", "multi_gpu".
inline const char* pod_kind_name(PodKind kind) {
  switch (kind) {
    case PodKind::kCpuOnly:
      return "cpu_only";
    case PodKind::kSharedGpu:
      return "shared_gpu";
    case PodKind::kOneGpu:
      return "one_gpu";
    case PodKind::kMultiGpu:
      return "multi_gpu";
  }
  return "unknown";
}

}  // namespace greensched
