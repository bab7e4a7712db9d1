#include "greensched/forecast/learned.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <iterator>
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

// Training or validation rows, with each row's zone (its place in the training list) and
// trailing-week scale.
struct Rows {
  explicit Rows(std::size_t cols) { x.cols = cols; }
  Matrix x;
  std::vector<float> labels;
  std::vector<std::size_t> zone;
  std::vector<double> scale;
};

// The rows of zone `code` issued at known = issue, issue + issue_every_h, ... below
// `issue_end`, for the horizons whose target sample lies before `target_end`.
void append_rows(const ZoneSeries& z, std::size_t code, std::size_t issue, std::size_t issue_end,
                 std::size_t target_end, const TrainOptions& o, Rows& r) {
  const Series& s = *z.series;
  for (std::size_t known = issue; known < issue_end;
       known += static_cast<std::size_t>(o.issue_every_h)) {
    const double scale = scale_at(s, known);
    for (int h = 1; h <= o.max_horizon_h; ++h) {
      const std::size_t i = target_index(known, h);
      if (i >= target_end) break;
      append_row(s, z.exog, known, h, scale, static_cast<double>(code), r.x.values);
      const float* row = r.x.values.data() + (r.x.values.size() - r.x.cols);
      r.x.base_margin.push_back(row[kBaseIndex]);
      r.labels.push_back(static_cast<float>(s.values[i] / scale));
      r.zone.push_back(code);
      r.scale.push_back(scale);
      if (o.relative_loss) {
        const double rel = std::max(std::abs(s.values[i]) / scale, kMinRelativeTarget);
        const double naive = std::max(static_cast<double>(row[kNaiveErrorIndex]), kMinNaiveError);
        r.x.weights.push_back(static_cast<float>(1.0 / (rel * naive)));
      }
    }
  }
}

