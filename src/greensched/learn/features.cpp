#include "greensched/learn/features.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace greensched::learn {

std::string_view feature_name(int feature) {
  static constexpr std::string_view kNames[kFeatureCount] = {
      "fgd_score",  "frag_gain_gpus",    "power_increase_kw", "cpu_left",        "memory_left",
      "gpu_left",   "share_on_used_gpu", "share_gpu_left",    "opens_node",      "whole_gpus_taken",
      "model_free", "model_pressure",    "node_gpus",         "cpu_starved_gain"};
  return kNames[feature];
}

std::string_view pod_class_name(int pod_class) {
  static constexpr std::string_view kNames[kPodClassCount] = {"cpu_only", "sharing", "one_gpu",
                                                              "multi_gpu"};
  return kNames[pod_class];
}

FeatureExtractor::FeatureExtractor(std::shared_ptr<frag::FragmentationModel> frag,
                                   uint32_t shape_count,
                                   std::shared_ptr<const std::vector<power::NodePower>> power)
    : frag_(std::move(frag)),
      stride_(std::max<uint32_t>(shape_count, 1)),
      power_(std::move(power)) {}

void FeatureExtractor::begin(const Cluster& cluster, const PodSpec& pod) {
  if (!models_ready_) {
    static_.resize(cluster.size());
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      const NodeSpec& spec = cluster.spec(static_cast<NodeIndex>(n));
      if (spec.model != kNoGpuModel) {
        model_capacity_[spec.model] += static_cast<double>(spec.gpu_count) * kGpuMilli;
      }
      NodeStatic& ns = static_[n];
      const power::NodePower& figures = (*power_)[n];
      ns.inv_cpu = spec.cpu_milli > 0 ? 1.0 / static_cast<double>(spec.cpu_milli) : 0.0;
      ns.inv_memory = spec.memory_mib > 0 ? 1.0 / static_cast<double>(spec.memory_mib) : 0.0;
      ns.inv_gpu_milli = spec.gpu_count > 0 ? 1.0 / (spec.gpu_count * double{kGpuMilli}) : 0.0;
      ns.gpu_up_watts = figures.gpu.max_watts - figures.gpu.idle_watts;
      // As power::cpu_power_watts: physical cores = ceil(vCPU / 2).
      ns.physical_cores = (spec.cpu_milli + 1999) / 2000;
      ns.cores_per_socket = std::max(1, figures.cpu.cores_per_socket);
      ns.cpu_max_watts = figures.cpu.max_watts;
      ns.cpu_idle_watts = figures.cpu.idle_watts;
    }
    // The spec and the power figures; everything else in NodeStatic is derived from them.
    using StaticKey =
        std::tuple<int64_t, int64_t, int, GpuModelId, double, double, double, int64_t>;
    std::map<StaticKey, uint32_t> classes;
    static_class_.resize(cluster.size());
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      const NodeSpec& spec = cluster.spec(static_cast<NodeIndex>(n));
      const NodeStatic& ns = static_[n];
      const StaticKey key{spec.cpu_milli,    spec.memory_mib,    spec.gpu_count,
                          spec.model,        ns.gpu_up_watts,    ns.cpu_max_watts,
                          ns.cpu_idle_watts, ns.cores_per_socket};
      static_class_[n] = classes.emplace(key, static_cast<uint32_t>(classes.size())).first->second;
    }
    // Restricted target demand, spread over its allowed models by capacity, per unit of each
    // model's capacity, relative to all target demand per unit of cluster capacity.
    const frag::TargetWorkload& target = frag_->target();
    double demand = 0;
    for (const frag::TargetShape& s : target.shapes) {
      demand += static_cast<double>(s.count) * s.num_gpu * s.gpu_milli;
    }
    double gpu_shape_cpu = 0;
    double gpu_shape_gpus = 0;
    for (const frag::TargetShape& s : target.shapes) {
      if (s.num_gpu == 0 || s.gpu_milli == 0) continue;
      gpu_shape_cpu += static_cast<double>(s.count) * static_cast<double>(s.cpu_milli);
      gpu_shape_gpus += static_cast<double>(s.count) * s.num_gpu * s.gpu_milli / kGpuMilli;
    }
    cpu_milli_per_gpu_ = gpu_shape_gpus > 0 ? gpu_shape_cpu / gpu_shape_gpus : 0.0;
    const double capacity = static_cast<double>(cluster.total_gpu_milli());
    for (const frag::TargetShape& s : target.shapes) {
      if (s.gpu_spec == 0 || s.num_gpu == 0 || demand <= 0) continue;
      double allowed_capacity = 0;
      for (int m = 0; m < kMaxGpuModels; ++m) {
        if ((s.gpu_spec >> m) & 1U) allowed_capacity += model_capacity_[m];
      }
      if (allowed_capacity <= 0) continue;
      const double share = static_cast<double>(s.count) * s.num_gpu * s.gpu_milli / demand;
      for (int m = 0; m < kMaxGpuModels; ++m) {
        if ((s.gpu_spec >> m) & 1U) model_pressure_[m] += share * capacity / allowed_capacity;
      }
    }
    models_ready_ = true;
  }
  for (int m = 0; m < kMaxGpuModels; ++m) {
    model_free_[m] =
        static_cast<double>(cluster.free_gpu_milli_of_model(static_cast<GpuModelId>(m)));
  }
  const double total = static_cast<double>(cluster.total_gpu_milli());
  load_ = total > 0 ? static_cast<double>(cluster.allocated_gpu_milli()) / total : 0.0;
  pod_restricted_ = pod.gpu_spec != 0;
}

