// Reading JSON files without exceptions: parse to a value or an error naming the file, and
// typed members whose errors name the key ("fleet.json: sites[0].pue: expected a number").
// nlohmann's get<T>() and value() throw on a wrong type and operator[] on a missing key of a
// const object is undefined, so readers check here before they touch a member.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched {

// JSON text to a value, or "ORIGIN: invalid JSON: ..." saying where it broke.
Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view origin);

// JSON text to a value, or a discarded value (is_discarded()) when the text is not JSON or
// holds a NUL byte; for readers that word their own error.
nlohmann::json parse_json_or_discarded(std::string_view text);

// "a NUL byte at line L, column C" for text holding one. nlohmann's parser takes a NUL byte
// for the end of the text and would drop what follows silently, so parsers check first.
Status check_no_nul_byte(std::string_view text);

enum class JsonKind { kString, kNumber, kInteger, kBool, kObject, kArray };

// "WHERE.KEY" (just KEY when `where` is empty): how errors name a member.
std::string member_path(std::string_view where, std::string_view key);

// The member `key` of `object`; nullptr when `object` is not an object, lacks the key, or the
// value is null.
const nlohmann::json* json_member(const nlohmann::json& object, std::string_view key);

// Checks the member's type: "WHERE.KEY: expected a number". An absent (or null) member is fine
// unless `required` ("WHERE.KEY: missing").
Status check_member(const nlohmann::json& object, std::string_view key, JsonKind kind,
                    std::string_view where, bool required = false);

// Checks every element of array member `key` (if present) has `kind`: "WHERE.KEY[2]: ...".
Status check_elements(const nlohmann::json& object, std::string_view key, JsonKind kind,
                      std::string_view where);

// Typed members; an absent member gives `fallback`, or "missing" when there is none.
Result<double> number_member(const nlohmann::json& object, std::string_view key,
                             std::string_view where, std::optional<double> fallback = {});
// An integer in [low, high]: a JSON integer, or a number with no fractional part (writers
// print large counters as floats); "WHERE.KEY: expected an integer in [low, high]".
Result<int64_t> integer_member(const nlohmann::json& object, std::string_view key,
                               std::string_view where, int64_t low, int64_t high,
                               std::optional<int64_t> fallback = {});
// Every element of array member `key` as a number ("WHERE.KEY[i]: expected a number").
Result<std::vector<double>> numbers_member(const nlohmann::json& object, std::string_view key,
                                           std::string_view where);
Result<std::string> string_member(const nlohmann::json& object, std::string_view key,
                                  std::string_view where, std::optional<std::string> fallback = {});
Result<bool> bool_member(const nlohmann::json& object, std::string_view key, std::string_view where,
                         std::optional<bool> fallback = {});

}  // namespace greensched
