#include "greensched/policy/node_classes.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

namespace greensched::policy {
namespace {
int32_t saturate(int64_t v) {
  return static_cast<int32_t>(std::min<int64_t>(v, std::numeric_limits<int32_t>::max()));
}
}  // namespace

std::size_t NodeClasses::KeyHash::operator()(const Key& k) const {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const uint64_t w : k) {
    h ^= w + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ULL;
  }
  return static_cast<std::size_t>(h ^ (h >> 31));
}

NodeClasses::NodeClasses(const Policy& policy, std::span<const uint32_t> tie_rank)
    : policy_(policy), tie_rank_(tie_rank), parts_(policy.class_key_parts()) {}

NodeClasses::Key NodeClasses::key_of(const Cluster& cluster, NodeIndex n) const {
  const NodeSpec& spec = cluster.spec(n);
  const NodeState& s = cluster.state(n);
  const auto part = [this](uint32_t p) { return (parts_ & p) != 0; };
  Key k{};
  std::size_t w = 0;
  k[w++] = part(Policy::kKeyCapacity) ? static_cast<uint64_t>(spec.cpu_milli) : 0;
  k[w++] = part(Policy::kKeyCapacity) ? static_cast<uint64_t>(spec.memory_mib) : 0;
  k[w++] = static_cast<uint64_t>(static_cast<uint32_t>(spec.gpu_count)) | uint64_t{spec.model}
                                                                              << 32;
  k[w++] = static_cast<uint64_t>(s.cpu_free_milli);
  k[w++] = part(Policy::kKeyMemory) ? static_cast<uint64_t>(s.memory_free_mib) : 0;
  k[w++] = (part(Policy::kKeyPods) ? static_cast<uint64_t>(static_cast<uint32_t>(s.pods)) : 0) |
           uint64_t{s.online} << 32 | uint64_t{policy_.node_class_tag(n)} << 33;
  std::array<int32_t, kMaxGpusPerNode> gpus = s.gpu_free_milli;
  if (!part(Policy::kKeyGpuOrder)) std::sort(gpus.begin(), gpus.end(), std::greater<>());
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    k[w + g / 2] |= uint64_t{static_cast<uint32_t>(gpus[g])} << (32 * (g % 2));
  }
  w += (kMaxGpusPerNode + 1) / 2;
  if (part(Policy::kKeyPodsByTag)) {
    for (int t = 0; t < kGpuTagCount; ++t) {
      k[w + t / 4] |= uint64_t{s.pods_by_tag[t]} << (16 * (t % 4));
    }
  }
  return k;
}

void NodeClasses::rebuild(const Cluster& cluster) {
  const std::size_t n = cluster.size();
  classes_.clear();
  slot_info_.clear();
  free_slots_.clear();
  table_.clear();
  table_used_ = 0;
  reps_.clear();
  rep_rank_.clear();
  slot_of_dense_.clear();
  generation_of_dense_.clear();
  columns_ = Columns{};
  slot_of_node_.assign(n, 0);
  memory_of_node_.assign(n, 0);
  seen_.assign(n, 0);
  stamp_ = 0;
  log_base_ += log_.size();
  log_.clear();
  ++epoch_;
  // Nodes in tie order, so that every class's members arrive sorted.
  std::vector<NodeIndex> by_rank(n);
  for (std::size_t i = 0; i < n; ++i) by_rank[tie_rank_[i]] = static_cast<NodeIndex>(i);
  for (const NodeIndex node : by_rank) add(cluster, node, key_of(cluster, node));
  instance_ = cluster.instance();
  seq_ = cluster.change_count();
}

