#include "greensched/explain/placeholders.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/explain/explanation.hpp"

namespace greensched::explain {
namespace {

using nlohmann::json;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string text_of(double v, int decimals) {
  return sentence_number(v, decimals);
}

// A number as the template prints a value of that key: its rounding and its unit.
std::string format_value(const std::string& key, const std::string& parent, double v) {
  if (key == "cpu_milli" || key == "frees_cpu_milli") return text_of(v / 1000.0, 2) + " vCPU";
  if (key == "memory_mib" || key == "frees_memory_mib") return text_of(v / 1024.0, 1) + " GiB";
  if (key == "gpu_milli" || key == "frees_gpu_milli") {
    // A request's share is of one GPU (its GPUs are num_gpu); what a move frees may be more.
    if (v < 1000) return fmt::format("{} of one GPU", text_of(v / 1000.0, 2));
    return v == 1000 ? std::string("1 whole GPU") : fmt::format("{} GPUs", text_of(v / 1000.0, 2));
  }
  if (key == "frag_delta_milli") return text_of(v, 1) + " milli-GPU";
  if (ends_with(key, "_pct")) return text_of(v, 0) + "%";
  if (ends_with(key, "_watts")) return text_of(v, 1) + " W";
  if (ends_with(key, "_kw") || key == "kw") return text_of(v, 2) + " kW";
  if (ends_with(key, "_ci") || ends_with(key, "_gco2_per_kwh") || parent == "carbon_now") {
    return text_of(v, 0) + " gCO2/kWh";
  }
  if (ends_with(key, "_g")) return text_of(v, 0) + " g";
  if (ends_with(key, "_s")) return text_of(v, 0) + " s";
  return text_of(v, 2);
}

void walk(const json& j, const std::string& path, const std::string& key, const std::string& parent,
          json& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (path.empty() && (k == "sentences" || k == "question")) continue;
      walk(v, path.empty() ? k : path + "." + k, k, key, out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      walk(j[i], fmt::format("{}[{}]", path, i), key, parent, out);
    }
  } else if (j.is_number()) {
    out[path] = format_value(key, parent, j.get<double>());
  } else if (j.is_string() && !j.get<std::string>().empty()) {
    out[path] = j.get<std::string>();
  }
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// Whether `value` found at `at` in `text` stands alone: not inside a longer number or name.
bool stands_alone(std::string_view text, std::size_t at, std::size_t size) {
  if (at > 0) {
    const char before = text[at - 1];
    if (word_char(before) || before == '.' || before == '{' || before == '+') return false;
  }
  const std::size_t end = at + size;
  if (end < text.size()) {
    const char after = text[end];
    if (word_char(after) || after == '}') return false;
    if (after == '.' && end + 1 < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[end + 1])) != 0) {
      return false;
    }
  }
  return true;
}

// A placeholder's key: a key path, which may hold spaces ("reason_counts.insufficient cpu").
bool key_char(char c) {
  return c != '{' && c != '}' && c != '\n' && c != '"';
}

}  // namespace

json placeholder_values(const json& facts) {
  json out = json::object();
  walk(facts, "", "", "", out);
  return out;
}

std::string with_placeholders(std::string_view text, const json& values) {
  // Longest values first, so "3.15 vCPU" is replaced before a bare "3".
  std::vector<std::pair<std::string, std::string>> by_length;
  for (const auto& [key, value] : values.items()) {
    if (value.is_string()) by_length.emplace_back(value.get<std::string>(), key);
  }
  std::stable_sort(by_length.begin(), by_length.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::string out(text);
  for (const auto& [value, key] : by_length) {
    if (value.empty()) continue;
    const std::string placeholder = "{" + key + "}";
    for (std::size_t at = out.find(value); at != std::string::npos; at = out.find(value, at + 1)) {
      if (!stands_alone(out, at, value.size())) continue;
      out.replace(at, value.size(), placeholder);
      at += placeholder.size() - 1;
    }
  }
  return out;
}

Result<std::string> fill_placeholders(std::string_view text, const json& values) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '{') {
      out += text[i++];
      continue;
    }
    std::size_t end = i + 1;
    while (end < text.size() && key_char(text[end])) ++end;
    if (end >= text.size() || text[end] != '}' || end == i + 1) {
      return Error{fmt::format("a brace that is not a placeholder: '{}'",
                               text.substr(i, std::min<std::size_t>(24, text.size() - i)))};
    }
    const std::string key(text.substr(i + 1, end - i - 1));
    const json* value = json_member(values, key);
    if (value == nullptr || !value->is_string()) {
      return Error{fmt::format("{{{}}} names no fact", key)};
    }
    out += value->get<std::string>();
    i = end + 1;
  }
  return out;
}

