#include "greensched/sim/placement_stepper.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "greensched/policy/filter.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/trace/inflation.hpp"

namespace greensched::sim {

PlacementStepper::PlacementStepper(const Scenario& scenario, Config config)
    : scenario_(scenario), config_(std::move(config)), nodes_(scenario.workload->nodes) {}

Result<std::unique_ptr<PlacementStepper>> PlacementStepper::create(const Scenario& scenario,
                                                                   Config config) {
  if (!(config.tune > 0 && config.tune <= 10)) {
    return Error{fmt::format("tune must be in (0, 10], got {}", config.tune)};
  }
  if (scenario.workload == nullptr || scenario.workload->nodes.empty()) {
    return Error{"the workload has no nodes"};
  }
  if (!scenario.power || scenario.power->size() != scenario.workload->nodes.size()) {
    return Error{"the scenario has no power figures for its nodes"};
  }
  for (double w : {config.alloc_weight, config.energy_weight, config.invalid_penalty}) {
    if (!std::isfinite(w)) return Error{"reward weights must be finite"};
  }
  std::unique_ptr<PlacementStepper> e(new PlacementStepper(scenario, std::move(config)));
  // The policy is made per episode; make one now so that a bad spec fails here.
  policy::PolicyContext context;
  context.frag = std::make_shared<frag::FragmentationModel>(scenario.target);
  context.shape_count = scenario.workload->shape_count;
  context.power = scenario.power;
  if (auto p = policy::make_policy(e->config_.policy, context); !p.ok()) return Error{p.error()};

  const Cluster cluster(e->nodes_);
  e->cluster_gpu_milli_ = cluster.total_gpu_milli();
  if (e->cluster_gpu_milli_ <= 0) return Error{"the cluster has no GPUs"};
  e->counts_.cluster_gpu_milli = e->cluster_gpu_milli_;
  const power::ClusterPower idle(*scenario.power, cluster);
  e->idle_facility_watts_ = idle.watts() * scenario.pue;
  const std::array<int32_t, kMaxGpusPerNode> all_used{};
  double full = 0;
  for (std::size_t n = 0; n < e->nodes_.size(); ++n) {
    e->gpu_slots_ = std::max(e->gpu_slots_, e->nodes_[n].gpu_count);
    full += power::node_power_watts(e->nodes_[n], (*scenario.power)[n], 0, all_used.data());
  }
  e->full_facility_watts_ = full * scenario.pue;
  e->gpu_slots_ = std::max(e->gpu_slots_, 1);
  e->fits_.assign(e->nodes_.size(), 0);
  e->fitting_.resize(e->nodes_.size());
  return e;
}

Status PlacementStepper::reset(uint64_t seed) {
  // As run_inflation and run_arrivals: one generator for the arrivals, the tie order and the
  // policy's draws, in that order.
  rng_.emplace(seed);
  scheduler_.reset();
  policy_.reset();
  fragmentation_.reset();
  power_.reset();
  cluster_.emplace(nodes_);
  arrivals_ =
      trace::inflate(scenario_.workload->pods, config_.tune, cluster_->total_gpu_milli(), *rng_);
  cluster_->reserve_pods(arrivals_.size());
  frag_model_ = std::make_shared<frag::FragmentationModel>(scenario_.target);
  policy::PolicyContext context;
  context.frag = frag_model_;
  context.shape_count = scenario_.workload->shape_count;
  context.power = scenario_.power;
  auto policy = policy::make_policy(config_.policy, context);
  if (!policy.ok()) return Error{policy.error()};
  policy_ = std::move(policy.value());
  scheduler_ = std::make_unique<policy::Scheduler>(
      *policy_, policy::random_tie_rank(cluster_->size(), *rng_));
  fragmentation_.emplace(*frag_model_, *cluster_);
  power_.emplace(*scenario_.power, *cluster_);

  counts_ = Counts{};
  counts_.cluster_gpu_milli = cluster_gpu_milli_;
  counts_.facility_watts = power_->watts() * scenario_.pue;
  counts_.frag_gpu_milli = fragmentation_->gpu_milli();
  next_ = 0;
  done_ = false;
  for (std::size_t n = 0; n < nodes_.size(); ++n) write_node(static_cast<NodeIndex>(n));
  advance();
  return Status::Ok();
}

void PlacementStepper::advance() {
  const std::vector<PodSpec>& pods = scenario_.workload->pods;
  for (; next_ < arrivals_.size(); ++next_) {
    const PodSpec& pod = pods[arrivals_[next_]];
    ++counts_.pods_arrived;
    counts_.arrived_gpu_milli += pod.total_gpu_milli();
    if (config_.expert) decision_ = scheduler_->schedule(*cluster_, pod, *rng_);
    const std::size_t count = policy::fitting_nodes(*cluster_, pod, fitting_);
    if (count == 0) {
      ++counts_.pods_failed;
      continue;
    }
    std::memset(fits_.data(), 0, fits_.size());
    for (std::size_t i = 0; i < count; ++i) fits_[fitting_[i]] = 1;
    feasible_ = static_cast<int64_t>(count);
    if (buffers_.mask != nullptr) std::memcpy(buffers_.mask, fits_.data(), fits_.size());
    write_pod_and_load();
    return;
  }
  done_ = true;
  feasible_ = 0;
  if (buffers_.mask != nullptr) std::memset(buffers_.mask, 0, fits_.size());
  write_pod_and_load();
}

Result<PlacementStepper::Step> PlacementStepper::step(int64_t node) {
  if (done_) return Error{"the episode is over: reset it first"};
  const PodSpec& pod = scenario_.workload->pods[arrivals_[next_]];
  const double pod_share =
      static_cast<double>(pod.total_gpu_milli()) / static_cast<double>(cluster_gpu_milli_);
  Step out;
  if (node >= 0 && node < static_cast<int64_t>(nodes_.size()) && fits_[node] != 0) {
    const auto n = static_cast<NodeIndex>(node);
    const GpuMask gpus = config_.expert && n == decision_.node
                             ? decision_.gpus
                             : policy_->select_gpus(*cluster_, n, pod, *rng_);
    if (Status s = cluster_->allocate(static_cast<PodId>(next_), pod, n, gpus); !s.ok()) {
      return Error{
          fmt::format("policy {} chose GPUs that do not fit: {}", config_.policy, s.message())};
    }
    fragmentation_->update(*cluster_, n);
    const double before = power_->node_watts(n);
    power_->update(*cluster_, n);
    out.added_facility_watts = (power_->node_watts(n) - before) * scenario_.pue;
    const double range = full_facility_watts_ - idle_facility_watts_;
    out.reward = config_.alloc_weight * pod_share -
                 (range > 0 ? config_.energy_weight * out.added_facility_watts / range : 0.0);
    out.placed = true;
    ++counts_.pods_placed;
    counts_.allocated_gpu_milli = cluster_->allocated_gpu_milli();
    counts_.facility_watts = power_->watts() * scenario_.pue;
    counts_.frag_gpu_milli = fragmentation_->gpu_milli();
    write_node(n);
  } else {
    out.reward = -config_.invalid_penalty * pod_share;
    ++counts_.pods_rejected;
  }
  ++next_;
  advance();
  out.done = done_;
  return out;
}

void PlacementStepper::write_node(NodeIndex node) {
  const NodeState& s = cluster_->state(node);
  if (buffers_.gpu_free_milli != nullptr) {
    float* row = buffers_.gpu_free_milli + static_cast<std::size_t>(node) * gpu_slots_;
    const int count = nodes_[node].gpu_count;
    for (int g = 0; g < gpu_slots_; ++g) {
      row[g] = g < count ? static_cast<float>(s.gpu_free_milli[g]) : -1.0f;
    }
  }
  if (buffers_.cpu_free_milli != nullptr) {
    buffers_.cpu_free_milli[node] = static_cast<float>(s.cpu_free_milli);
  }
  if (buffers_.memory_free_mib != nullptr) {
    buffers_.memory_free_mib[node] = static_cast<float>(s.memory_free_mib);
  }
}

void PlacementStepper::write_pod_and_load() {
  if (buffers_.pod != nullptr) {
    float* p = buffers_.pod;
    if (done_) {
      std::fill(p, p + kPodFeatures, 0.0f);
    } else {
      const PodSpec& pod = scenario_.workload->pods[arrivals_[next_]];
      p[0] = static_cast<float>(pod.cpu_milli);
      p[1] = static_cast<float>(pod.memory_mib);
      p[2] = static_cast<float>(pod.needs_gpu() ? pod.num_gpu : 0);
      p[3] = static_cast<float>(pod.needs_gpu() ? pod.gpu_milli : 0);
    }
  }
  if (buffers_.load != nullptr) {
    const auto capacity = static_cast<double>(cluster_gpu_milli_);
    buffers_.load[0] =
        static_cast<float>(static_cast<double>(counts_.arrived_gpu_milli) / capacity);
    buffers_.load[1] =
        static_cast<float>(static_cast<double>(counts_.allocated_gpu_milli) / capacity);
  }
}

}  // namespace greensched::sim
