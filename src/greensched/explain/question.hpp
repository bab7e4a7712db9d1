// A person's question about a decision record ("why was builtin-pod-0042 not put on
// builtin-node-7?"): the names it gives (pods, nodes, sites) pick the records whose facts a
// narrator may answer from, and those facts, with the question, are what the guard checks the
// answer against. Nothing here guesses: a question that names nothing in the record finds
// nothing.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace greensched::explain {

// The name-like words of a question: runs of letters, digits and - _ / . that hold a digit or
// a '-' ("builtin-pod-0042", "de-lu", "default/train-1"), without a trailing '.'.
std::set<std::string> question_names(std::string_view question);

// How a record relates to the names: 2 where its pod (job) is named; 1 where a node or site
// it decided on or weighed is (chosen node, runner-up, candidates, home site, site,
// alternatives); 0 where none is.
int question_match(const nlohmann::json& record, const std::set<std::string>& names);

// The facts of the records found, for the narrator and the guard: one record's facts with
// "question" added, or, for several, {"question", "sentences": all of theirs, "decisions":
// their facts without sentences}.
nlohmann::json question_facts(std::string_view question,
                              const std::vector<nlohmann::json>& records);

}  // namespace greensched::explain
