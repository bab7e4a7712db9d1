#include "greensched/policy/shape_best.hpp"

#include <algorithm>

namespace greensched::policy {
namespace {
// Whether a class passes the filter for `pod` bar free memory: fitting_rows' test on the
// class's columns (free CPU, GPU room, GPU model), all of which are fixed for its life.
bool fits_bar_memory(const NodeClasses::FilterColumns& c, const PodSpec& pod) {
  if (c.cpu_free_milli < pod.cpu_milli) return false;
  if (!pod.needs_gpu()) return true;
  const bool room = pod.gpu_milli < kGpuMilli ? c.max_gpu_free_milli >= pod.gpu_milli
                                              : c.whole_free_gpus >= pod.num_gpu;
  return room && (pod.gpu_spec == 0 || model_allowed(pod.gpu_spec, c.model));
}
}  // namespace

ShapeBest::ShapeBest(Policy& policy, std::span<const uint32_t> tie_rank)
    : policy_(policy), tie_rank_(tie_rank) {}

void ShapeBest::file(Shape& shape, const Cluster& cluster, const NodeClasses& classes, Rng& rng) {
  scored_.clear();
  for (const uint32_t slot : slots_) {
    scored_.push_back(Candidate{classes.representative(classes.dense_of_slot(slot)), 0, 0});
  }
  const std::size_t kept = slots_.size();
  if (kept == 0) return;
  policy_.score(cluster, shape.pod, scored_, rng);
  for (std::size_t j = 0; j < kept; ++j) {
    const int64_t raw = scored_[j].raw;
    auto it = std::lower_bound(shape.buckets.begin(), shape.buckets.end(), raw,
                               [](const Bucket& b, int64_t r) { return b.raw > r; });
    if (it == shape.buckets.end() || it->raw != raw) it = shape.buckets.insert(it, Bucket{raw, {}});
    it->items.push_back(Item{slots_[j], classes.slot_generation(slots_[j])});
  }
  shape.items += kept;
}

void ShapeBest::drop_stale(Shape& shape, const NodeClasses& classes) const {
  shape.items = 0;
  for (Bucket& b : shape.buckets) {
    std::erase_if(b.items, [&classes](const Item& it) {
      return classes.slot_generation(it.slot) != it.generation;
    });
    shape.items += b.items.size();
  }
  std::erase_if(shape.buckets, [](const Bucket& b) { return b.items.empty(); });
}

void ShapeBest::catch_up(Shape& shape, const Cluster& cluster, const NodeClasses& classes,
                         Rng& rng) {
  slots_.clear();
  const uint64_t behind = classes.log_end() - shape.read;
  if (shape.epoch != classes.epoch() || shape.read < classes.log_begin() ||
      behind > 2 * classes.size() + 64) {
    // Rebuilt classes, a log cut past this shape's place, or cheaper to start over: file every
    // live class afresh.
    shape.epoch = classes.epoch();
    shape.buckets.clear();
    shape.items = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      const uint32_t slot = classes.slot_of(i);
      if (fits_bar_memory(classes.slot_info(slot).filter, shape.pod)) slots_.push_back(slot);
    }
  } else {
    // Each class made since that passes the filter bar memory and is still live.
    for (const NodeClasses::Made& made : classes.made_since(shape.read)) {
      if (fits_bar_memory(made.filter, shape.pod) &&
          classes.slot_generation(made.slot) == made.generation) {
        slots_.push_back(made.slot);
      }
    }
  }
  shape.read = classes.log_end();
  file(shape, cluster, classes, rng);
}

ShapeBest::Best ShapeBest::find(const Cluster& cluster, const NodeClasses& classes,
                                const PodSpec& pod, Rng& rng) {
  if (shapes_.size() <= pod.shape) shapes_.resize(pod.shape + 1);
  Shape& shape = shapes_[pod.shape];
  if (!shape.used || shape.pod.shape_fields() != pod.shape_fields()) {
    shape = Shape{};
    shape.used = true;
    shape.pod = pod;
    shape.pod.name.clear();
  }
  catch_up(shape, cluster, classes, rng);
  // Gone classes are dropped as the walk meets them; the rest now and then.
  if (shape.items > 2 * classes.size() + 1024) drop_stale(shape, classes);

  // The best bucket with a class that has the memory; in it, the first member in tie order
  // with the memory (a class's first member ranks before the rest, so a class whose first
  // member ranks after the best so far cannot win).
  const std::vector<int32_t>& memory = classes.columns().max_memory_free_mib;
  for (std::size_t b = 0; b < shape.buckets.size();) {
    std::vector<Item>& items = shape.buckets[b].items;
    NodeIndex best = -1;
    uint32_t best_rank = 0;
    for (std::size_t k = 0; k < items.size();) {
      const Item item = items[k];
      if (classes.slot_generation(item.slot) != item.generation) {
        items[k] = items.back();
        items.pop_back();
        --shape.items;
        continue;
      }
      ++k;
      const std::size_t d = classes.dense_of_slot(item.slot);
      if (memory[d] < pod.memory_mib) continue;
      if (best >= 0 && classes.representative_rank(d) > best_rank) continue;
      const NodeIndex node = classes.first_fitting(d, pod.memory_mib);
      if (best < 0 || tie_rank_[node] < best_rank) {
        best = node;
        best_rank = tie_rank_[node];
      }
    }
    if (items.empty()) {
      shape.buckets.erase(shape.buckets.begin() + static_cast<std::ptrdiff_t>(b));
      continue;
    }
    if (best >= 0) return Best{best, shape.buckets[b].raw};
    ++b;
  }
  return Best{};
}

}  // namespace greensched::policy
