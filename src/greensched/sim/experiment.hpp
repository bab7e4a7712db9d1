// A matrix of independent runs (policies x seeds) spread over worker threads. Results come
// back in plan order (policy-major, then seed) whatever order the runs finish in, so outputs
// are the same for any number of workers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/simulator.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::sim {

struct ExperimentPlan {
  std::vector<std::string> policies;  // names or mixes ("pwr:200+fgd:800")
  std::vector<uint64_t> seeds;
  double tune = 1.3;
  int jobs = 0;  // worker threads; 0 = all cores
  power::PowerModel power_model = power::PowerModel::builtin();
  std::string gpu_select;         // for mixes; "" = FGD's rule when fgd is in the mix
  bool record = false;            // decision records for every run
  int snapshot_pct = -1;          // >= 0: GPU occupancy snapshot of each policy's first seed
  double migrate_budget_pct = 0;  // bounded migration (RunSpec::migrate_budget_pct)
  defrag::PlannerLimits move_limits;
  // Only the runs [first_run, end_run) of the plan (policy-major order): one shard of it.
  std::size_t first_run = 0;
  std::size_t end_run = static_cast<std::size_t>(-1);
};

// Called after each finished run, from one thread at a time.
using ProgressFn = std::function<void(std::size_t done, std::size_t total, const RunResult&)>;

Result<std::vector<RunResult>> run_experiments(const trace::Workload& workload,
                                               const ExperimentPlan& plan,
                                               const ProgressFn& progress = {});

}  // namespace greensched::sim

namespace greensched::sim {

// "42", "42-51", "1,5,10-12" -> seeds in the order given. Ranges are inclusive.
Result<std::vector<uint64_t>> parse_seed_list(std::string_view text);
// "30,50.5" -> {30, 50.5}: a command-line list of numbers, each in [min, max] (min excluded
// when `min_excluded`); errors name `option` and the item.
Result<std::vector<double>> parse_number_list(std::string_view text, std::string_view option,
                                              double min, double max, bool min_excluded);
// "a,b,,c" -> {"a", "b", "", "c"}: the items of a command-line list.
std::vector<std::string_view> split_commas(std::string_view text);
// "fgd,bestfit,pwr:200+fgd:800" or "all" (every built-in policy) -> policy specs, checked
// against the catalogue.
Result<std::vector<std::string>> parse_policy_list(std::string_view text);

}  // namespace greensched::sim
