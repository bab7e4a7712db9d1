#include "greensched/serve/gpu_index.hpp"

#include <fmt/format.h>

namespace greensched::serve {

std::string format_gpu_index(GpuMask gpus) {
  std::string out;
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if (!((gpus >> g) & 1U)) continue;
    if (!out.empty()) out += '-';
    out += std::to_string(g);
  }
  return out;
}

Result<GpuMask> parse_gpu_index(std::string_view text) {
  GpuMask mask = 0;
  if (text.empty()) return mask;
  if (text.size() > 64) return Error{"gpu index: longer than 64 characters"};
  std::size_t i = 0;
  while (true) {
    int index = 0;
    std::size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 3) {
      index = index * 10 + (text[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0 || (i < text.size() && text[i] >= '0' && text[i] <= '9')) {
      return Error{fmt::format("gpu index '{}': expected indices like 0-1", text)};
    }
    if (index >= kMaxGpusPerNode) {
      return Error{fmt::format("gpu index '{}': GPU {} is beyond the {} GPUs a node may have", text,
                               index, kMaxGpusPerNode)};
    }
    if ((mask >> index) & 1U) {
      return Error{fmt::format("gpu index '{}': GPU {} named twice", text, index)};
    }
    mask |= GpuMask{1} << index;
    if (i == text.size()) break;
    if (text[i] != '-' && text[i] != ',') {
      return Error{fmt::format("gpu index '{}': expected indices like 0-1", text)};
    }
    ++i;
  }
  return mask;
}

}  // namespace greensched::serve