void NodeClasses::sync(const Cluster& cluster) {
  if (cluster.instance() != instance_ || slot_of_node_.size() != cluster.size()) {
    rebuild(cluster);
    return;
  }
  const auto changes = cluster.changes_since(seq_);
  if (!changes) {
    rebuild(cluster);
    return;
  }
  if (changes->empty()) return;
  // Cut the log when it outgrows the classes: a reader that far behind looks at every slot.
  if (log_.size() > std::max<std::size_t>(65536, 16 * classes_.size())) {
    log_base_ += log_.size();
    log_.clear();
  }
  if (++stamp_ == 0) {
    std::fill(seen_.begin(), seen_.end(), 0);
    stamp_ = 1;
  }
  for (const NodeIndex node : *changes) {
    if (seen_[node] == stamp_) continue;
    seen_[node] = stamp_;
    const Key key = key_of(cluster, node);
    Class& c = classes_[slot_of_node_[node]];
    if (c.key != key) {
      remove(node);
      add(cluster, node, key);
      continue;
    }
    // Same class: only the free memory (outside the key) may have moved.
    const int64_t memory = cluster.state(node).memory_free_mib;
    const int64_t old = memory_of_node_[node];
    if (memory == old) continue;
    memory_of_node_[node] = memory;
    if (old == c.max_memory) --c.at_max;
    if (memory > c.max_memory) {
      c.max_memory = memory;
      c.at_max = 1;
    } else if (memory == c.max_memory) {
      ++c.at_max;
    }
    if (c.at_max == 0) rescan_memory(c);
    columns_.max_memory_free_mib[c.dense] = saturate(c.max_memory);
  }
  seq_ = cluster.change_count();
}

void NodeClasses::add(const Cluster& cluster, NodeIndex n, const Key& key) {
  if (2 * (table_used_ + 1) > table_.size()) grow_table();
  const auto hash = static_cast<uint32_t>(KeyHash{}(key));
  const std::size_t at = find_key(key, hash);
  if (table_[at].slot_plus_1 == 0) {
    uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<uint32_t>(classes_.size());
      classes_.emplace_back();
      slot_info_.emplace_back();
    }
    table_[at] = KeySlot{hash, slot + 1};
    ++table_used_;
    Class& c = classes_[slot];
    c.key = key;
    c.members.clear();
    c.max_memory = -1;
    c.at_max = 0;
    c.dense = static_cast<uint32_t>(reps_.size());
    c.generation = ++generations_;
    const NodeSpec& spec = cluster.spec(n);
    const NodeState& s = cluster.state(n);
    const bool has_gpus = spec.gpu_count > 0;
    const FilterColumns filter{s.online ? saturate(s.cpu_free_milli) : -1,
                               has_gpus ? s.max_gpu_free_milli : -1,
                               has_gpus ? s.whole_free_gpus : -1, spec.model};
    slot_info_[slot] = SlotInfo{c.generation, c.dense, filter};
    log_.push_back(Made{c.generation, slot, filter});
    reps_.push_back(n);
    rep_rank_.push_back(0);
    slot_of_dense_.push_back(slot);
    generation_of_dense_.push_back(c.generation);
    columns_.cpu_free_milli.push_back(s.online ? saturate(s.cpu_free_milli) : -1);
    columns_.max_memory_free_mib.push_back(-1);
    columns_.max_gpu_free_milli.push_back(has_gpus ? s.max_gpu_free_milli : -1);
    columns_.whole_free_gpus.push_back(has_gpus ? s.whole_free_gpus : -1);
    columns_.model.push_back(spec.model);
  }
  const uint32_t slot = table_[at].slot_plus_1 - 1;
  Class& c = classes_[slot];
  const auto pos =
      std::upper_bound(c.members.begin(), c.members.end(), tie_rank_[n],
                       [this](uint32_t rank, NodeIndex m) { return rank < tie_rank_[m]; });
  c.members.insert(pos, n);
  const int64_t memory = cluster.state(n).memory_free_mib;
  memory_of_node_[n] = memory;
  slot_of_node_[n] = slot;
  if (memory > c.max_memory) {
    c.max_memory = memory;
    c.at_max = 1;
  } else if (memory == c.max_memory) {
    ++c.at_max;
  }
  columns_.max_memory_free_mib[c.dense] = saturate(c.max_memory);
  reps_[c.dense] = c.members.front();
  rep_rank_[c.dense] = tie_rank_[c.members.front()];
}

