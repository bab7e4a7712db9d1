// Training a learned policy in the simulator with the cross-entropy method (cem.hpp).
// Objective of a weight vector, on the runs of one generation (pairs of training trace and
// seed, redrawn every generation, the same for every candidate):
//   mean over runs of (allocation % at 100 % arrival - FGD's on the same run)
//   - power_weight x mean over runs of max(0, power increase over FGD's at 100 %, in %)
//   - l2 x sum over trainable weights of ((w - w_FGD) / 0.01)^2
// FGD itself scores 0, and the search starts from FGD's weights. Seeds come from a pool that
// must not meet 42-51, the evaluation seeds. Weights whose feature never differs between the
// feasible nodes of a pod in the training traces cannot change a decision there, so they stay
// frozen at their initial value rather than drift at random. Every generation is checkpointed;
// a run resumed from its checkpoint ends exactly where an uninterrupted one would.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/learn/cem.hpp"
#include "greensched/learn/linear_model.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::learn {

struct TrainOptions {
  std::vector<std::string> trace_names;  // for the record; workloads come separately
  int generations = 30;
  int pairs = 6;             // (trace, seed) runs per generation
  uint64_t seed = 1;         // drives the samples and the runs drawn
  uint64_t seed_low = 1000;  // training seeds are drawn from [seed_low, seed_high]
  uint64_t seed_high = 9999;
  double tune = 1.01;         // the runs stop just past the 100 % arrival bin
  double power_weight = 0.5;  // allocation points per % of power above FGD's
  // Pull towards FGD: objective minus l2 x sum over trainable weights of ((w - w_FGD) / 0.01)^2,
  // so weights that only fit the noise of the runs drawn drift back.
  double l2 = 0.0;
  double init_sigma = 0.01;
  bool load_weights = false;  // also train the load-dependent weights
  double resolution = 0.01;   // of the model's scores (linear_model.hpp)
  int probe_every = 25;       // feature-variation probe: every Nth arrival of one FGD run
  CemOptions cem;
  int jobs = 0;
};

struct GenerationRecord {
  int generation = 0;
  double best = 0;        // best candidate's objective
  double elite_mean = 0;  // mean objective of the elite
  double mean_model = 0;  // objective of the distribution's mean (the model so far)
  double mean_sigma = 0;  // over trainable weights
  double seconds = 0;
};

struct TrainCheckpoint {
  nlohmann::json options;  // what must match to resume
  CemState state;
  std::vector<GenerationRecord> history;
  double elapsed_seconds = 0;
};

nlohmann::json to_json(const TrainCheckpoint& c);
Result<TrainCheckpoint> parse_checkpoint(const nlohmann::json& j, const std::string& source);
Result<TrainCheckpoint> load_checkpoint(const std::string& path);
Status save_checkpoint(const TrainCheckpoint& c, const std::string& path);

using TrainProgressFn = std::function<void(const GenerationRecord& record, int generations)>;

struct TrainResult {
  LinearModel model;  // the final mean, rounded as its file keeps it
  TrainCheckpoint checkpoint;
  int trainable = 0;  // weights searched (the rest frozen)
};

// Trains on `workloads` (one per training trace). With `resume`, continues from it (its options
// must match). `checkpoint_path` (if not empty) is rewritten after every generation.
Result<TrainResult> train(const std::vector<const trace::Workload*>& workloads,
                          const TrainOptions& options, const TrainCheckpoint* resume,
                          const std::string& checkpoint_path, const TrainProgressFn& progress = {});

// The objective terms of one model on given runs (for evaluation and tests).
struct PairScore {
  double alloc_pct = 0;
  double power_watts = 0;
};
Result<PairScore> score_run(const trace::Workload& workload, const LinearModel* model,
                            uint64_t seed, double tune);

}  // namespace greensched::learn
