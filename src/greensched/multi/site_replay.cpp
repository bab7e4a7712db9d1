#include "greensched/multi/site_replay.hpp"

#include <utility>

#include <fmt/format.h>

#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::multi {

std::string site_signature(const SiteSpec& site) {
  std::string signature = fmt::format("{}|{}", site.policy, site.pue);
  for (const NodeSpec& n : site.nodes) {
    signature += fmt::format("|{},{},{},{}", n.cpu_milli, n.memory_mib, n.gpu_count, n.model);
  }
  return signature;
}

Result<SiteReplay> replay_site(const Fleet& fleet, const SiteSpec& site,
                               std::span<const PodSpec> templates, uint32_t shape_count,
                               const frag::TargetWorkload& target,
                               const std::vector<power::NodePower>& figures, uint64_t seed,
                               double load_pct, double days, int64_t timeline_step_s) {
  trace::LoadSpec spec;
  spec.load_pct = load_pct;
  spec.days = days;
  spec.warmup_days = 1;
  spec.seed = seed;
  auto generated = trace::generate_load(templates, site_gpu_milli(site), spec);
  if (!generated.ok()) return Error{fmt::format("site {}: {}", site.name, generated.error())};
  trace::Workload workload;
  workload.models = fleet.models;
  workload.nodes = site.nodes;
  workload.pods = std::move(generated.value().pods);
  workload.shape_count = shape_count;
  sim::ReplayConfig config;
  config.policy = site.policy;
  config.seed = seed;
  config.queue = sim::QueueDiscipline::kBackfill;
  config.measure_from_s = generated.value().window.start_s;
  config.measure_to_s = generated.value().window.end_s;
  config.timeline_step_s = timeline_step_s;
  auto r = sim::run_replay(workload, target, figures, site.pue, config);
  if (!r.ok()) return Error{fmt::format("site {}: {}", site.name, r.error())};
  return SiteReplay{generated.value().window, std::move(workload.pods), std::move(r.value())};
}

}  // namespace greensched::multi