void NodeClasses::remove(NodeIndex n) {
  const uint32_t slot = slot_of_node_[n];
  Class& c = classes_[slot];
  const auto pos =
      std::lower_bound(c.members.begin(), c.members.end(), tie_rank_[n],
                       [this](NodeIndex m, uint32_t rank) { return tie_rank_[m] < rank; });
  c.members.erase(pos);
  if (c.members.empty()) {
    // Drop the class: the last dense position moves into its place.
    const uint32_t d = c.dense;
    const uint32_t last = static_cast<uint32_t>(reps_.size() - 1);
    if (d != last) {
      const uint32_t moved = slot_of_dense_[last];
      reps_[d] = reps_[last];
      rep_rank_[d] = rep_rank_[last];
      slot_of_dense_[d] = moved;
      generation_of_dense_[d] = generation_of_dense_[last];
      columns_.cpu_free_milli[d] = columns_.cpu_free_milli[last];
      columns_.max_memory_free_mib[d] = columns_.max_memory_free_mib[last];
      columns_.max_gpu_free_milli[d] = columns_.max_gpu_free_milli[last];
      columns_.whole_free_gpus[d] = columns_.whole_free_gpus[last];
      columns_.model[d] = columns_.model[last];
      classes_[moved].dense = d;
      slot_info_[moved].dense = d;
    }
    reps_.pop_back();
    rep_rank_.pop_back();
    slot_of_dense_.pop_back();
    generation_of_dense_.pop_back();
    columns_.cpu_free_milli.pop_back();
    columns_.max_memory_free_mib.pop_back();
    columns_.max_gpu_free_milli.pop_back();
    columns_.whole_free_gpus.pop_back();
    columns_.model.pop_back();
    erase_key(c.key);
    c.generation = 0;
    slot_info_[slot].generation = 0;
    free_slots_.push_back(slot);
    return;
  }
  if (memory_of_node_[n] == c.max_memory && --c.at_max == 0) rescan_memory(c);
  columns_.max_memory_free_mib[c.dense] = saturate(c.max_memory);
  reps_[c.dense] = c.members.front();
  rep_rank_[c.dense] = tie_rank_[c.members.front()];
}

void NodeClasses::rescan_memory(Class& c) const {
  c.max_memory = -1;
  c.at_max = 0;
  for (const NodeIndex m : c.members) {
    if (memory_of_node_[m] > c.max_memory) {
      c.max_memory = memory_of_node_[m];
      c.at_max = 0;
    }
    c.at_max += memory_of_node_[m] == c.max_memory;
  }
}

std::size_t NodeClasses::find_key(const Key& key, uint32_t hash) const {
  const std::size_t mask = table_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const KeySlot& e = table_[i];
    if (e.slot_plus_1 == 0 || (e.hash == hash && classes_[e.slot_plus_1 - 1].key == key)) return i;
  }
}

void NodeClasses::grow_table() {
  std::vector<KeySlot> old = std::move(table_);
  table_.assign(std::max<std::size_t>(64, 2 * old.size()), KeySlot{});
  const std::size_t mask = table_.size() - 1;
  for (const KeySlot& e : old) {
    if (e.slot_plus_1 == 0) continue;
    std::size_t i = e.hash & mask;
    while (table_[i].slot_plus_1 != 0) i = (i + 1) & mask;
    table_[i] = e;
  }
}

void NodeClasses::erase_key(const Key& key) {
  const std::size_t mask = table_.size() - 1;
  std::size_t hole = find_key(key, static_cast<uint32_t>(KeyHash{}(key)));
  // Backward shift: move up every later entry of the run that may sit in the hole.
  for (std::size_t j = (hole + 1) & mask; table_[j].slot_plus_1 != 0; j = (j + 1) & mask) {
    const std::size_t home = table_[j].hash & mask;
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      table_[hole] = table_[j];
      hole = j;
    }
  }
  table_[hole] = KeySlot{};
  --table_used_;
}

NodeIndex NodeClasses::first_fitting(std::size_t i, int64_t memory_mib) const {
  for (const NodeIndex n : classes_[slot_of_dense_[i]].members) {
    if (memory_of_node_[n] >= memory_mib) return n;
  }
  return -1;
}

std::span<const NodeIndex> NodeClasses::members(std::size_t i) const {
  return classes_[slot_of_dense_[i]].members;
}

}  // namespace greensched::policy
