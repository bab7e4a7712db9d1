// A hand-made two-site fleet shared by the multi-cluster tests: one T4 node per site, a power
// model small enough to compute energies by hand, a job builder, and a view of a fleet at
// stated loads.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "greensched/multi/agent.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/power/power_model.hpp"
#include "test_pod.hpp"

namespace greensched::multi::fixtures {

// One T4 node per site (2 GPUs, 16 vCPU = 8 cores on one 16-core socket): idle 15 W CPU +
// 2 x 10 W GPUs = 35 W; a working core makes the socket draw 120 W, a used GPU 70 W.
inline power::PowerModel tiny_power_model() {
  auto m = power::PowerModel::parse(R"({
    "gpus": {"T4": {"idle_watts": 10, "max_watts": 70}},
    "cpus": {"c": {"idle_watts": 15, "max_watts": 120, "cores_per_socket": 16}},
    "default_cpu": "c"})",
                                    "tiny.json");
  return std::move(m.value());
}

// Sites "a" and "b", each one T4 node, with constant carbon intensities ci_a and ci_b.
inline Fleet two_sites(double ci_a, double ci_b) {
  Fleet fleet;
  const GpuModelId t4 = *fleet.models.intern("T4");
  for (const auto& [name, ci] : {std::pair{"a", ci_a}, std::pair{"b", ci_b}}) {
    SiteSpec s;
    s.name = name;
    s.nodes = {NodeSpec{std::string(name) + "/n0", 16000, 65536, 2, t4}};
    s.carbon = TimeSeries(fleet.start_s, 3600, {ci});
    fleet.sites.push_back(std::move(s));
  }
  return fleet;
}

inline PodSpec job(const char* name, int64_t cpu, int num_gpu, int32_t milli, int64_t from,
                   int64_t to, Qos qos = Qos::kBE) {
  PodSpec p = testing::test_pod(name, cpu, num_gpu, milli);
  p.creation_time = from;
  p.deletion_time = to;
  p.qos = qos;
  return p;
}

// A fleet as the plan sees it at trace time `now`: sites with constant carbon, a stated load
// each, 0.1 kW per GPU-hour, no LS reserve, the same-hour forecaster or the oracle (constant
// series: every forecast is exact).
class StatedLoadView final : public FleetView {
 public:
  StatedLoadView(Fleet fleet, std::vector<double> load, int64_t now, bool oracle)
      : fleet_(std::move(fleet)),
        load_(std::move(load)),
        now_(now),
        forecaster_(oracle ? make_oracle_forecaster() : make_same_hour_forecaster()) {}
  const Fleet& fleet() const override { return fleet_; }
  int64_t now_s() const override { return now_; }
  int64_t epoch_s(int64_t t) const override { return fleet_.start_s + t; }
  const Forecaster& forecaster() const override { return *forecaster_; }
  int64_t ls_bound_s() const override { return 600; }
  int64_t wake_delay_s() const override { return 300; }
  double load(int site) const override { return load_[static_cast<std::size_t>(site)]; }
  int64_t gpu_capacity_milli(int) const override { return 2000; }
  bool fits_now(int, const PodSpec&) const override { return true; }
  bool fits_ever(int, const PodSpec&) const override { return true; }
  double marginal_watts(int, const PodSpec&) const override { return 100; }
  double gpu_kw(int) const override { return 0.1; }
  double fragmentation_delta(int, const PodSpec&) const override { return 0; }

 private:
  Fleet fleet_;
  std::vector<double> load_;
  int64_t now_ = 0;
  std::unique_ptr<Forecaster> forecaster_;
};

}  // namespace greensched::multi::fixtures
