// Gradient-boosted regression trees through XGBoost's C API (libxgboost-dev 1.7): training,
// prediction and the model file (UBJSON, XGBoost's own binary JSON). One thread and a fixed
// seed, so the same rows and parameters give a byte-identical model file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::forecast {

struct TreeParams {
  int trees = 200;
  int max_depth = 6;
  double eta = 0.05;
  double subsample = 1.0;
  double min_child_weight = 1.0;
  int max_bin = 256;
  uint64_t seed = 42;
  std::string objective = "reg:squarederror";
};

// Rows of `cols` features, row-major; NaN is a missing value.
struct Matrix {
  std::size_t cols = 0;
  std::vector<float> values;
  // Per row, where the trees start from (XGBoost's base_margin); empty: from 0.5.
  std::vector<float> base_margin;
  // Per row, its weight in training; empty: 1 each.
  std::vector<float> weights;
  std::size_t rows() const { return cols == 0 ? 0 : values.size() / cols; }
};

class Booster {
 public:
  Booster() = default;
  Booster(Booster&& other) noexcept;
  Booster& operator=(Booster&& other) noexcept;
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  ~Booster();

  // Squared-error regression of `labels` on `x` (tree_method hist, nthread 1). `attributes`
  // are stored in the model file.
  static Result<Booster> train(const Matrix& x, const std::vector<float>& labels,
                               const TreeParams& params,
                               const std::map<std::string, std::string>& attributes);
  // From a model file's bytes (UBJSON, or XGBoost's JSON); `source` names it in errors.
  static Result<Booster> from_bytes(const std::string& bytes, const std::string& source);
  static Result<Booster> load(const std::string& path);

  // The model file's bytes (UBJSON).
  Result<std::string> bytes() const;
  Status save(const std::string& path) const;
  Result<std::vector<float>> predict(const Matrix& x) const;
  std::optional<std::string> attribute(const std::string& key) const;
  bool empty() const { return handle_ == nullptr; }

 private:
  void* handle_ = nullptr;
};

}  // namespace greensched::forecast
