// The one seeded generator of a run. std::mt19937_64 is fully specified by the standard, but
// std::uniform_int_distribution and std::shuffle are not, so bounded draws and shuffles are
// done here to give byte-identical results on every platform.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>

namespace greensched {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  uint64_t next() { return engine_(); }

  // Uniform integer in [0, n), n > 0, without modulo bias (Lemire's method).
  uint64_t uniform(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform real in [0, 1).
  double uniform_real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Fisher-Yates.
  template <typename T>
  void shuffle(std::span<T> items) {
    for (std::size_t i = items.size(); i > 1; --i) {
      const std::size_t j = uniform(i);
      std::swap(items[i - 1], items[j]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace greensched
