#include "greensched/serve/json_fields.hpp"

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"

namespace greensched::serve {
namespace {

bool equal_fold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

std::size_t nesting_too_deep_at(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

Result<nlohmann::json> parse_request_json(std::string_view text, int max_depth) {
  if (text.empty()) return Error{"empty request body (expected JSON)"};
  if (Status nul = check_no_nul_byte(text); !nul.ok()) {
    return Error{fmt::format("malformed JSON: {}", nul.message())};
  }
  if (nesting_too_deep_at(text, max_depth) != std::string_view::npos) {
    return Error{fmt::format("malformed JSON: nested deeper than {} levels", max_depth)};
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("malformed JSON: {}", e.what())};
  }
}

const nlohmann::json* find_field(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const nlohmann::json* found = nullptr;
  if (auto it = object.find(key); it != object.end()) {
    found = &*it;
  } else {
    for (auto it2 = object.begin(); it2 != object.end(); ++it2) {
      if (equal_fold(it2.key(), key)) {
        found = &*it2;
        break;
      }
    }
  }
  if (found == nullptr || found->is_null()) return nullptr;
  return found;
}

Result<std::optional<std::string>> optional_string(const nlohmann::json& object,
                                                   std::string_view key, std::string_view where) {
  const nlohmann::json* v = find_field(object, key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) {
    return Error{fmt::format("{}{}: must be a string, not {}", where, key, v->type_name())};
  }
  return std::optional<std::string>(v->get<std::string>());
}

Result<std::string> required_string(const nlohmann::json& object, std::string_view key,
                                    std::string_view where) {
  auto v = optional_string(object, key, where);
  if (!v.ok()) return Error{v.error()};
  if (!v.value() || v.value()->empty()) {
    return Error{fmt::format("{}{}: missing or empty", where, key)};
  }
  return std::move(*v.value());
}

}  // namespace greensched::serve