double FeatureExtractor::fgd_score(int64_t before_scaled, int64_t after_scaled) const {
  const double delta = frag_->to_gpu_milli(before_scaled - after_scaled);
  const double sigmoid = 1.0 / (1.0 + std::exp(-delta / 1000.0));
  return static_cast<double>(static_cast<int64_t>(sigmoid * 100.0)) / 100.0;
}

std::vector<FeatureExtractor::FragPart> FeatureExtractor::compute_frag_parts(
    const frag::NodeFragState& st, const PodSpec& pod) const {
  std::vector<FragPart> out;
  const int64_t cpu_after = st.cpu_free_milli - pod.cpu_milli;
  const auto part = [&](int32_t gpu_free, const std::array<int32_t, kMaxGpusPerNode>& gpus) {
    const int64_t after = frag_->scaled_frag(st.model, st.gpu_count, cpu_after, gpus.data());
    FragPart p;
    p.gpu_free = gpu_free;
    p.fgd_score = fgd_score(st.frag_scaled, after);
    p.frag_gain = frag_->to_gpu_milli(st.frag_scaled - after) / kGpuMilli;
    out.push_back(p);
  };
  if (pod.shares_gpu()) {
    for (int g = 0; g < st.gpu_count; ++g) {
      const int32_t f = st.gpu_free_sorted[g];
      if (f < pod.gpu_milli) break;  // sorted descending
      if (g > 0 && f == st.gpu_free_sorted[g - 1]) continue;
      auto gpus = st.gpu_free_sorted;
      gpus[g] -= pod.gpu_milli;
      part(f, gpus);
    }
    return out;
  }
  auto gpus = st.gpu_free_sorted;
  if (pod.needs_gpu()) {
    for (int g = 0; g < pod.num_gpu; ++g) gpus[g] = 0;  // whole free GPUs sort first
  }
  part(0, gpus);
  return out;
}

std::span<const FeatureExtractor::FragPart> FeatureExtractor::frag_parts(frag::StateId id,
                                                                         const PodSpec& pod) {
  if (pod.shape >= stride_) {
    scratch_parts_ = compute_frag_parts(frag_->state(id), pod);
    return scratch_parts_;
  }
  const std::size_t slot = static_cast<std::size_t>(id) * stride_ + pod.shape;
  if (slot >= memo_.size()) memo_.resize((frag_->state_count() + 64) * stride_, 0);
  if (memo_[slot] == 0) {
    const std::vector<FragPart> parts = compute_frag_parts(frag_->state(id), pod);
    memo_[slot] = (static_cast<uint64_t>(parts_.size()) << 8 | parts.size()) + 1;
    parts_.insert(parts_.end(), parts.begin(), parts.end());
  }
  const uint64_t entry = memo_[slot] - 1;
  return std::span<const FragPart>(parts_).subspan(entry >> 8, entry & 0xFF);
}

double FeatureExtractor::starved_gpus(int64_t cpu_free_milli, int64_t gpu_free_milli) const {
  if (cpu_milli_per_gpu_ <= 0) return 0.0;
  const double served =
      static_cast<double>(std::max<int64_t>(cpu_free_milli, 0)) / cpu_milli_per_gpu_;
  return std::max(0.0, static_cast<double>(gpu_free_milli) / kGpuMilli - served);
}