nlohmann::ordered_json placeholder_schema(const json& values) {
  json keys = json::array();
  for (const auto& [key, value] : values.items()) keys.push_back(key);
  // Kept in this order (a grammar follows it): the text first, then the keys it cited.
  nlohmann::ordered_json properties;
  properties["text"] = {{"type", "string"}};
  properties["facts"] = {{"type", "array"}, {"items", {{"type", "string"}, {"enum", keys}}}};
  nlohmann::ordered_json schema;
  schema["type"] = "object";
  schema["properties"] = std::move(properties);
  schema["required"] = {"text", "facts"};
  schema["additionalProperties"] = false;
  return schema;
}

GuardVerdict check_reply(std::string_view content, std::string_view finish_reason,
                         const json& facts, bool asked_json) {
  // Never trust a grammar: the server may have returned anything with 200.
  std::string_view trimmed = content;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front())) != 0) {
    trimmed.remove_prefix(1);
  }
  // JSON opens with '{' and then a quote, a space or '}' ("{pod}" opens a placeholder), or
  // with '[', or in a fenced block.
  const bool looks_json = trimmed.rfind("```", 0) == 0 ||
                          (!trimmed.empty() && trimmed.front() == '[') ||
                          (trimmed.size() >= 2 && trimmed.front() == '{' &&
                           (trimmed[1] == '"' || trimmed[1] == '}' ||
                            std::isspace(static_cast<unsigned char>(trimmed[1])) != 0));
  // A reply cut off is refused as such, whatever it holds (its JSON is cut off too).
  if (finish_reason != "stop") return check_narration(content, facts, finish_reason);
  const json values = placeholder_values(facts);
  if (looks_json) {
    GuardVerdict v;
    const json reply = parse_json_or_discarded(trimmed);
    if (reply.is_discarded() || !reply.is_object() || !reply.contains("text") ||
        !reply["text"].is_string()) {
      v.reason = reply.is_discarded() ? "the reply is broken JSON"
                                      : "the reply is JSON without a \"text\" string";
      return v;
    }
    std::vector<std::string> cited;
    if (const json* keys = json_member(reply, "facts")) {
      if (!keys->is_array()) {
        v.reason = "the reply's \"facts\" is not a list";
        return v;
      }
      for (const json& k : *keys) {
        if (!k.is_string() || !values.contains(k.get<std::string>())) {
          v.reason = fmt::format("the reply cites {}, which is not a fact", k.dump());
          return v;
        }
        cited.push_back(k.get<std::string>());
      }
    }
    auto filled = fill_placeholders(reply["text"].get<std::string>(), values);
    if (!filled.ok()) {
      v.reason = filled.error();
      return v;
    }
    v = check_narration(filled.value(), facts, finish_reason);
    v.used.insert(v.used.begin(), cited.begin(), cited.end());
    return v;
  }
  // Prose (asked for, or what came back instead of the JSON): a brace is a placeholder the
  // model wrote without being asked, or left unfilled.
  if (content.find('{') != std::string_view::npos) {
    GuardVerdict v;
    auto filled = fill_placeholders(content, values);
    v.reason = filled.ok() ? "the reply holds placeholders in prose" : filled.error();
    if (asked_json && filled.ok()) {
      return check_narration(filled.value(), facts, finish_reason);
    }
    return v;
  }
  return check_narration(content, facts, finish_reason);
}

}  // namespace greensched::explain
