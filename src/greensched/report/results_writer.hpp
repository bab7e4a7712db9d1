// Writers for simulation results: curves.csv (one row per policy, seed and arrived-% bin),
// summary.csv (one row per policy and seed) and a readable table (means over seeds).
// Column names are stable; new columns are only ever appended.
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "greensched/core/status.hpp"
#include "greensched/sim/simulator.hpp"

namespace greensched::report {

void write_curves_csv(std::ostream& out, std::span<const sim::RunResult> results);
void write_summary_csv(std::ostream& out, std::span<const sim::RunResult> results);

// occupancy.csv: policy,seed,arrived_gpu_pct,node,model,gpu,used_milli for runs that kept a
// snapshot (one row per GPU).
void write_occupancy_csv(std::ostream& out, const trace::Workload& workload,
                         std::span<const sim::RunResult> results);

// Writes curves.csv and summary.csv into `dir` (created if needed), and occupancy.csv when a
// run kept a snapshot.
Status write_results(const std::string& dir, std::span<const sim::RunResult> results,
                     const trace::Workload* workload = nullptr);

// One line per policy (in first-appearance order): mean over seeds of GPU allocation at 90,
// 100 and 130 % arrival, fragmentation and power at 100 %, failed pods and run time; with
// `by_model`, a second table of power at 100 % by the nodes' GPU model.
std::string summary_table(std::span<const sim::RunResult> results, bool by_model = false);

}  // namespace greensched::report
