// Plain-English explanations of scheduling decisions, rendered from decision records (see
// decision_record.hpp) by fixed templates: every number in the text comes from the record.
//   placed pod:  the node and GPUs, the score terms that decided it, the margin over the
//                runner-up, the fragmentation and power change, why the others could not;
//   failed pod:  a kube-scheduler style summary ("0/1213 nodes are available: ..."), our
//                diagnosis (GPU share split across GPUs), and the smallest change that would
//                have let it fit;
//   dispatch:    (multi-cluster) why a job went to a site or was deferred.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace greensched::explain {

std::string explain_text(const nlohmann::json& record);

// The same facts as one JSON object: always `pod`, `placed`; for a failed pod `nodes_total`
// and `reason_counts` {reason: nodes}; `sentences` holds the text, one sentence per entry.
nlohmann::json explain_facts(const nlohmann::json& record);

}  // namespace greensched::explain
