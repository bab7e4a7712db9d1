// Plain-English explanations of scheduling decisions, rendered from decision records (see
// sim/decision_record.hpp) by fixed templates: every number in the text comes from the record.
//   placed pod:  the node and GPUs, the score terms that decided it, the margin over the
//                runner-up, the fragmentation and power change, why the others could not;
//   failed pod:  a kube-scheduler style summary ("0/1213 nodes are available: ..."), our
//                diagnosis (GPU share split across GPUs), and the smallest change that would
//                have let it fit;
//   dispatch:    (multi-cluster) why a job went to a site or was deferred.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::explain {

// One line of a decision record file (JSON Lines) to a record that explain_text and
// explain_facts can read: every field they use is present where needed and of the right type.
// Errors read "WHERE: KEY: reason" (WHERE is usually file:line).
Result<nlohmann::json> parse_decision_record(std::string_view line, std::string_view where);

// The same checks for a record already parsed; errors name the key.
Status check_decision_record(const nlohmann::json& record);

// True for a placement record of a pod that could not be placed: its chosen_node is absent or
// null. A dispatch record (kind "dispatch") or a drain (kind "drain") is never one. `explain
// --failed` and the report's failed pods both count by this rule.
bool is_failed_placement(const nlohmann::json& record);
// Whether the record is about pod `pod`: its own decision, or one that moved it to make room
// for another (rescued_by_moves) or to empty its node (a drain).
bool record_about_pod(const nlohmann::json& record, std::string_view pod);

std::string explain_text(const nlohmann::json& record);

// A number as the sentences write it: at most `decimals` decimals, no trailing zeros
// (2.50 -> "2.5", 3.00 -> "3", -0 -> "0").
std::string sentence_number(double v, int decimals = 2);

// The same facts as one JSON object: always `pod`, `placed`; for a failed pod `nodes_total`
// and `reason_counts` {reason: nodes}; `sentences` holds the text, one sentence per entry.
nlohmann::json explain_facts(const nlohmann::json& record);

}  // namespace greensched::explain
