// A fleet: GPU clusters (sites) in different regions, each with its own grid carbon
// intensity over time, optional electricity price, PUE, the network cost of moving a job's
// data there, and the local scheduling policy it runs. Loaded from a JSON fleet file or built
// in (synthetic carbon curves with the shape of real ones, so it runs with no files).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/node.hpp"
#include "greensched/core/status.hpp"
#include "greensched/multi/site_energy.hpp"
#include "greensched/multi/time_series.hpp"
#include "greensched/sim/queue_discipline.hpp"

namespace greensched::multi {

struct NetworkCost {
  double bandwidth_gbps = 10.0;      // into this site
  double energy_kwh_per_gb = 0.006;  // network energy to move one GB here
  double latency_s = 1.0;            // fixed setup time of a move
  // Seconds to move `gb` gigabytes here.
  double transfer_seconds(double gb) const {
    return gb <= 0 ? 0.0 : latency_s + gb * 8.0 / bandwidth_gbps;
  }
};

struct SiteSpec {
  std::string name;
  std::vector<NodeSpec> nodes;       // names prefixed with "<site>/"
  TimeSeries carbon;                 // gCO2/kWh
  std::optional<TimeSeries> price;   // currency units per kWh (USD from an `energy` block)
  double pue = 1.0;                  // facility / IT power; energy->pue per hour with cooling
  std::optional<SiteEnergy> energy;  // on-site generation, battery, feed-in, cooling
  NetworkCost network;
  std::string policy = "fgd";  // any policy spec of policy/registry.hpp
  // The site's queue order: latency-sensitive jobs first, then best-effort ones, each
  // backfilled (priority); or fifo, or backfill (sim/site_engine.hpp).
  sim::QueueDiscipline queue = sim::QueueDiscipline::kPriority;
  std::string carbon_source;  // where the carbon series came from, for reports
  // The zone of the built-in holiday calendar (forecast/holidays.hpp) whose public holidays the
  // site's learned forecasts read; empty: none (their holiday features are missing values).
  std::string holidays;

  // PUE in force at epoch second t.
  double pue_at(int64_t t) const {
    return energy && !energy->pue.empty() ? energy->pue.at(t) : pue;
  }
};

struct Fleet {
  GpuModelRegistry models;
  std::vector<SiteSpec> sites;
  int64_t start_s = 1672531200;  // trace time 0 (default 2023-01-01T00:00Z)
  std::string source;
};

// Reads a fleet file. Relative data paths are resolved against `data_dir` (as the shared
// data is laid out: openb/..., carbon/...). Errors name the file and the key.
Result<Fleet> load_fleet(const std::string& path, const std::string& data_dir);
Result<Fleet> parse_fleet(std::string_view json_text, const std::string& source,
                          const std::string& data_dir);

// Four regions on synthetic carbon curves (a wind-driven grid, a low-carbon grid, a solar
// grid, and a flat high-carbon grid), each a quarter of the built-in openb cluster.
Fleet builtin_fleet();

// Keeps round(count x scale) nodes of every node type (same model, GPUs, CPU, memory), in
// their original order; scale > 1 replicates. Names get the prefix "<prefix>/" and a copy
// suffix when replicated.
std::vector<NodeSpec> scale_nodes(const std::vector<NodeSpec>& nodes, double scale,
                                  const std::string& prefix);

}  // namespace greensched::multi
