// Placeholders: a narrator that can be held to a JSON schema writes its text with every number
// and name as a placeholder naming a fact ("{margin}"), and greensched fills the values in with
// the template's own formatting and units. The model then chooses words, never digits.
//   placeholder_values  each fact as the template would print it, by its key path
//                       ("request.cpu_milli" -> "3.15 vCPU", "alternatives[1].site" -> "gb");
//   with_placeholders   the template's text with those values replaced by their keys, for
//                       the model to reword;
//   fill_placeholders   the model's text with the values put back, or which key is unknown;
//   check_reply         the whole check of a reply: the JSON asked for (placeholders filled,
//                       cited keys known) or, where the reply is not that JSON, prose; then
//                       the guard (narration_guard.hpp) on the text that would be shown.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/explain/narration_guard.hpp"

namespace greensched::explain {

// {key path: text} for every number and string of `facts` but its sentences.
nlohmann::json placeholder_values(const nlohmann::json& facts);

std::string with_placeholders(std::string_view text, const nlohmann::json& values);

Result<std::string> fill_placeholders(std::string_view text, const nlohmann::json& values);

// The schema a placeholder reply follows: {"text": string, "facts": [known key, ...]}, in that
// order (a grammar built from it follows it).
nlohmann::ordered_json placeholder_schema(const nlohmann::json& values);

// `content` and `finish_reason` as the server gave them; `asked_json`: whether the request
// asked for the placeholder JSON. The verdict's `text` is what may be shown when accepted.
GuardVerdict check_reply(std::string_view content, std::string_view finish_reason,
                         const nlohmann::json& facts, bool asked_json);

}  // namespace greensched::explain
