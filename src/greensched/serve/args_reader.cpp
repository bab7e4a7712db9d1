#include "greensched/serve/args_reader.hpp"

#include <optional>

#include "greensched/serve/json_fields.hpp"

namespace greensched::serve {
namespace {

constexpr std::size_t kNpos = std::string_view::npos;
constexpr std::size_t kMaxNames = 100000;  // as parse_extender_args

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// End of the string starting at s[i] == '"' (one past the closing quote), or npos.
std::size_t skip_string(std::string_view s, std::size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return kNpos;
}

// End of the value starting at s[i] (not validated: the caller parses the span), or npos.
std::size_t skip_value(std::string_view s, std::size_t i) {
  if (i >= s.size()) return kNpos;
  if (s[i] == '"') return skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = skip_string(s, i);
        if (i == kNpos) return kNpos;
        continue;
      }
      if (c == '{' || c == '[') {
        if (++depth > kMaxJsonDepth) return kNpos;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return kNpos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_space(s[i])) ++i;
  return i;
}

bool equal_fold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (x != b[i]) return false;
  }
  return true;
}

// ["a", "b"] of plain names (printable ASCII, no escapes, not empty), or nullopt.
std::optional<std::vector<std::string>> plain_names(std::string_view s) {
  std::vector<std::string> names;
  std::size_t i = skip_space(s, 0);
  if (i >= s.size() || s[i] != '[') return std::nullopt;
  i = skip_space(s, i + 1);
  if (i < s.size() && s[i] == ']')
    return skip_space(s, i + 1) == s.size() ? std::optional(names) : std::nullopt;
  while (true) {
    if (i >= s.size() || s[i] != '"') return std::nullopt;
    const std::size_t start = ++i;
    while (i < s.size() && s[i] != '"') {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c < 0x20 || c >= 0x80 || c == '\\') return std::nullopt;
      ++i;
    }
    if (i >= s.size() || i == start) return std::nullopt;
    names.emplace_back(s.substr(start, i - start));
    if (names.size() > kMaxNames) return std::nullopt;
    i = skip_space(s, i + 1);
    if (i < s.size() && s[i] == ',') {
      i = skip_space(s, i + 1);
      continue;
    }
    if (i < s.size() && s[i] == ']') break;
    return std::nullopt;
  }
  return skip_space(s, i + 1) == s.size() ? std::optional(std::move(names)) : std::nullopt;
}

// The fast path; nullopt when the input is not of its form (the general path then decides).
std::optional<Result<ExtenderArgs>> fast(std::string_view body) {
  std::string_view pod, nodes, names;
  std::size_t i = skip_space(body, 0);
  if (i >= body.size() || body[i] != '{') return std::nullopt;
  i = skip_space(body, i + 1);
  if (i < body.size() && body[i] == '}') return std::nullopt;
  while (true) {
    if (i >= body.size() || body[i] != '"') return std::nullopt;
    const std::size_t key_end = skip_string(body, i);
    if (key_end == kNpos) return std::nullopt;
    const std::string_view key = body.substr(i + 1, key_end - i - 2);
    i = skip_space(body, key_end);
    if (i >= body.size() || body[i] != ':') return std::nullopt;
    i = skip_space(body, i + 1);
    const std::size_t value_end = skip_value(body, i);
    if (value_end == kNpos || value_end == i) return std::nullopt;
    const std::string_view value = body.substr(i, value_end - i);
    std::string_view* slot = equal_fold(key, "pod")         ? &pod
                             : equal_fold(key, "nodes")     ? &nodes
                             : equal_fold(key, "nodenames") ? &names
                                                            : nullptr;
    if (slot == nullptr || !slot->empty()) return std::nullopt;  // unknown or repeated key
    *slot = value;
    i = skip_space(body, value_end);
    if (i < body.size() && body[i] == ',') {
      i = skip_space(body, i + 1);
      continue;
    }
    if (i < body.size() && body[i] == '}') break;
    return std::nullopt;
  }
  if (skip_space(body, i + 1) != body.size()) return std::nullopt;
  if (pod.empty() || names.empty() || (!nodes.empty() && nodes != "null")) return std::nullopt;
  auto node_names = plain_names(names);
  if (!node_names) return std::nullopt;
  // The Pod sits one level below the body, so it may nest one level less.
  auto pod_json = parse_request_json(pod, kMaxJsonDepth - 1);
  if (!pod_json.ok() || pod_json.value().is_null()) return std::nullopt;
  auto request = parse_pod(pod_json.value());
  if (!request.ok()) return Result<ExtenderArgs>(Error{request.error()});
  ExtenderArgs args;
  args.pod = std::move(request.value());
  args.node_names = std::move(*node_names);
  return Result<ExtenderArgs>(std::move(args));
}

}  // namespace

Result<ExtenderArgs> read_extender_args_slow(std::string_view body) {
  auto parsed = parse_request_json(body);
  if (!parsed.ok()) return Error{parsed.error()};
  return parse_extender_args(std::move(parsed.value()));
}

Result<ExtenderArgs> read_extender_args(std::string_view body) {
  if (auto quick = fast(body)) return std::move(*quick);
  return read_extender_args_slow(body);
}

}  // namespace greensched::serve
