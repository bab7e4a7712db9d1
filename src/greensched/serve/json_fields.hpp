// Reading fields of JSON objects the way Go's encoding/json (and so kube-scheduler and the
// API server) does: an exact key match first, else a case-insensitive one ("nodenames" finds
// "NodeNames"). Missing fields and null read as absent; wrong types are errors naming the
// field, never exceptions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::serve {

// Kubernetes objects nest a dozen levels; deeper input is refused before parsing, as the
// parser allocates a value per level (a 32 MiB body of '[' would take gigabytes).
inline constexpr int kMaxJsonDepth = 128;

// The offset of the first bracket of `text` nested deeper than `max_depth` (brackets inside
// strings do not count), or npos: nlohmann::json recurses per level, so callers check first.
std::size_t nesting_too_deep_at(std::string_view text, int max_depth);

// JSON text to a value: an error saying where the JSON broke for empty, malformed or too
// deeply nested input. Never throws.
Result<nlohmann::json> parse_request_json(std::string_view text, int max_depth = kMaxJsonDepth);

// The member `key` of `object` (nullptr when `object` is not an object, the key is absent, or
// its value is null).
const nlohmann::json* find_field(const nlohmann::json& object, std::string_view key);

// A string member: nullopt when absent, an error when present but not a string.
Result<std::optional<std::string>> optional_string(const nlohmann::json& object,
                                                   std::string_view key, std::string_view where);

// A string member that must be present and non-empty.
Result<std::string> required_string(const nlohmann::json& object, std::string_view key,
                                    std::string_view where);

}  // namespace greensched::serve
