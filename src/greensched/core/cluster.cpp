#include "greensched/core/cluster.hpp"

#include <algorithm>
#include <atomic>
#include <limits>

#include <fmt/format.h>

namespace greensched {

Cluster::Cluster(std::vector<NodeSpec> nodes) : specs_(std::move(nodes)) {
  states_.resize(specs_.size());
  pods_on_.resize(specs_.size());
  for (std::size_t n = 0; n < specs_.size(); ++n) {
    const NodeSpec& spec = specs_[n];
    NodeState& s = states_[n];
    s.cpu_free_milli = spec.cpu_milli;
    s.memory_free_mib = spec.memory_mib;
    const int gpus = std::clamp(spec.gpu_count, 0, kMaxGpusPerNode);
    for (int g = 0; g < gpus; ++g) s.gpu_free_milli[g] = kGpuMilli;
    refresh_derived(s, gpus);
    total_gpu_milli_ += int64_t{gpus} * kGpuMilli;
    total_cpu_milli_ += std::max<int64_t>(spec.cpu_milli, 0);
    total_memory_mib_ += std::max<int64_t>(spec.memory_mib, 0);
    if (spec.model < kMaxGpuModels) free_gpu_milli_by_model_[spec.model] += s.gpu_free_total_milli;
  }
  const std::size_t n = specs_.size();
  fit_columns_.cpu_free_milli.resize(n);
  fit_columns_.memory_free_mib.resize(n);
  fit_columns_.max_gpu_free_milli.resize(n);
  fit_columns_.whole_free_gpus.resize(n);
  fit_columns_.model.resize(n);
  for (std::size_t i = 0; i < n; ++i) sync_fit_columns(static_cast<NodeIndex>(i));
}

namespace {
int32_t saturate(int64_t v) {
  return static_cast<int32_t>(std::min<int64_t>(v, std::numeric_limits<int32_t>::max()));
}
}  // namespace

uint64_t Cluster::InstanceId::next() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

std::optional<std::span<const NodeIndex>> Cluster::changes_since(uint64_t seq) const {
  if (seq < journal_base_ || seq > change_count()) return std::nullopt;
  return std::span<const NodeIndex>(journal_).subspan(
      static_cast<std::size_t>(seq - journal_base_));
}

void Cluster::sync_fit_columns(NodeIndex n) {
  if (journal_.size() >= 2 * specs_.size() + 1024) {
    journal_base_ += journal_.size();
    journal_.clear();
  }
  journal_.push_back(n);
  const NodeState& s = states_[n];
  const bool has_gpus = specs_[n].gpu_count > 0;
  fit_columns_.cpu_free_milli[n] = s.online ? saturate(s.cpu_free_milli) : -1;
  fit_columns_.memory_free_mib[n] = saturate(s.memory_free_mib);
  fit_columns_.max_gpu_free_milli[n] = has_gpus ? s.max_gpu_free_milli : -1;
  fit_columns_.whole_free_gpus[n] = has_gpus ? s.whole_free_gpus : -1;
  fit_columns_.model[n] = specs_[n].model;
}

void Cluster::refresh_derived(NodeState& s, int gpu_count) {
  s.max_gpu_free_milli = 0;
  s.whole_free_gpus = 0;
  s.gpu_free_total_milli = 0;
  for (int g = 0; g < gpu_count; ++g) {
    const int32_t f = s.gpu_free_milli[g];
    s.max_gpu_free_milli = std::max(s.max_gpu_free_milli, f);
    s.whole_free_gpus += (f == kGpuMilli);
    s.gpu_free_total_milli += f;
  }
  ++s.version;
}

Status Cluster::allocate(PodId id, const PodSpec& pod, NodeIndex node, GpuMask gpus) {
  if (node < 0 || static_cast<std::size_t>(node) >= specs_.size()) {
    return Error{fmt::format("pod {}: node index {} out of range", pod.name, node)};
  }
  if (id < record_of_pod_.size() && record_of_pod_[id] != kNoRecord) {
    return Error{fmt::format("pod {} is already placed", pod.name)};
  }
  const NodeSpec& spec = specs_[node];
  NodeState& s = states_[node];
  if (!s.online) return Error{fmt::format("pod {} on {}: node is offline", pod.name, spec.name)};
  if (pod.cpu_milli > s.cpu_free_milli) {
    return Error{fmt::format("pod {} on {}: cpu {} > free {}", pod.name, spec.name, pod.cpu_milli,
                             s.cpu_free_milli)};
  }
  if (pod.memory_mib > s.memory_free_mib) {
    return Error{fmt::format("pod {} on {}: memory {} MiB > free {} MiB", pod.name, spec.name,
                             pod.memory_mib, s.memory_free_mib)};
  }
  const int want = pod.needs_gpu() ? pod.num_gpu : 0;
  if (gpu_mask_count(gpus) != want) {
    return Error{fmt::format("pod {} on {}: asked for {} GPU(s), given {}", pod.name, spec.name,
                             want, gpu_mask_count(gpus))};
  }
  if (want > 0 && !model_allowed(pod.gpu_spec, spec.model)) {
    return Error{fmt::format("pod {} on {}: GPU model not allowed", pod.name, spec.name)};
  }
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if (!((gpus >> g) & 1U)) continue;
    if (g >= spec.gpu_count) {
      return Error{fmt::format("pod {} on {}: GPU {} does not exist", pod.name, spec.name, g)};
    }
    if (s.gpu_free_milli[g] < pod.gpu_milli) {
      return Error{fmt::format("pod {} on {}: GPU {} has {} milli free, needs {}", pod.name,
                               spec.name, g, s.gpu_free_milli[g], pod.gpu_milli)};
    }
  }

