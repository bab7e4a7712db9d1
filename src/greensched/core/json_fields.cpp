#include "greensched/core/json_fields.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace greensched {
namespace {

bool is_kind(const nlohmann::json& v, JsonKind kind) {
  switch (kind) {
    case JsonKind::kString:
      return v.is_string();
    case JsonKind::kNumber:
      return v.is_number();
    case JsonKind::kInteger:
      return v.is_number_integer();
    case JsonKind::kBool:
      return v.is_boolean();
    case JsonKind::kObject:
      return v.is_object();
    case JsonKind::kArray:
      return v.is_array();
  }
  return false;
}

const char* kind_name(JsonKind kind) {
  switch (kind) {
    case JsonKind::kString:
      return "a string";
    case JsonKind::kNumber:
      return "a number";
    case JsonKind::kInteger:
      return "an integer";
    case JsonKind::kBool:
      return "true or false";
    case JsonKind::kObject:
      return "an object";
    case JsonKind::kArray:
      return "an array";
  }
  return "?";
}

Error type_error(std::string_view where, std::string_view key, JsonKind kind,
                 const nlohmann::json& v) {
  return Error{fmt::format("{}: expected {}, not {}", member_path(where, key), kind_name(kind),
                           v.type_name())};
}

// The member after its type check; nullptr when absent.
Result<const nlohmann::json*> typed(const nlohmann::json& object, std::string_view key,
                                    JsonKind kind, std::string_view where, bool required) {
  if (Status s = check_member(object, key, kind, where, required); !s.ok()) return s.error();
  return json_member(object, key);
}

}  // namespace

Status check_no_nul_byte(std::string_view text) {
  const std::size_t at = text.find('\0');
  if (at == std::string_view::npos) return Status::Ok();
  const std::string_view before = text.substr(0, at);
  const std::size_t line_start = before.rfind('\n');
  const std::size_t line =
      1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t column = line_start == std::string_view::npos ? at + 1 : at - line_start;
  return Error{fmt::format("a NUL byte at line {}, column {}", line, column)};
}

nlohmann::json parse_json_or_discarded(std::string_view text) {
  if (text.find('\0') != std::string_view::npos)
    return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view origin) {
  if (Status nul = check_no_nul_byte(text); !nul.ok()) {
    return Error{fmt::format("{}: invalid JSON: {}", origin, nul.message())};
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{}: invalid JSON: {}", origin, e.what())};
  }
}

std::string member_path(std::string_view where, std::string_view key) {
  return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
}

const nlohmann::json* json_member(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Status check_member(const nlohmann::json& object, std::string_view key, JsonKind kind,
                    std::string_view where, bool required) {
  const nlohmann::json* v = json_member(object, key);
  if (v == nullptr) {
    if (!required) return Status::Ok();
    return Error{fmt::format("{}: missing", member_path(where, key))};
  }
  if (!is_kind(*v, kind)) return type_error(where, key, kind, *v);
  return Status::Ok();
}

Status check_elements(const nlohmann::json& object, std::string_view key, JsonKind kind,
                      std::string_view where) {
  auto array = typed(object, key, JsonKind::kArray, where, false);
  if (!array.ok()) return array.status();
  if (array.value() == nullptr) return Status::Ok();
  for (std::size_t i = 0; i < array.value()->size(); ++i) {
    const nlohmann::json& v = (*array.value())[i];
    if (!is_kind(v, kind)) return type_error(where, fmt::format("{}[{}]", key, i), kind, v);
  }
  return Status::Ok();
}

Result<double> number_member(const nlohmann::json& object, std::string_view key,
                             std::string_view where, std::optional<double> fallback) {
  auto v = typed(object, key, JsonKind::kNumber, where, !fallback);
  if (!v.ok()) return v.status().error();
  return v.value() == nullptr ? *fallback : v.value()->get<double>();
}

Result<int64_t> integer_member(const nlohmann::json& object, std::string_view key,
                               std::string_view where, int64_t low, int64_t high,
                               std::optional<int64_t> fallback) {
  auto v = typed(object, key, JsonKind::kNumber, where, !fallback);
  if (!v.ok()) return v.status().error();
  if (v.value() == nullptr) return *fallback;
  const nlohmann::json& n = *v.value();
  if (n.is_number_unsigned() && n.get<uint64_t>() <= static_cast<uint64_t>(high) &&
      static_cast<int64_t>(n.get<uint64_t>()) >= low) {
    return static_cast<int64_t>(n.get<uint64_t>());
  }
  if (n.is_number_integer() && !n.is_number_unsigned() && n.get<int64_t>() >= low &&
      n.get<int64_t>() <= high) {
    return n.get<int64_t>();
  }
  // Bounds as doubles are exact up to 2^53; beyond that a float counter is refused, never cast.
  const double d = n.get<double>();
  if (n.is_number_float() && std::isfinite(d) && d == std::floor(d) &&
      d >= static_cast<double>(low) && d <= static_cast<double>(high) &&
      std::fabs(d) < 9007199254740992.0) {
    return static_cast<int64_t>(d);
  }
  return Error{fmt::format("{}: expected an integer in [{}, {}], not {}", member_path(where, key),
                           low, high, n.dump())};
}

Result<std::vector<double>> numbers_member(const nlohmann::json& object, std::string_view key,
                                           std::string_view where) {
  if (Status s = check_member(object, key, JsonKind::kArray, where, true); !s.ok()) {
    return s.error();
  }
  if (Status s = check_elements(object, key, JsonKind::kNumber, where); !s.ok()) return s.error();
  std::vector<double> out;
  for (const nlohmann::json& v : *json_member(object, key)) out.push_back(v.get<double>());
  return out;
}

Result<std::string> string_member(const nlohmann::json& object, std::string_view key,
                                  std::string_view where, std::optional<std::string> fallback) {
  auto v = typed(object, key, JsonKind::kString, where, !fallback);
  if (!v.ok()) return v.status().error();
  return v.value() == nullptr ? *fallback : v.value()->get<std::string>();
}

Result<bool> bool_member(const nlohmann::json& object, std::string_view key, std::string_view where,
                         std::optional<bool> fallback) {
  auto v = typed(object, key, JsonKind::kBool, where, !fallback);
  if (!v.ok()) return v.status().error();
  return v.value() == nullptr ? *fallback : v.value()->get<bool>();
}

}  // namespace greensched
