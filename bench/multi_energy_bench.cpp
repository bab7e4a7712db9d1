// The site energy table of README "Energy management across sites": examples/fleet-energy.json
// at 70 % fleet load (14 days after a 1-day warm-up), agents local and green-cost run in
// parallel on 2 cores, each followed by the none, greedy, mpc and oracle site controllers:
// 8 rows. Needs the shared data (../shared/data or GREENSCHED_SHARED_DATA); skipped without.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "greensched/core/parallel_for.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/site_controller.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/workload.hpp"

namespace {

using namespace greensched;

std::string data_dir() {
  if (const char* env = std::getenv("GREENSCHED_SHARED_DATA")) return env;
  return GREENSCHED_SHARED_DATA;
}

void BM_MultiEnergyTable(benchmark::State& state) {
  const std::string fleet_path = std::string(GREENSCHED_SOURCE_DIR) + "/examples/fleet-energy.json";
  const std::string pods_path = data_dir() + "/openb/openb_pod_list_default.csv";
  if (!std::filesystem::exists(pods_path)) {
    state.SkipWithError("shared data not found (openb pod list)");
    return;
  }
  auto fleet = multi::load_fleet(fleet_path, data_dir());
  if (!fleet.ok()) {
    state.SkipWithError(fleet.error().c_str());
    return;
  }
  auto pods = trace::read_openb_pods(pods_path, fleet.value().models);
  if (!pods.ok()) {
    state.SkipWithError(pods.error().c_str());
    return;
  }
  const uint32_t shapes = trace::assign_shape_ids(pods.value());
  int64_t capacity = 0;
  for (const auto& site : fleet.value().sites) {
    for (const NodeSpec& n : site.nodes) capacity += int64_t{n.gpu_count} * kGpuMilli;
  }
  trace::LoadSpec spec;
  spec.load_pct = 70;
  spec.days = 14;
  spec.warmup_days = 1;
  spec.seed = 42;
  auto load = trace::generate_load(pods.value(), capacity, spec);
  if (!load.ok()) {
    state.SkipWithError(load.error().c_str());
    return;
  }
  const std::vector<std::string> agents = {"local", "green-cost"};
  energy::ControllerOptions controller;
  controller.forecast_days = 7;
  for (auto _ : state) {
    std::vector<multi::MultiResult> results(agents.size());
    Status s = parallel_for(agents.size(), 2, [&](std::size_t i) -> Status {
      multi::MultiOptions o;
      o.agent = agents[i];
      o.power_down_idle_s = 1800;
      o.measure_from_s = load.value().window.start_s;
      o.measure_to_s = load.value().window.end_s;
      o.target_load_pct = 70;
      auto r = multi::run_fleet(fleet.value(), load.value().pods, shapes, o);
      if (!r.ok()) return Error{r.error()};
      for (auto kind : {energy::ControllerKind::kNone, energy::ControllerKind::kGreedy,
                        energy::ControllerKind::kMpc, energy::ControllerKind::kOracle}) {
        auto e = multi::run_site_controllers(fleet.value(), r.value(), kind, controller);
        if (!e.ok()) return Error{e.error()};
        r.value().energy.push_back(std::move(e.value()));
      }
      results[i] = std::move(r.value());
      return Status::Ok();
    });
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(results);
  }
}
BENCHMARK(BM_MultiEnergyTable)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
