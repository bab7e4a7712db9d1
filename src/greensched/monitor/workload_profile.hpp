// Profile of a pod list (any openb variant): what kinds of pods it holds and how much GPU
// they ask for, the distribution of GPU shares, CPU and memory per GPU, GPU model
// constraints, QoS mix, lifetimes, arrivals in time, and FGD's target workload.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/trace/quantiles.hpp"

namespace greensched::monitor {

struct KindRow {
  std::string kind;
  int64_t pods = 0;
  double pod_share = 0;  // of all pods
  double gpus = 0;       // requested GPUs (GPU milli / 1000)
  double gpu_share = 0;  // of all requested GPUs
};

// Pods whose per-GPU share gpu_milli lies in [lo, hi].
struct GpuMilliBin {
  int32_t lo = 0;
  int32_t hi = 0;
  int64_t pods = 0;
  double pod_share = 0;  // of GPU pods
  double gpus = 0;
};

struct DistributionRow {
  std::string group;  // a pod kind, or "gpu_pods" for all GPU pods, or "all"
  trace::Distribution d;
};

struct ModelRow {
  std::string model;  // a GPU model, or "any" for pods without a constraint
  int64_t pods = 0;   // GPU pods that accept it
  double share = 0;   // of GPU pods
};

struct QosRow {
  std::string qos;  // LS, BE, Burstable, Guaranteed, unknown
  int64_t pods = 0;
  double pod_share = 0;
  double gpus = 0;
  double gpu_share = 0;
};

struct WorkloadProfile {
  std::string source;
  int64_t pods = 0;
  int64_t gpu_pods = 0;
  double requested_gpus = 0;
  std::array<KindRow, kPodKinds> kinds;
  std::vector<GpuMilliBin> gpu_milli;           // 10 bins of 100 for shares, then 1000
  std::vector<DistributionRow> cpu_per_gpu;     // vCPU per requested GPU
  std::vector<DistributionRow> memory_per_gpu;  // GiB per requested GPU
  int64_t constrained_pods = 0;                 // GPU pods with a gpu_spec
  std::vector<ModelRow> gpu_models;
  std::vector<QosRow> qos;
  int64_t timed_pods = 0;                       // pods with creation and deletion times
  std::vector<DistributionRow> lifetime_hours;  // deletion - creation, by kind and "all"
  std::array<int64_t, 24> arrivals_by_hour{};   // creation_time mod 1 day, trace time 0 = 00:00
  std::vector<int64_t> arrivals_by_day;         // creation_time / 1 day
  frag::TargetWorkload target;
};

WorkloadProfile profile_workload(std::span<const PodSpec> pods, const GpuModelRegistry& models,
                                 std::string source);

}  // namespace greensched::monitor
