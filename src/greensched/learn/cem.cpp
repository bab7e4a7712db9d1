#include "greensched/learn/cem.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "greensched/core/rng.hpp"

namespace greensched::learn {
namespace {

// Standard normal draw (Box-Muller) from the project's portable generator.
double normal(Rng& rng) {
  double u1 = rng.uniform_real();
  while (u1 <= 0.0) u1 = rng.uniform_real();
  const double u2 = rng.uniform_real();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

std::vector<std::vector<double>> cem_sample(const CemState& state, const CemOptions& options,
                                            uint64_t seed) {
  Rng rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(state.generation) * 7919U + 1U);
  std::vector<std::vector<double>> out;
  const std::size_t n = state.mean.size();
  while (static_cast<int>(out.size()) < options.population) {
    std::vector<double> noise(n);
    for (std::size_t i = 0; i < n; ++i) noise[i] = normal(rng) * state.sigma[i];
    std::vector<double> plus(n), minus(n);
    for (std::size_t i = 0; i < n; ++i) {
      plus[i] = state.mean[i] + noise[i];
      minus[i] = state.mean[i] - noise[i];
    }
    out.push_back(std::move(plus));
    if (static_cast<int>(out.size()) < options.population) out.push_back(std::move(minus));
  }
  return out;
}

void cem_update(CemState& state, const CemOptions& options,
                const std::vector<std::vector<double>>& samples, std::span<const double> scores) {
  std::vector<std::size_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0U);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  const std::size_t k =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(options.elite, 1)), order.size());
  const std::size_t n = state.mean.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (state.sigma[i] == 0.0) continue;  // frozen
    double m = 0;
    for (std::size_t e = 0; e < k; ++e) m += samples[order[e]][i];
    m /= static_cast<double>(k);
    double v = 0;
    for (std::size_t e = 0; e < k; ++e)
      v += (samples[order[e]][i] - m) * (samples[order[e]][i] - m);
    v /= static_cast<double>(k);
    const double a = options.smoothing;
    state.mean[i] = (1 - a) * state.mean[i] + a * m;
    state.sigma[i] =
        std::max(options.min_sigma, std::sqrt((1 - a) * state.sigma[i] * state.sigma[i] + a * v));
  }
  ++state.generation;
}

}  // namespace greensched::learn
