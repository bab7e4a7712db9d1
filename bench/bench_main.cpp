// Benchmarks of the simulator on the openb default trace (../shared/data, or the directory in
// the environment variable GREENSCHED_DATA). Where the trace files are absent, the
// benchmarks run on the built-in workload (the same nodes and pod shapes, rebuilt from the
// trace's statistics) and say so in their label.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "greensched/core/rng.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/sim/simulator.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "greensched/trace/workload.hpp"

namespace {

using namespace greensched;

constexpr uint64_t kSeed = 42;
constexpr double kTune = 1.3;

std::string shared_data_dir() {
  if (const char* env = std::getenv("GREENSCHED_DATA")) return env;
  if (const char* env = std::getenv("GREENSCHED_SHARED_DATA")) return env;
  return GREENSCHED_SHARED_DATA;
}

std::string nodes_path() {
  return shared_data_dir() + "/openb/openb_node_list_gpu_node.csv";
}
std::string pods_path() {
  return shared_data_dir() + "/openb/openb_pod_list_default.csv";
}

bool have_real_trace() {
  return std::filesystem::exists(nodes_path()) && std::filesystem::exists(pods_path());
}

const char* workload_label() {
  return have_real_trace() ? "openb default trace" : "builtin workload (openb data not found)";
}

// Reads the two CSVs (or builds the built-in workload where they are absent).
Result<trace::Workload> load_workload() {
  if (have_real_trace()) return trace::load_openb_workload(nodes_path(), pods_path());
  return trace::builtin_openb_workload();
}

// The workload and its scenario (target workload, power figures), prepared once for the
// benchmarks that exclude reading.
struct Prepared {
  Result<trace::Workload> workload = load_workload();
  Result<sim::Scenario> scenario =
      workload.ok() ? sim::make_scenario(workload.value(), power::PowerModel::builtin())
                    : Result<sim::Scenario>(Error{workload.error()});
  frag::TargetWorkload target =
      workload.ok() ? frag::build_target_workload(workload.value().pods) : frag::TargetWorkload{};
};

const Prepared& prepared() {
  static const Prepared p;
  return p;
}

void set_pod_rate(benchmark::State& state, int64_t pods) {
  state.counters["pods/s"] =
      benchmark::Counter(static_cast<double>(pods), benchmark::Counter::kIsRate);
}

// (a) One FGD run, including reading the node and pod lists.
void BM_FgdRunWithRead(benchmark::State& state) {
  int64_t pods = 0;
  for (auto _ : state) {
    auto workload = load_workload();
    if (!workload.ok()) {
      state.SkipWithError(workload.error().c_str());
      break;
    }
    auto scenario = sim::make_scenario(workload.value(), power::PowerModel::builtin());
    if (!scenario.ok()) {
      state.SkipWithError(scenario.error().c_str());
      break;
    }
    auto result = sim::run_inflation(scenario.value(), sim::RunSpec("fgd", kSeed, kTune));
    if (!result.ok()) {
      state.SkipWithError(result.error().c_str());
      break;
    }
    pods += result.value().pods_arrived;
  }
  set_pod_rate(state, pods);
  state.SetLabel(have_real_trace() ? "openb default trace, incl. reading CSVs"
                                   : "builtin workload (openb data not found), incl. building it");
}
BENCHMARK(BM_FgdRunWithRead)->Unit(benchmark::kMillisecond);

// (b) and (c) One run of a policy on a workload already in memory.
void BM_PolicyRun(benchmark::State& state, const char* policy) {
  const Prepared& p = prepared();
  if (!p.scenario.ok()) {
    state.SkipWithError(p.scenario.error().c_str());
    return;
  }
  int64_t pods = 0;
  for (auto _ : state) {
    auto result = sim::run_inflation(p.scenario.value(), sim::RunSpec(policy, kSeed, kTune));
    if (!result.ok()) {
      state.SkipWithError(result.error().c_str());
      break;
    }
    pods += result.value().pods_arrived;
  }
  set_pod_rate(state, pods);
  state.SetLabel(workload_label());
}
BENCHMARK_CAPTURE(BM_PolicyRun, fgd, "fgd")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PolicyRun, random, "random")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PolicyRun, dotprod, "dotprod")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PolicyRun, clustering, "clustering")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PolicyRun, packing, "packing")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PolicyRun, bestfit, "bestfit")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PolicyRun, pwr, "pwr")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PolicyRun, pwr_fgd_mix, "pwr:200+fgd:800")->Unit(benchmark::kMillisecond);

// (b') The FGD run of (b) with bounded migration (`--migrate-budget 1`): what planning moves
// adds to a run (the planner's searches for pods that fit nowhere, and their trials).
void BM_FgdRunWithMoves(benchmark::State& state) {
  const Prepared& p = prepared();
  if (!p.scenario.ok()) {
    state.SkipWithError(p.scenario.error().c_str());
    return;
  }
  int64_t pods = 0;
  int64_t migrated = 0;
  for (auto _ : state) {
    sim::RunSpec spec("fgd", kSeed, kTune);
    spec.migrate_budget_pct = 1;
    auto result = sim::run_inflation(p.scenario.value(), spec);
    if (!result.ok()) {
      state.SkipWithError(result.error().c_str());
      break;
    }
    pods += result.value().pods_arrived;
    migrated = result.value().pods_migrated;
  }
  set_pod_rate(state, pods);
  state.counters["pods_migrated"] = static_cast<double>(migrated);
  state.SetLabel(workload_label());
}
BENCHMARK(BM_FgdRunWithMoves)->Unit(benchmark::kMillisecond);

