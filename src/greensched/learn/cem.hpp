// A small cross-entropy method (CEM) optimiser: sample a population from a diagonal Gaussian,
// keep the best (the elite), move the mean and spread towards them, repeat. Chosen over policy
// gradients because the objective (allocation at 100 % arrival of whole simulation runs) is a
// noisy black box with no useful gradient, the model has few weights, and every candidate of a
// generation can be scored on the same runs (common random numbers) in parallel.
// Sampling is a pure function of (seed, generation), so a run resumed from a checkpoint
// continues exactly as an uninterrupted one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace greensched::learn {

struct CemOptions {
  int population = 20;
  int elite = 5;
  double smoothing = 0.7;    // weight of the elite statistics in each update
  double min_sigma = 0.002;  // floor on every trainable parameter's spread
};

struct CemState {
  std::vector<double> mean;
  std::vector<double> sigma;  // 0 = the parameter is frozen
  int generation = 0;
};

// The population of `state.generation`: `population` samples, in antithetic pairs
// (mean +- noise) to halve the sampling noise of the elite mean.
std::vector<std::vector<double>> cem_sample(const CemState& state, const CemOptions& options,
                                            uint64_t seed);

// Moves `state` to the next generation given each sample's score (higher is better). Ties in
// score keep sample order, so the update is deterministic.
void cem_update(CemState& state, const CemOptions& options,
                const std::vector<std::vector<double>>& samples, std::span<const double> scores);

}  // namespace greensched::learn
