#include "greensched/frag/fragmentation.hpp"

#include <algorithm>
#include <functional>

namespace greensched::frag {

FragmentationModel::FragmentationModel(TargetWorkload target) : target_(std::move(target)) {}

int64_t FragmentationModel::scaled_frag(GpuModelId model, int gpu_count, int64_t cpu_free_milli,
                                        const int32_t* gpu_free_milli) const {
  int64_t total_free = 0;
  for (int g = 0; g < gpu_count; ++g) total_free += gpu_free_milli[g];
  if (total_free == 0) return 0;

  int64_t acc = 0;
  for (const TargetShape& m : target_.shapes) {
    if (m.num_gpu == 0 || !model_allowed(m.gpu_spec, model) || cpu_free_milli < m.cpu_milli) {
      acc += m.count * total_free;
      continue;
    }
    int fitting = 0;
    int64_t stranded = 0;  // free share on GPUs too small for one task of m
    for (int g = 0; g < gpu_count; ++g) {
      const int32_t f = gpu_free_milli[g];
      if (f >= m.gpu_milli) {
        ++fitting;
      } else {
        stranded += f;
      }
    }
    acc += m.count * (fitting >= m.num_gpu ? stranded : total_free);
  }
  return acc;
}

std::size_t FragmentationModel::KeyHash::operator()(const Key& k) const {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (uint64_t w : k.words) {
    h ^= w + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h *= 0xFF51AFD7ED558CCDULL;
  }
  return static_cast<std::size_t>(h ^ (h >> 32));
}

StateId FragmentationModel::intern(NodeFragState s) {
  Key key;
  key.words[0] = uint64_t{s.model} | (uint64_t(s.gpu_count) << 8) |
                 (static_cast<uint64_t>(s.cpu_free_milli) << 16);
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    key.words[1 + g / 6] |= static_cast<uint64_t>(s.gpu_free_sorted[g]) << (10 * (g % 6));
  }
  if (2 * (keys_.size() + 1) > ids_.size()) {
    // Grow: every id again at its hash's place.
    ids_.assign(std::max<std::size_t>(1024, 2 * ids_.size()), IdSlot{});
    const std::size_t mask = ids_.size() - 1;
    for (std::size_t id = 0; id < keys_.size(); ++id) {
      const auto h = static_cast<uint32_t>(KeyHash{}(keys_[id]));
      std::size_t i = h & mask;
      while (ids_[i].id_plus_1 != 0) i = (i + 1) & mask;
      ids_[i] = IdSlot{h, static_cast<uint32_t>(id + 1)};
    }
  }
  const auto hash = static_cast<uint32_t>(KeyHash{}(key));
  const std::size_t mask = ids_.size() - 1;
  std::size_t i = hash & mask;
  for (; ids_[i].id_plus_1 != 0; i = (i + 1) & mask) {
    if (ids_[i].hash == hash && keys_[ids_[i].id_plus_1 - 1] == key) return ids_[i].id_plus_1 - 1;
  }
  const auto id = static_cast<StateId>(states_.size());
  s.frag_scaled = scaled_frag(s.model, s.gpu_count, s.cpu_free_milli, s.gpu_free_sorted.data());
  states_.push_back(s);
  keys_.push_back(key);
  ids_[i] = IdSlot{hash, id + 1};
  return id;
}

StateId FragmentationModel::node_state(const Cluster& cluster, NodeIndex node) {
  if (node_version_.size() != cluster.size()) {
    node_version_.assign(cluster.size(), 0);
    node_state_.assign(cluster.size(), 0);
  }
  const NodeState& ns = cluster.state(node);
  if (node_version_[node] != ns.version || ns.version == 0) {
    const NodeSpec& spec = cluster.spec(node);
    NodeFragState s;
    s.model = spec.model;
    s.gpu_count = spec.gpu_count;
    s.cpu_free_milli = std::max<int64_t>(ns.cpu_free_milli, 0);
    std::copy_n(ns.gpu_free_milli.begin(), spec.gpu_count, s.gpu_free_sorted.begin());
    std::sort(s.gpu_free_sorted.begin(), s.gpu_free_sorted.begin() + spec.gpu_count,
              std::greater<>());
    node_state_[node] = intern(s);
    node_version_[node] = ns.version;
  }
  return node_state_[node];
}

ClusterFragmentation::ClusterFragmentation(FragmentationModel& model, const Cluster& cluster)
    : model_(model), node_scaled_(cluster.size(), 0) {
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster.size()); ++n) {
    node_scaled_[n] = model_.state(model_.node_state(cluster, n)).frag_scaled;
    total_scaled_ += node_scaled_[n];
  }
}

void ClusterFragmentation::update(const Cluster& cluster, NodeIndex node) {
  const int64_t now = model_.state(model_.node_state(cluster, node)).frag_scaled;
  total_scaled_ += now - node_scaled_[node];
  node_scaled_[node] = now;
}

}  // namespace greensched::frag
