// A workload profile as a text table, as JSON, and as CSV files (profile_*.csv) that the
// HTML report can chart. docs/MONITORING.md describes the files and their columns.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/status.hpp"
#include "greensched/monitor/workload_profile.hpp"

namespace greensched::monitor {

std::string profile_table(const WorkloadProfile& profile, const GpuModelRegistry& models);
nlohmann::json profile_json(const WorkloadProfile& profile, const GpuModelRegistry& models);

// The CSV files as (file name, contents).
std::vector<std::pair<std::string, std::string>> profile_csvs(const WorkloadProfile& profile,
                                                              const GpuModelRegistry& models);

}  // namespace greensched::monitor