double FeatureExtractor::cpu_watts(const NodeStatic& ns, int64_t cpu_free_milli) const {
  // power::cpu_power_watts in integers: idle cores = floor(free vCPU / 2).
  const int64_t idle = std::min(std::max<int64_t>(cpu_free_milli, 0) / 2000, ns.physical_cores);
  return power::cpu_power_from_cores(ns.physical_cores, ns.physical_cores - idle,
                                     ns.cores_per_socket, ns.cpu_max_watts, ns.cpu_idle_watts);
}

std::array<uint64_t, 3> FeatureExtractor::option_key(const Cluster& cluster, NodeIndex node) {
  const NodeState& s = cluster.state(node);
  const uint64_t state = frag_->node_state(cluster, node);
  return {state << 32 | uint64_t{static_class_[node]} << 1 | (s.pods == 0 ? 1U : 0U),
          static_cast<uint64_t>(s.memory_free_mib), static_cast<uint64_t>(s.cpu_free_milli)};
}

FeatureVector FeatureExtractor::NodeOptions::features(std::size_t i) const {
  FeatureVector x = base;
  const Option& o = options[i];
  x[kFgdScore] = o.fgd_score;
  x[kFragGain] = o.frag_gain;
  x[kPowerIncrease] = o.power_increase;
  x[kShareOnUsedGpu] = o.share_on_used_gpu;
  x[kShareGpuLeft] = o.share_gpu_left;
  x[kWholeGpusTaken] = o.whole_gpus_taken;
  return x;
}

const FeatureExtractor::NodeOptions& FeatureExtractor::options(const Cluster& cluster,
                                                               NodeIndex node, const PodSpec& pod) {
  const NodeSpec& spec = cluster.spec(node);
  const NodeState& s = cluster.state(node);
  const NodeStatic& ns = static_[node];
  const std::span<const FragPart> parts = frag_parts(frag_->node_state(cluster, node), pod);

  FeatureVector& base = out_.base;
  base[kCpuLeft] = static_cast<double>(s.cpu_free_milli - pod.cpu_milli) * ns.inv_cpu;
  base[kMemoryLeft] = static_cast<double>(s.memory_free_mib - pod.memory_mib) * ns.inv_memory;
  base[kGpuLeft] =
      static_cast<double>(s.gpu_free_total_milli - pod.total_gpu_milli()) * ns.inv_gpu_milli;
  base[kOpensNode] = s.pods == 0 ? 1.0 : 0.0;
  base[kNodeGpus] = spec.gpu_count / 8.0;
  base[kCpuStarvedGain] = starved_gpus(s.cpu_free_milli, s.gpu_free_total_milli) -
                          starved_gpus(s.cpu_free_milli - pod.cpu_milli,
                                       s.gpu_free_total_milli - pod.total_gpu_milli());
  base[kModelFree] = 0.0;
  base[kModelPressure] = 0.0;
  if (spec.model != kNoGpuModel && model_capacity_[spec.model] > 0) {
    base[kModelFree] = model_free_[spec.model] / model_capacity_[spec.model];
    base[kModelPressure] = pod_restricted_ ? 0.0 : model_pressure_[spec.model];
  }
  const double cpu_increase =
      cpu_watts(ns, s.cpu_free_milli - pod.cpu_milli) - cpu_watts(ns, s.cpu_free_milli);
  const double inv_gpus = spec.gpu_count > 0 ? 1.0 / spec.gpu_count : 0.0;

  out_.options.clear();
  for (const FragPart& p : parts) {
    Option o;
    o.gpu_free = p.gpu_free;
    o.fgd_score = p.fgd_score;
    o.frag_gain = p.frag_gain;
    int gpus_up = 0;
    if (pod.shares_gpu()) {
      gpus_up = p.gpu_free == kGpuMilli ? 1 : 0;
      o.share_on_used_gpu = p.gpu_free < kGpuMilli ? 1.0 : 0.0;
      o.share_gpu_left = static_cast<double>(p.gpu_free - pod.gpu_milli) / kGpuMilli;
    } else if (pod.needs_gpu()) {
      gpus_up = pod.num_gpu;
    }
    o.whole_gpus_taken = gpus_up * inv_gpus;
    o.power_increase = (cpu_increase + gpus_up * ns.gpu_up_watts) / 1000.0;
    out_.options.push_back(o);
  }
  return out_;
}

}  // namespace greensched::learn