// Per zone, the correction weight whose forecasts of the validation rows err least
// (TrainOptions::validation_days); `trees` are the first model's forecasts of `rows`.
std::vector<double> choose_weights(const Rows& rows, const std::vector<float>& trees,
                                   std::size_t zones, bool relative) {
  std::vector<double> mean_abs(zones, 0.0), count(zones, 0.0);
  for (std::size_t r = 0; r < rows.labels.size(); ++r) {
    mean_abs[rows.zone[r]] += std::abs(static_cast<double>(rows.labels[r]) * rows.scale[r]);
    count[rows.zone[r]] += 1;
  }
  constexpr std::size_t kWeights = std::size(kCorrectionWeights);
  std::vector<std::array<double, kWeights>> error(zones);
  for (auto& e : error) e.fill(0.0);
  for (std::size_t r = 0; r < rows.labels.size(); ++r) {
    const std::size_t z = rows.zone[r];
    const double actual = static_cast<double>(rows.labels[r]) * rows.scale[r];
    if (relative && std::abs(actual) < 0.01 * mean_abs[z] / count[z]) continue;
    const double base = static_cast<double>(rows.x.base_margin[r]) * rows.scale[r];
    const double tree = static_cast<double>(trees[r]) * rows.scale[r];
    for (std::size_t k = 0; k < kWeights; ++k) {
      const double miss = std::abs(base + kCorrectionWeights[k] * (tree - base) - actual);
      error[z][k] += relative ? miss / std::abs(actual) : miss;
    }
  }
  std::vector<double> out(zones, 1.0);
  for (std::size_t z = 0; z < zones; ++z) {
    if (count[z] == 0) continue;  // no validation rows: the trees' own forecast
    std::size_t best = 0;
    for (std::size_t k = 1; k < kWeights; ++k) {
      if (error[z][k] < error[z][best]) best = k;
    }
    out[z] = kCorrectionWeights[best];
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
  if (o.max_horizon_h < 1 || o.max_horizon_h > kMaxHorizonH || o.issue_every_h < 1 ||
      o.validation_days < 0) {
    return Error{fmt::format(
        "training: horizon {} h must be in 1..{}, issue step {} h >= 1, validation {} days >= 0",
        o.max_horizon_h, kMaxHorizonH, o.issue_every_h, o.validation_days)};
  }
  const std::size_t exog = zones.front().exog != nullptr ? zones.front().exog->size() : 0;
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
    if ((z.exog != nullptr ? z.exog->size() : 0) != exog) {
      return Error{fmt::format("training: series {} has {} exogenous columns, the first has {}",
                               s.name, z.exog != nullptr ? z.exog->size() : 0, exog)};
    }
  }
  // Samples [first, end) of a zone may be read: from from_s, and ending at or before `until`;
  // rows are issued at first + kMinHistoryH + k x issue_every_h.
  const auto first_of = [&](const Series& s) {
    return (o.from_s <= s.start_s ? 0 : known_count(s, o.from_s)) + kMinHistoryH;
  };
  const auto step = static_cast<std::size_t>(o.issue_every_h);
  const auto rows_until = [&](int64_t until, Rows& r) {
    for (std::size_t z = 0; z < zones.size(); ++z) {
      const std::size_t end = known_count(*zones[z].series, until);
      append_rows(zones[z], z, first_of(*zones[z].series), end, end, o, r);
    }
  };

  std::vector<double> weights(zones.size(), 1.0);
  bool guarded = false;
  if (o.validation_days > 0) {
    // A model of the days before the split, judged on the issues after it.
    const int64_t split = o.until_s - int64_t{86400} * o.validation_days;
    Rows before(kBaseFeatures + exog), after(kBaseFeatures + exog);
    rows_until(split, before);
    for (std::size_t z = 0; z < zones.size(); ++z) {
      const Series& s = *zones[z].series;
      const std::size_t first = first_of(s), from = known_count(s, split);
      const std::size_t issue =
          from <= first ? first : first + (from - first + step - 1) / step * step;
      const std::size_t end = known_count(s, o.until_s);
      append_rows(zones[z], z, issue, end, end, o, after);
    }
    if (!before.labels.empty() && !after.labels.empty() &&
        before.labels.size() >= after.labels.size()) {
      auto first_model = Booster::train(before.x, before.labels, o.trees, {});
      if (!first_model.ok()) return first_model.status().error();
      auto p = first_model.value().predict(after.x);
      if (!p.ok()) return p.status().error();
      weights = choose_weights(after, p.value(), zones.size(), o.relative_loss);
      guarded = true;
    }
  }

  Rows all(kBaseFeatures + exog);
  rows_until(o.until_s, all);
  if (all.labels.empty()) {
    return Error{
        fmt::format("training: no rows before {} (each needs {} h of history and a known target)",
                    format_utc_time(o.until_s), kMinHistoryH)};
  }
  std::map<std::string, std::string> attrs = {
      {"greensched_kind", o.kind},
      {"greensched_feature_version", fmt::format("{}", kFeatureVersion)},
      {"greensched_trained_until", fmt::format("{}", o.until_s)},
      {"greensched_max_horizon_h", fmt::format("{}", o.max_horizon_h)},
      {"greensched_exog_columns", fmt::format("{}", exog)},
      {"greensched_rows", fmt::format("{}", all.labels.size())},
      {"greensched_zones", join_names(names)},
  };
  if (guarded) {
    std::vector<std::string> text;
    for (double w : weights) text.push_back(fmt::format("{}", w));
    attrs["greensched_correction_weights"] = join_names(text);
  }
  auto booster = Booster::train(all.x, all.labels, o.trees, attrs);
  if (!booster.ok()) return booster.status().error();
  LearnedModel model(std::move(booster.value()), o.kind, o.until_s, o.max_horizon_h, exog,
                     all.labels.size());
  model.zones_ = std::move(names);
  model.weights_ = std::move(weights);
  model.guarded_ = guarded;
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
  std::vector<double> weights(zones.size(), 1.0);
  const auto weight_text = b.value().attribute("greensched_correction_weights");
  if (weight_text) {
    const std::vector<std::string> parts = split_names(*weight_text);
    bool ok = parts.size() == zones.size();
    for (std::size_t z = 0; ok && z < parts.size(); ++z) {
      char* stop = nullptr;
      weights[z] = std::strtod(parts[z].c_str(), &stop);
      ok = !parts[z].empty() && *stop == '\0' && weights[z] >= 0 && weights[z] <= 1;
    }
    if (!ok) {
      return Error{
          fmt::format("{}: greensched_correction_weights '{}' is not one weight in "
                      "[0, 1] per training zone ({})",
                      path, *weight_text, zones.size())};
    }
  }
  LearnedModel model(std::move(b.value()), std::move(kind), *until, static_cast<int>(*horizon),
                     static_cast<std::size_t>(*exog), static_cast<std::size_t>(*rows));
  model.zones_ = std::move(zones);
  model.weights_ = std::move(weights);
  model.guarded_ = weight_text.has_value();
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
  // The zone's weight on the trees' correction to the seasonal-naive base.
  const double w = named == zones_.end() || weights_.empty()
                       ? 1.0
                       : weights_[static_cast<std::size_t>(named - zones_.begin())];
  for (std::size_t k = 0; k < out.size(); ++k) {
    const auto trees = static_cast<double>(p.value()[k]);
    const auto base = static_cast<double>(x.base_margin[k]);
    out[k] = (w == 1.0 ? trees : base + w * (trees - base)) * scale;
  }
  return out;
}

}  // namespace greensched::forecast
