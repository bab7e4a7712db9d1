// Scores shared by equal nodes within one scoring pass. In a large cluster many nodes are in
// the same state (empty nodes of one type above all), so a policy whose score depends only on
// what a key captures computes it once per pass. Open addressing with linear probing; a pass
// starts in O(1) by bumping a stamp instead of clearing the table.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace greensched::learn {

class ScoreMemo {
 public:
  using Key = std::array<uint64_t, 3>;

  // Starts a pass that looks up at most `keys` distinct keys; forgets the previous pass.
  void begin_pass(std::size_t keys) {
    const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(2 * keys, 16));
    if (capacity > slots_.size()) {
      slots_.assign(capacity, Slot{});
      stamp_ = 0;
    }
    if (++stamp_ == 0) {  // wrapped: stamps of old passes could match again
      for (Slot& s : slots_) s.stamp = 0;
      stamp_ = 1;
    }
  }

  // The score of `key` in this pass: compute() the first time, the stored value after.
  template <typename Compute>
  int64_t get(const Key& key, Compute&& compute) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.stamp != stamp_) {
        s = Slot{key, compute(), stamp_};
        return s.value;
      }
      if (s.key[0] == key[0] && s.key[1] == key[1] && s.key[2] == key[2]) return s.value;
    }
  }

 private:
  struct Slot {
    Key key{};
    int64_t value = 0;
    uint32_t stamp = 0;
  };

  static std::size_t hash(const Key& k) {
    uint64_t h = k[0] * 0x9E3779B97F4A7C15ULL;
    h ^= std::rotl(k[1], 21) * 0xC2B2AE3D27D4EB4FULL;
    h ^= std::rotl(k[2], 42) * 0x165667B19E3779F9ULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return static_cast<std::size_t>(h ^ (h >> 32));
  }

  std::vector<Slot> slots_;
  uint32_t stamp_ = 0;
};

}  // namespace greensched::learn
