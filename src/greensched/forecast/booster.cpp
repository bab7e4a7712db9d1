#include "greensched/forecast/booster.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include "greensched/core/text_file.hpp"

namespace greensched::forecast {
namespace {

Error xgb_error(const std::string& what) {
  return Error{fmt::format("{}: XGBoost: {}", what, XGBGetLastError()), ErrorCode::kInternal};
}

// Owns a DMatrix for the length of a call.
class DMatrix {
 public:
  ~DMatrix() {
    if (handle != nullptr) XGDMatrixFree(handle);
  }
  DMatrixHandle handle = nullptr;
};

Status make_dmatrix(const Matrix& x, DMatrix& out) {
  if (x.cols == 0 || x.values.size() % x.cols != 0) {
    return Error{fmt::format("feature matrix of {} values is not whole rows of {} columns",
                             x.values.size(), x.cols),
                 ErrorCode::kInternal};
  }
  if (XGDMatrixCreateFromMat(x.values.data(), static_cast<bst_ulong>(x.rows()),
                             static_cast<bst_ulong>(x.cols), std::nanf(""), &out.handle) != 0) {
    return xgb_error("creating the feature matrix");
  }
  if (!x.base_margin.empty()) {
    if (x.base_margin.size() != x.rows()) {
      return Error{fmt::format("{} base margins for {} rows", x.base_margin.size(), x.rows()),
                   ErrorCode::kInternal};
    }
    if (XGDMatrixSetFloatInfo(out.handle, "base_margin", x.base_margin.data(),
                              static_cast<bst_ulong>(x.base_margin.size())) != 0) {
      return xgb_error("setting the base margins");
    }
  }
  if (!x.weights.empty()) {
    if (x.weights.size() != x.rows()) {
      return Error{fmt::format("{} weights for {} rows", x.weights.size(), x.rows()),
                   ErrorCode::kInternal};
    }
    if (XGDMatrixSetFloatInfo(out.handle, "weight", x.weights.data(),
                              static_cast<bst_ulong>(x.weights.size())) != 0) {
      return xgb_error("setting the row weights");
    }
  }
  return Status::Ok();
}

}  // namespace

Booster::Booster(Booster&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

Booster& Booster::operator=(Booster&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) XGBoosterFree(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Booster::~Booster() {
  if (handle_ != nullptr) XGBoosterFree(handle_);
}

Result<Booster> Booster::train(const Matrix& x, const std::vector<float>& labels,
                               const TreeParams& p,
                               const std::map<std::string, std::string>& attributes) {
  if (labels.size() != x.rows() || labels.empty()) {
    return Error{fmt::format("training: {} labels for {} rows", labels.size(), x.rows()),
                 ErrorCode::kInternal};
  }
  if (p.trees < 1 || p.max_depth < 1 || !(p.eta > 0) || !(p.subsample > 0 && p.subsample <= 1)) {
    return Error{
        fmt::format("training: trees {} and depth {} must be >= 1, eta {} > 0, "
                    "subsample {} in (0, 1]",
                    p.trees, p.max_depth, p.eta, p.subsample)};
  }
  DMatrix d;
  if (Status s = make_dmatrix(x, d); !s.ok()) return s.error();
  if (XGDMatrixSetFloatInfo(d.handle, "label", labels.data(),
                            static_cast<bst_ulong>(labels.size())) != 0) {
    return xgb_error("setting the labels");
  }
  Booster out;
  if (XGBoosterCreate(&d.handle, 1, &out.handle_) != 0) return xgb_error("creating the model");
  const std::pair<std::string, std::string> params[] = {
      {"nthread", "1"},
      {"seed", fmt::format("{}", p.seed)},
      {"seed_per_iteration", "false"},
      {"tree_method", "hist"},
      {"objective", p.objective},
      {"max_depth", fmt::format("{}", p.max_depth)},
      {"eta", fmt::format("{}", p.eta)},
      {"subsample", fmt::format("{}", p.subsample)},
      {"min_child_weight", fmt::format("{}", p.min_child_weight)},
      {"max_bin", fmt::format("{}", p.max_bin)},
      {"verbosity", "0"},
  };
  for (const auto& [key, value] : params) {
    if (XGBoosterSetParam(out.handle_, key.c_str(), value.c_str()) != 0) {
      return xgb_error(fmt::format("setting {}={}", key, value));
    }
  }
  for (int i = 0; i < p.trees; ++i) {
    if (XGBoosterUpdateOneIter(out.handle_, i, d.handle) != 0) {
      return xgb_error(fmt::format("boosting round {}", i));
    }
  }
  for (const auto& [key, value] : attributes) {
    if (XGBoosterSetAttr(out.handle_, key.c_str(), value.c_str()) != 0) {
      return xgb_error(fmt::format("storing attribute {}", key));
    }
  }
  return out;
}

Result<Booster> Booster::from_bytes(const std::string& bytes, const std::string& source) {
  Booster out;
  if (XGBoosterCreate(nullptr, 0, &out.handle_) != 0) return xgb_error("creating the model");
  if (bytes.empty() || XGBoosterLoadModelFromBuffer(out.handle_, bytes.data(),
                                                    static_cast<bst_ulong>(bytes.size())) != 0) {
    return Error{fmt::format("{}: not an XGBoost model file ({})", source,
                             bytes.empty() ? "empty" : XGBGetLastError())};
  }
  if (XGBoosterSetParam(out.handle_, "nthread", "1") != 0) return xgb_error("setting nthread");
  return out;
}

Result<Booster> Booster::load(const std::string& path) {
  auto text = read_file(path);
  if (!text.ok()) return text.status().error();
  return from_bytes(text.value(), path);
}

Result<std::string> Booster::bytes() const {
  bst_ulong len = 0;
  const char* buf = nullptr;
  if (handle_ == nullptr ||
      XGBoosterSaveModelToBuffer(handle_, R"({"format":"ubj"})", &len, &buf) != 0) {
    return xgb_error("saving the model");
  }
  return std::string(buf, static_cast<std::size_t>(len));
}

Status Booster::save(const std::string& path) const {
  auto b = bytes();
  if (!b.ok()) return b.status();
  return write_text_file(path, b.value());
}

Result<std::vector<float>> Booster::predict(const Matrix& x) const {
  if (x.rows() == 0) return std::vector<float>{};
  DMatrix d;
  if (Status s = make_dmatrix(x, d); !s.ok()) return s.error();
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  if (XGBoosterPredictFromDMatrix(
          handle_, d.handle,
          R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})",
          &shape, &dim, &result) != 0) {
    return xgb_error("predicting");
  }
  if (dim != 1 || shape[0] != x.rows()) {
    return Error{fmt::format("predicting: {} dimensions, expected one of {} rows", dim, x.rows()),
                 ErrorCode::kInternal};
  }
  return std::vector<float>(result, result + x.rows());
}

std::optional<std::string> Booster::attribute(const std::string& key) const {
  const char* out = nullptr;
  int success = 0;
  if (handle_ == nullptr || XGBoosterGetAttr(handle_, key.c_str(), &out, &success) != 0 ||
      success == 0) {
    return std::nullopt;
  }
  return std::string(out);
}

}  // namespace greensched::forecast
