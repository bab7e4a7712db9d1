#include "greensched/learn/linear_model.hpp"

#include <cmath>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/core/text_file.hpp"

namespace greensched::learn {
namespace {

std::string known_list(int count, std::string_view (*name)(int)) {
  std::string out;
  for (int i = 0; i < count; ++i) out += (i ? ", " : "") + std::string(name(i));
  return out;
}

int find_name(std::string_view key, int count, std::string_view (*name)(int)) {
  for (int i = 0; i < count; ++i) {
    if (name(i) == key) return i;
  }
  return -1;
}

Status parse_weight_table(const nlohmann::json& table, const std::string& where,
                          bool classes_required, std::array<FeatureVector, kPodClassCount>& out) {
  if (!table.is_object()) return Error{fmt::format("{}: not an object", where)};
  for (const auto& [key, features] : table.items()) {
    const int c = find_name(key, kPodClassCount, pod_class_name);
    if (c < 0) {
      return Error{fmt::format("{}.{}: unknown pod class (known: {})", where, key,
                               known_list(kPodClassCount, pod_class_name))};
    }
    if (!features.is_object()) return Error{fmt::format("{}.{}: not an object", where, key)};
    for (const auto& [fname, value] : features.items()) {
      const int f = find_name(fname, kFeatureCount, feature_name);
      if (f < 0) {
        return Error{fmt::format("{}.{}.{}: unknown feature (known: {})", where, key, fname,
                                 known_list(kFeatureCount, feature_name))};
      }
      if (!value.is_number() || !std::isfinite(value.get<double>())) {
        return Error{fmt::format("{}.{}.{}: not a finite number", where, key, fname)};
      }
      out[c][f] = value.get<double>();
    }
  }
  if (classes_required) {
    for (int c = 0; c < kPodClassCount; ++c) {
      if (!table.contains(std::string(pod_class_name(c)))) {
        return Error{fmt::format("{}.{}: missing", where, pod_class_name(c))};
      }
    }
  }
  return Status::Ok();
}

double round6(double x) {
  return std::stod(fmt::format("{:.6g}", x));
}

nlohmann::json weight_table(const std::array<FeatureVector, kPodClassCount>& w) {
  nlohmann::json table = nlohmann::json::object();
  for (int c = 0; c < kPodClassCount; ++c) {
    nlohmann::json features = nlohmann::json::object();
    for (int f = 0; f < kFeatureCount; ++f) {
      // Six significant digits keep files readable; the policy uses the values as written.
      features[std::string(feature_name(f))] = round6(w[c][f]);
    }
    table[std::string(pod_class_name(c))] = features;
  }
  return table;
}

}  // namespace

LinearModel LinearModel::fgd() {
  LinearModel m;
  for (auto& w : m.weights) w[kFgdScore] = 1.0;
  return m;
}

std::vector<double> LinearModel::parameters() const {
  std::vector<double> p;
  p.reserve(kParameterCount);
  for (const auto& w : weights) p.insert(p.end(), w.begin(), w.end());
  for (const auto& w : load_weights) p.insert(p.end(), w.begin(), w.end());
  return p;
}

LinearModel LinearModel::from_parameters(std::span<const double> p) {
  LinearModel m;
  std::size_t i = 0;
  for (auto& w : m.weights) {
    for (double& x : w) x = i < p.size() ? p[i++] : 0.0;
  }
  for (auto& w : m.load_weights) {
    for (double& x : w) x = i < p.size() ? p[i++] : 0.0;
  }
  return m;
}

LinearModel LinearModel::rounded() const {
  LinearModel m = *this;
  for (auto* table : {&m.weights, &m.load_weights}) {
    for (auto& w : *table) {
      for (double& x : w) x = round6(x);
    }
  }
  return m;
}

FeatureVector LinearModel::effective(int pod_class, double load) const {
  FeatureVector e = weights[pod_class];
  for (int f = 0; f < kFeatureCount; ++f) e[f] += load * load_weights[pod_class][f];
  return e;
}

Result<LinearModel> parse_linear_model(std::string_view json_text, const std::string& source) {
  nlohmann::json j = parse_json_or_discarded(json_text);
  if (j.is_discarded()) return Error{fmt::format("{}: not valid JSON", source)};
  if (!j.is_object()) return Error{fmt::format("{}: the model must be a JSON object", source)};
  for (const auto& [key, value] : j.items()) {
    if (key != "format" && key != "weights" && key != "load_weights" && key != "training" &&
        key != "description" && key != "resolution") {
      return Error{fmt::format(
          "{}: {}: unknown key (known: format, description, weights, load_weights, resolution, "
          "training)",
          source, key)};
    }
  }
  if (!j.contains("format")) return Error{fmt::format("{}: format: missing", source)};
  if (!j["format"].is_string() || j["format"].get<std::string>() != kModelFormat) {
    return Error{fmt::format("{}: format: expected \"{}\"", source, kModelFormat)};
  }
  if (!j.contains("weights")) return Error{fmt::format("{}: weights: missing", source)};
  LinearModel m;
  if (Status s = parse_weight_table(j["weights"], source + ": weights", true, m.weights); !s.ok())
    return Error{s.message()};
  if (j.contains("load_weights")) {
    if (Status s =
            parse_weight_table(j["load_weights"], source + ": load_weights", false, m.load_weights);
        !s.ok())
      return Error{s.message()};
  }
  if (j.contains("resolution")) {
    const auto& r = j["resolution"];
    if (!r.is_number() || !(r.get<double>() > 0) || !std::isfinite(r.get<double>())) {
      return Error{fmt::format("{}: resolution: not a positive number", source)};
    }
    m.resolution = r.get<double>();
  }
  if (j.contains("training")) {
    if (!j["training"].is_object())
      return Error{fmt::format("{}: training: not an object", source)};
    m.training = j["training"];
  }
  return m;
}

Result<LinearModel> load_linear_model(const std::string& path) {
  auto text = read_file(path);
  if (!text.ok()) return Error{fmt::format("{}: cannot open the model file", path)};
  return parse_linear_model(text.value(), path);
}

nlohmann::json to_json(const LinearModel& model) {
  nlohmann::json j;
  j["format"] = kModelFormat;
  j["description"] =
      "score = sum over features f of (weights[class][f] + load * load_weights[class][f]) * "
      "feature_f; the feasible node (and GPU) with the highest score wins, ties as the reference "
      "breaks them";
  j["weights"] = weight_table(model.weights);
  j["load_weights"] = weight_table(model.load_weights);
  j["resolution"] = model.resolution;
  j["training"] = model.training;
  return j;
}

Status save_linear_model(const LinearModel& model, const std::string& path) {
  return write_text_file_atomic(path, to_json(model).dump(2) + "\n");
}

}  // namespace greensched::learn