// (d) The default matrix: 6 policies x seeds 42-51, spread over all cores.
void BM_FullMatrix(benchmark::State& state) {
  const Prepared& p = prepared();
  if (!p.workload.ok()) {
    state.SkipWithError(p.workload.error().c_str());
    return;
  }
  sim::ExperimentPlan plan;
  plan.policies = {"random", "dotprod", "clustering", "packing", "bestfit", "fgd"};
  for (uint64_t seed = 42; seed <= 51; ++seed) plan.seeds.push_back(seed);
  plan.tune = kTune;
  plan.jobs = 0;
  int64_t pods = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    auto results = sim::run_experiments(p.workload.value(), plan);
    if (!results.ok()) {
      state.SkipWithError(results.error().c_str());
      break;
    }
    for (const auto& r : results.value()) pods += r.pods_arrived;
    runs += static_cast<int64_t>(results.value().size());
  }
  set_pod_rate(state, pods);
  state.counters["runs/s"] =
      benchmark::Counter(static_cast<double>(runs), benchmark::Counter::kIsRate);
  state.SetLabel(workload_label());
}
BENCHMARK(BM_FullMatrix)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);

// (e) A 14-day replay of the 1213-node cluster at a controlled load (the job list drawn once,
// outside the timing), FGD, backfill queue: the unit of the loaded single-cluster tables.
void BM_LoadedReplay(benchmark::State& state, const char* policy, int64_t power_down_s) {
  const Prepared& p = prepared();
  if (!p.workload.ok()) {
    state.SkipWithError(p.workload.error().c_str());
    return;
  }
  trace::Workload w = p.workload.value();
  if (!have_real_trace()) trace::assign_synthetic_times(w.pods, 20230101, 28);
  const frag::TargetWorkload target = frag::build_target_workload(w.pods);
  trace::LoadSpec spec;
  spec.load_pct = static_cast<double>(state.range(0));
  int64_t gpus = 0;
  for (const NodeSpec& n : w.nodes) gpus += n.gpu_count;
  auto generated = trace::generate_load(w.pods, gpus * kGpuMilli, spec);
  if (!generated.ok()) {
    state.SkipWithError(generated.error().c_str());
    return;
  }
  w.pods = std::move(generated.value().pods);
  auto power = power::PowerModel::builtin().resolve(w.nodes, w.models);
  sim::ReplayConfig config;
  config.policy = policy;
  config.queue = sim::QueueDiscipline::kBackfill;
  config.measure_from_s = generated.value().window.start_s;
  config.measure_to_s = generated.value().window.end_s;
  config.timeline_step_s = 3600;
  config.power_down_idle_s = power_down_s;
  int64_t pods = 0;
  for (auto _ : state) {
    auto r = sim::run_replay(w, target, power.value(), 1.0, config);
    if (!r.ok()) {
      state.SkipWithError(r.error().c_str());
      break;
    }
    pods += r.value().pods_total;
  }
  set_pod_rate(state, pods);
  state.SetLabel(fmt::format("{}, {} jobs", workload_label(), w.pods.size()));
}
BENCHMARK_CAPTURE(BM_LoadedReplay, fgd, "fgd", -1)
    ->Arg(50)
    ->Arg(90)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_LoadedReplay, fgd_energy_sleep, "fgd-energy", 1800)
    ->Arg(90)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// (e) F_n(M) of one 8-GPU node state, over a fixed set of varied states.
void BM_ScaledFrag8Gpu(benchmark::State& state) {
  const Prepared& p = prepared();
  if (!p.workload.ok()) {
    state.SkipWithError(p.workload.error().c_str());
    return;
  }
  const auto model_id = p.workload.value().models.find("G2");
  if (!model_id) {
    state.SkipWithError("GPU model G2 not known");
    return;
  }
  const frag::FragmentationModel model(p.target);

  constexpr int kGpus = 8;
  constexpr int kStates = 64;
  struct NodeState {
    int64_t cpu_free_milli = 0;
    std::array<int32_t, kGpus> gpu_free{};
  };
  constexpr std::array<int32_t, 8> kShares = {1000, 1000, 1000, 0, 500, 250, 750, 100};
  std::vector<NodeState> states(kStates);
  Rng rng(kSeed);
  for (NodeState& s : states) {
    s.cpu_free_milli = 8000 * static_cast<int64_t>(1 + rng.uniform(12));
    for (int32_t& g : s.gpu_free) g = kShares[rng.uniform(kShares.size())];
  }

  std::size_t i = 0;
  for (auto _ : state) {
    const NodeState& s = states[i];
    benchmark::DoNotOptimize(
        model.scaled_frag(*model_id, kGpus, s.cpu_free_milli, s.gpu_free.data()));
    i = (i + 1) % kStates;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(workload_label());
}
BENCHMARK(BM_ScaledFrag8Gpu);

}  // namespace