  s.cpu_free_milli -= pod.cpu_milli;
  s.memory_free_mib -= pod.memory_mib;
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if ((gpus >> g) & 1U) s.gpu_free_milli[g] -= pod.gpu_milli;
  }
  const int tag = gpu_tag(pod);
  ++s.pods;
  ++s.pods_by_tag[tag];
  refresh_derived(s, spec.gpu_count);
  sync_fit_columns(node);
  allocated_gpu_milli_ += int64_t{gpu_mask_count(gpus)} * pod.gpu_milli;
  allocated_cpu_milli_ += pod.cpu_milli;
  allocated_memory_mib_ += pod.memory_mib;
  if (spec.model < kMaxGpuModels) {
    free_gpu_milli_by_model_[spec.model] -= int64_t{gpu_mask_count(gpus)} * pod.gpu_milli;
  }

  if (id >= record_of_pod_.size()) {
    // Up to what reserve_pods made room for, else doubling.
    record_of_pod_.resize(
        std::max({std::size_t{id} + 1, record_of_pod_.capacity(), record_of_pod_.size() * 2}),
        kNoRecord);
  }
  uint32_t r;
  if (!free_records_.empty()) {
    r = free_records_.back();
    free_records_.pop_back();
  } else {
    r = static_cast<uint32_t>(records_.size());
    records_.emplace_back();
  }
  records_[r] = StoredAllocation{
      pod.cpu_milli, pod.memory_mib, node, gpus, want > 0 ? pod.gpu_milli : 0, tag};
  record_of_pod_[id] = r;
  // Ids mostly arrive in increasing order: an append.
  std::vector<PodId>& here = pods_on_[node];
  if (here.empty() || here.back() < id) {
    here.push_back(id);
  } else {
    here.insert(std::lower_bound(here.begin(), here.end(), id), id);
  }
  return Status::Ok();
}

Status Cluster::release(PodId id) {
  if (id >= record_of_pod_.size() || record_of_pod_[id] == kNoRecord) {
    return Error{fmt::format("pod id {} holds no allocation", id)};
  }
  const uint32_t r = record_of_pod_[id];
  const Allocation a = records_[r].unpack();
  record_of_pod_[id] = kNoRecord;
  free_records_.push_back(r);
  std::vector<PodId>& here = pods_on_[a.node];
  here.erase(std::lower_bound(here.begin(), here.end(), id));
  NodeState& s = states_[a.node];
  s.cpu_free_milli += a.cpu_milli;
  s.memory_free_mib += a.memory_mib;
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if ((a.gpus >> g) & 1U) s.gpu_free_milli[g] += a.gpu_milli_each;
  }
  --s.pods;
  --s.pods_by_tag[a.tag];
  refresh_derived(s, specs_[a.node].gpu_count);
  sync_fit_columns(a.node);
  allocated_gpu_milli_ -= int64_t{gpu_mask_count(a.gpus)} * a.gpu_milli_each;
  allocated_cpu_milli_ -= a.cpu_milli;
  allocated_memory_mib_ -= a.memory_mib;
  if (const GpuModelId m = specs_[a.node].model; m < kMaxGpuModels) {
    free_gpu_milli_by_model_[m] += int64_t{gpu_mask_count(a.gpus)} * a.gpu_milli_each;
  }
  return Status::Ok();
}

Status Cluster::set_online(NodeIndex node, bool online) {
  if (node < 0 || static_cast<std::size_t>(node) >= specs_.size()) {
    return Error{fmt::format("node index {} out of range", node)};
  }
  NodeState& s = states_[node];
  if (!online && s.pods > 0) {
    return Error{fmt::format("node {} still hosts {} pod(s)", specs_[node].name, s.pods)};
  }
  s.online = online;
  ++s.version;
  sync_fit_columns(node);
  return Status::Ok();
}

std::optional<Allocation> Cluster::allocation_of(PodId id) const {
  if (id >= record_of_pod_.size() || record_of_pod_[id] == kNoRecord) return std::nullopt;
  return records_[record_of_pod_[id]].unpack();
}

}  // namespace greensched
