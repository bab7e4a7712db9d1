// The fleet of README "Multi-cluster coordination": examples/fleet-4-regions.json at 70 %
// fleet load (14 days after a 1-day warm-up), default pod list, seed 42. BM_FleetAgent runs one
// agent over it (12 h slack, nodes powered down after 30 idle minutes): green-plan's target is
// at most twice local's time. BM_FleetBound solves the bound (the day-block LP and the
// whole-job dual) for one slack (0 or 12 h) with the sites' capacity given;
// BM_FleetSiteCapacity measures that capacity (a saturated replay of one site, the four being
// alike).
// Needs the shared data (../shared/data or GREENSCHED_DATA); skipped without.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "greensched/multi/fleet_bound.hpp"
#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/workload.hpp"

namespace {

using namespace greensched;

struct BoundInputs {
  multi::Fleet fleet;
  std::vector<PodSpec> templates;
  uint32_t shapes = 0;
  trace::GeneratedLoad load;
  std::vector<int> homes;
};

// Read once for every benchmark of the file; nullopt (and why) without the shared data.
const std::optional<BoundInputs>& inputs(std::string& why) {
  static std::string error;
  static const std::optional<BoundInputs> made = []() -> std::optional<BoundInputs> {
    const char* env = std::getenv("GREENSCHED_DATA");
    if (env == nullptr) env = std::getenv("GREENSCHED_SHARED_DATA");
    const std::string data = env ? env : GREENSCHED_SHARED_DATA;
    const std::string pods_path = data + "/openb/openb_pod_list_default.csv";
    if (!std::filesystem::exists(pods_path)) {
      error = "shared data not found (openb pod list)";
      return std::nullopt;
    }
    auto fleet = multi::load_fleet(
        std::string(GREENSCHED_SOURCE_DIR) + "/examples/fleet-4-regions.json", data);
    if (!fleet.ok()) {
      error = fleet.error();
      return std::nullopt;
    }
    auto pods = trace::read_openb_pods(pods_path, fleet.value().models);
    if (!pods.ok()) {
      error = pods.error();
      return std::nullopt;
    }
    BoundInputs in{std::move(fleet.value()), std::move(pods.value()), 0, {}, {}};
    in.shapes = trace::assign_shape_ids(in.templates);
    int64_t capacity = 0;
    for (const auto& site : in.fleet.sites) capacity += multi::site_gpu_milli(site);
    trace::LoadSpec spec;
    spec.load_pct = 70;
    auto load = trace::generate_load(in.templates, capacity, spec);
    if (!load.ok()) {
      error = load.error();
      return std::nullopt;
    }
    in.load = std::move(load.value());
    in.homes = multi::fleet_home_sites(in.fleet, in.load.pods.size(), 42);
    return in;
  }();
  why = error;
  return made;
}

void BM_FleetAgent(benchmark::State& state, const char* agent) {
  std::string why;
  const auto& in = inputs(why);
  if (!in) {
    state.SkipWithError(why.c_str());
    return;
  }
  multi::MultiOptions o;
  o.agent = agent;
  o.seed = 42;
  o.be_slack_s = 12 * 3600;
  o.power_down_idle_s = 1800;
  o.measure_from_s = in->load.window.start_s;
  o.measure_to_s = in->load.window.end_s;
  o.target_load_pct = 70;
  for (auto _ : state) {
    auto r = multi::run_fleet(in->fleet, in->load.pods, in->shapes, o);
    if (!r.ok()) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    state.counters["carbon_t"] = r.value().carbon_kg / 1000;
  }
}
BENCHMARK_CAPTURE(BM_FleetAgent, local, "local")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_FleetAgent, green_plan, "green-plan")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

void BM_FleetBound(benchmark::State& state) {
  std::string why;
  const auto& in = inputs(why);
  if (!in) {
    state.SkipWithError(why.c_str());
    return;
  }
  multi::FleetBoundOptions o;
  o.be_slack_s = state.range(0) * 3600;
  o.site_fill.assign(in->fleet.sites.size(), 0.979);  // BM_FleetSiteCapacity's figures
  o.site_gpu_kw.assign(in->fleet.sites.size(), 0.2297);
  o.measure_from_s = in->load.window.start_s;
  o.measure_to_s = in->load.window.end_s;
  for (auto _ : state) {
    auto r = multi::fleet_bound(in->fleet, in->load.pods, in->homes, o);
    if (!r.ok()) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    state.counters["pieces"] = static_cast<double>(r.value().pieces);
    state.counters["carbon_vs_local_pct"] = r.value().carbon_vs_local_pct();
  }
}
BENCHMARK(BM_FleetBound)
    ->Arg(0)
    ->Arg(12)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

void BM_FleetSiteCapacity(benchmark::State& state) {
  std::string why;
  const auto& in = inputs(why);
  if (!in) {
    state.SkipWithError(why.c_str());
    return;
  }
  for (auto _ : state) {
    auto r = multi::measure_site_capacity(in->fleet, in->templates, in->shapes,
                                          power::PowerModel::builtin(), 42);
    if (!r.ok()) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    state.counters["capacity_pct"] = 100 * r.value().front().fill;
    state.counters["gpu_kw"] = r.value().front().gpu_kw;
  }
}
BENCHMARK(BM_FleetSiteCapacity)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
