#include "greensched/policy/filter.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>

namespace greensched::policy {

std::string_view describe(FilterReason reason) {
  switch (reason) {
    case FilterReason::kFits:
      return "fits";
    case FilterReason::kNodeOffline:
      return "node offline";
    case FilterReason::kInsufficientCpu:
      return "insufficient cpu";
    case FilterReason::kInsufficientMemory:
      return "insufficient memory";
    case FilterReason::kNoGpu:
      return "node has no GPU";
    case FilterReason::kGpuModelNotAllowed:
      return "gpu model not in spec";
    case FilterReason::kInsufficientGpuShare:
      return "insufficient GPU share on any single GPU";
    case FilterReason::kInsufficientWholeGpus:
      return "insufficient fully free GPUs";
  }
  return "unknown";
}

std::size_t fitting_nodes(const Cluster& cluster, const PodSpec& pod, std::span<NodeIndex> out) {
  const std::size_t n = cluster.size();
  std::size_t kept = 0;
  constexpr int64_t kColumnMax = std::numeric_limits<int32_t>::max();
  if (pod.cpu_milli < 0 || pod.memory_mib < 0 || pod.cpu_milli >= kColumnMax ||
      pod.memory_mib >= kColumnMax) {
    // Beyond the columns' range: the exact check, node by node.
    for (std::size_t i = 0; i < n; ++i) {
      const auto node = static_cast<NodeIndex>(i);
      if (filter_node(cluster.spec(node), cluster.state(node), pod) == FilterReason::kFits) {
        out[kept++] = node;
      }
    }
    return kept;
  }
  const FitColumns& c = cluster.fit_columns();
  return fitting_rows(
      FitView{c.cpu_free_milli.data(), c.memory_free_mib.data(), c.max_gpu_free_milli.data(),
              c.whole_free_gpus.data(), c.model.data(), n},
      pod, out.data());
}

std::size_t fitting_rows(const FitView& view, const PodSpec& pod, int32_t* out) {
  const auto cpu = static_cast<int32_t>(pod.cpu_milli);
  const auto memory = static_cast<int32_t>(pod.memory_mib);
  // The GPU room to compare; a pod without GPUs compares the CPU column again.
  const int32_t* room = view.cpu_free_milli;
  int32_t need = cpu;
  if (pod.needs_gpu()) {
    const bool share = pod.gpu_milli < kGpuMilli;
    room = share ? view.max_gpu_free_milli : view.whole_free_gpus;
    need = share ? pod.gpu_milli : pod.num_gpu;
  }
  const bool any_model = !pod.needs_gpu() || pod.gpu_spec == 0;
  const int32_t* cpu_free = view.cpu_free_milli;
  const int32_t* memory_free = view.memory_free_mib;
  const std::size_t n = view.rows;
  std::size_t kept = 0;
  constexpr std::size_t kBlock = 256;
  std::array<uint8_t, kBlock> ok{};
  // The packing below reads flag i from byte i of a 64-bit word.
  static_assert(std::endian::native == std::endian::little);
  for (std::size_t base = 0; base < n; base += kBlock) {
    const std::size_t len = std::min(kBlock, n - base);
    for (std::size_t i = 0; i < len; ++i) {
      ok[i] = static_cast<uint8_t>((cpu_free[base + i] >= cpu) & (memory_free[base + i] >= memory) &
                                   (room[base + i] >= need));
    }
    if (!any_model) {
      for (std::size_t i = 0; i < len; ++i) {
        ok[i] &= static_cast<uint8_t>(model_allowed(pod.gpu_spec, view.model[base + i]));
      }
    }
    // Compacted from bit masks of 64 rows (8 flag bytes packed into 8 bits by one multiply):
    // most rows fail, so the set bits are few.
    for (std::size_t word = 0; word * 64 < len; ++word) {
      uint64_t bits = 0;
      for (std::size_t b = 0; b < 8; ++b) {
        uint64_t flags;
        std::memcpy(&flags, ok.data() + word * 64 + b * 8, sizeof flags);
        bits |= ((flags * 0x0102040810204080ULL) >> 56) << (8 * b);
      }
      const std::size_t rows_left = len - word * 64;
      if (rows_left < 64) bits &= (uint64_t{1} << rows_left) - 1;
      while (bits != 0) {
        out[kept++] = static_cast<int32_t>(base + word * 64 + std::countr_zero(bits));
        bits &= bits - 1;
      }
    }
  }
  return kept;
}

}  // namespace greensched::policy
