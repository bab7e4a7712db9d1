// The learned policy's model: a linear score over the placement features (features.hpp) with
// weights per pod class that move with the cluster's load:
//   score = sum_f (weights[class][f] + load x load_weights[class][f]) x feature_f
// Stored as small, human-readable JSON:
//   {"format": "greensched-learned-policy/1",
//    "weights":      {"sharing": {"fgd_score": 1.0, "cpu_left": -0.2, ...}, ...},
//    "load_weights": {...},          (optional; absent classes and features are 0)
//    "resolution":   0.01,           (optional; scores are rounded to multiples of it, and
//                                     nodes whose rounded scores are equal tie)
//    "training":     {...}}          (optional, free-form: how the model was made)
// Every pod class must appear in "weights"; a feature left out of a class weighs 0. Unknown
// keys are errors naming the key, so a typo cannot silently drop a weight.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/learn/features.hpp"

namespace greensched::learn {

inline constexpr std::string_view kModelFormat = "greensched-learned-policy/1";

struct LinearModel {
  std::array<FeatureVector, kPodClassCount> weights{};
  std::array<FeatureVector, kPodClassCount> load_weights{};
  // Scores are compared in multiples of this; equal multiples tie and go to the reference tie
  // order. 0.01 is FGD's own resolution (its score is an integer percentage).
  double resolution = 0.01;
  nlohmann::json training = nlohmann::json::object();

  // FGD as a model: fgd_score alone, weight 1 (ranks and ties exactly as FGD does).
  static LinearModel fgd();

  // All weights as one vector (weights, then load weights; class-major) for the optimiser.
  static constexpr std::size_t kParameterCount =
      2 * std::size_t{kPodClassCount} * std::size_t{kFeatureCount};
  std::vector<double> parameters() const;
  static LinearModel from_parameters(std::span<const double> p);

  // The same model with every weight rounded to the six significant digits the file keeps, so
  // a model trained in memory and the one read back from its file score identically.
  LinearModel rounded() const;

  // The effective weights of a class at a load.
  FeatureVector effective(int pod_class, double load) const;
};

Result<LinearModel> parse_linear_model(std::string_view json_text, const std::string& source);
Result<LinearModel> load_linear_model(const std::string& path);
nlohmann::json to_json(const LinearModel& model);
// Writes atomically (temp file + rename), so a crash never leaves half a model.
Status save_linear_model(const LinearModel& model, const std::string& path);

}  // namespace greensched::learn
