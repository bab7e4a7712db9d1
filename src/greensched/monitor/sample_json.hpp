// A node sample as one JSON object (one line of the monitor's --jsonl file), and back. The
// calibration reads these lines; docs/MONITORING.md describes the fields.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/monitor/node_sample.hpp"

namespace greensched::monitor {

nlohmann::json sample_to_json(const NodeSample& sample);
// `where` names the line in errors ("file:line").
Result<NodeSample> sample_from_json(const nlohmann::json& j, const std::string& where);
// Reads a JSON Lines file of samples; blank lines are skipped, a bad line is an error.
Result<std::vector<NodeSample>> read_samples_jsonl(const std::string& text,
                                                   const std::string& source);

}  // namespace greensched::monitor
