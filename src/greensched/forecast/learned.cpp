#include "greensched/forecast/learned.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "greensched/core/utc_time.hpp"

namespace greensched::forecast {
namespace {

// Targets below this share of the trailing week's scale weigh as if they were this large, so
// that a zero (a price, a night of solar) cannot dominate the training.
constexpr double kMinRelativeTarget = 0.05;
// The week's seasonal-naive error (feature naive_err168, a share of the scale) weighs as if it
// were at least this, so that a flat week cannot dominate either.
constexpr double kMinNaiveError = 0.002;
constexpr std::size_t kNaiveErrorIndex = 15;

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size() && !text.empty()) {
    const std::size_t comma = text.find(',', from);
    out.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

}  // namespace

LearnedModel::LearnedModel(Booster booster, std::string kind, int64_t trained_until_s,
                           int max_horizon_h, std::size_t exog_columns, std::size_t rows)
    : booster_(std::move(booster)),
      kind_(std::move(kind)),
      trained_until_s_(trained_until_s),
      max_horizon_h_(max_horizon_h),
      exog_columns_(exog_columns),
      rows_(rows) {}

Result<LearnedModel> LearnedModel::train(std::span<const ZoneSeries> zones, const TrainOptions& o) {
  if (zones.empty()) return Error{"training: no series"};
  if (o.max_horizon_h < 1 || o.max_horizon_h > kMaxHorizonH || o.issue_every_h < 1) {
    return Error{fmt::format("training: horizon {} h must be in 1..{}, issue step {} h >= 1",
                             o.max_horizon_h, kMaxHorizonH, o.issue_every_h)};
  }
  const std::size_t exog = zones.front().exog != nullptr ? zones.front().exog->size() : 0;
  Matrix x;
  x.cols = kBaseFeatures + exog;
  std::vector<float> labels;
  std::vector<std::string> names;
  for (const ZoneSeries& z : zones) {
    const Series& s = *z.series;
    if (Status st = validate_series(s); !st.ok()) return st.error();
    if (s.name.empty() || s.name.find(',') != std::string::npos ||
        std::find(names.begin(), names.end(), s.name) != names.end()) {
      return Error{
          fmt::format("training: series name '{}' is empty, has a comma or repeats", s.name)};
    }
    names.push_back(s.name);
    const auto code = static_cast<double>(names.size() - 1);
    if ((z.exog != nullptr ? z.exog->size() : 0) != exog) {
      return Error{fmt::format("training: series {} has {} exogenous columns, the first has {}",
                               s.name, z.exog != nullptr ? z.exog->size() : 0, exog)};
    }
    // Samples [first, end) may be read: from from_s, and ending at or before until_s.
    const std::size_t first = o.from_s <= s.start_s ? 0 : known_count(s, o.from_s);
    const std::size_t end = known_count(s, o.until_s);
    for (std::size_t known = first + kMinHistoryH; known < end;
         known += static_cast<std::size_t>(o.issue_every_h)) {
      const double scale = scale_at(s, known);
      for (int h = 1; h <= o.max_horizon_h; ++h) {
        const std::size_t i = target_index(known, h);
        if (i >= end) break;
        append_row(s, z.exog, known, h, scale, code, x.values);
        const float* row = x.values.data() + (x.values.size() - x.cols);
        x.base_margin.push_back(row[kBaseIndex]);
        labels.push_back(static_cast<float>(s.values[i] / scale));
        if (o.relative_loss) {
          const double r = std::max(std::abs(s.values[i]) / scale, kMinRelativeTarget);
          const double naive = std::max(static_cast<double>(row[kNaiveErrorIndex]), kMinNaiveError);
          x.weights.push_back(static_cast<float>(1.0 / (r * naive)));
        }
      }
    }
  }
  if (labels.empty()) {
    return Error{
        fmt::format("training: no rows before {} (each needs {} h of history and a known target)",
                    format_utc_time(o.until_s), kMinHistoryH)};
  }
  const std::map<std::string, std::string> attrs = {
      {"greensched_kind", o.kind},
      {"greensched_feature_version", fmt::format("{}", kFeatureVersion)},
      {"greensched_trained_until", fmt::format("{}", o.until_s)},
      {"greensched_max_horizon_h", fmt::format("{}", o.max_horizon_h)},
      {"greensched_exog_columns", fmt::format("{}", exog)},
      {"greensched_rows", fmt::format("{}", labels.size())},
      {"greensched_zones", join_names(names)},
  };
  auto booster = Booster::train(x, labels, o.trees, attrs);
  if (!booster.ok()) return booster.status().error();
  LearnedModel model(std::move(booster.value()), o.kind, o.until_s, o.max_horizon_h, exog,
                     labels.size());
  model.zones_ = std::move(names);
  return model;
}

Result<LearnedModel> LearnedModel::load(const std::string& path) {
  auto b = Booster::load(path);
  if (!b.ok()) return b.status().error();
  const auto number = [&](const char* key) -> std::optional<int64_t> {
    const auto v = b.value().attribute(key);
    if (!v) return std::nullopt;
    try {
      std::size_t used = 0;
      const long long n = std::stoll(*v, &used);
      if (used != v->size()) return std::nullopt;
      return n;
    } catch (...) {
      return std::nullopt;
    }
  };
  const auto version = number("greensched_feature_version");
  const auto until = number("greensched_trained_until");
  const auto horizon = number("greensched_max_horizon_h");
  const auto exog = number("greensched_exog_columns");
  const auto rows = number("greensched_rows");
  if (!version || !until || !horizon || !exog || !rows) {
    return Error{
        fmt::format("{}: not a greensched forecast model (its greensched_* attributes "
                    "are missing)",
                    path)};
  }
  if (*version != kFeatureVersion) {
    return Error{
        fmt::format("{}: feature version {}, this build reads version {}; retrain it "
                    "(greensched forecast train)",
                    path, *version, kFeatureVersion)};
  }
  if (*horizon < 1 || *horizon > kMaxHorizonH || *exog < 0) {
    return Error{fmt::format("{}: horizon {} h or {} exogenous columns out of range", path,
                             *horizon, *exog)};
  }
  std::string kind = b.value().attribute("greensched_kind").value_or("");
  std::vector<std::string> zones =
      split_names(b.value().attribute("greensched_zones").value_or(""));
  LearnedModel model(std::move(b.value()), std::move(kind), *until, static_cast<int>(*horizon),
                     static_cast<std::size_t>(*exog), static_cast<std::size_t>(*rows));
  model.zones_ = std::move(zones);
  return model;
}

Status LearnedModel::save(const std::string& path) const {
  return booster_.save(path);
}

Result<std::vector<double>> LearnedModel::forecast(const ZoneSeries& z, int64_t now,
                                                   std::span<const int> horizons) const {
  const Series& s = *z.series;
  const std::size_t known = known_count(s, now);
  if (known < kMinHistoryH) {
    return Error{fmt::format("series {}: {} h complete at {}; a learned forecast needs {} h",
                             s.name, known, format_utc_time(now), kMinHistoryH)};
  }
  const std::size_t exog = z.exog != nullptr ? z.exog->size() : 0;
  if (exog != exog_columns_) {
    return Error{fmt::format("series {}: {} exogenous columns, the model was trained with {}",
                             s.name, exog, exog_columns_)};
  }
  Matrix x;
  x.cols = kBaseFeatures + exog;
  const double scale = scale_at(s, known);
  const auto named = std::find(zones_.begin(), zones_.end(), s.name);
  const double code =
      named == zones_.end() ? std::nan("") : static_cast<double>(named - zones_.begin());
  for (int h : horizons) {
    if (h < 1 || h > max_horizon_h_) {
      return Error{fmt::format("horizon {} h is outside the model's 1..{}", h, max_horizon_h_)};
    }
    append_row(s, z.exog, known, h, scale, code, x.values);
    x.base_margin.push_back(x.values[x.values.size() - x.cols + kBaseIndex]);
  }
  auto p = booster_.predict(x);
  if (!p.ok()) return p.status().error();
  std::vector<double> out(horizons.size());
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<double>(p.value()[k]) * scale;
  return out;
}

}  // namespace greensched::forecast
