#include "greensched/sim/simulator.hpp"

#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/trace/inflation.hpp"

namespace greensched::sim {

Result<RunResult> run_inflation(const trace::Workload& workload, const frag::TargetWorkload& target,
                                const RunSpec& spec) {
  const auto start = std::chrono::steady_clock::now();
  RunResult result;
  result.spec = spec;

  Cluster cluster(workload.nodes);
  result.cluster_gpu_milli = cluster.total_gpu_milli();
  // One generator drives, in this order: the pod shuffle and tuning sample, the node tie
  // order, and the policy's own draws.
  Rng rng(spec.seed);
  const std::vector<uint32_t> arrivals =
      trace::inflate(workload.pods, spec.tune, cluster.total_gpu_milli(), rng);

  auto model = std::make_shared<frag::FragmentationModel>(target);
  policy::PolicyContext context;
  context.frag = model;
  context.shape_count = workload.shape_count;
  auto policy = policy::make_policy(spec.policy, context);
  if (!policy.ok()) return Error{policy.error()};
  policy::Scheduler scheduler(*policy.value(), policy::random_tie_rank(cluster.size(), rng));
  frag::ClusterFragmentation fragmentation(*model, cluster);
  ArrivalCurve curve(cluster.total_gpu_milli(),
                     static_cast<int>(std::ceil(spec.tune * 100.0 - 1e-9)));

  PodId step = 0;
  for (const uint32_t index : arrivals) {
    const PodSpec& pod = workload.pods[index];
    const policy::Decision d = scheduler.schedule(cluster, pod, rng);
    ++result.pods_arrived;
    result.arrived_gpu_milli += pod.total_gpu_milli();
    if (d.node >= 0) {
      if (Status s = cluster.allocate(step, pod, d.node, d.gpus); !s.ok()) {
        return Error{
            fmt::format("policy {} made an invalid placement: {}", spec.policy, s.message())};
      }
      fragmentation.update(cluster, d.node);
      ++result.pods_scheduled;
    } else {
      ++result.pods_failed;
    }
    curve.record(result.arrived_gpu_milli, cluster.allocated_gpu_milli(),
                 fragmentation.gpu_milli());
    ++step;
  }
  result.allocated_gpu_milli = cluster.allocated_gpu_milli();
  result.curve = curve.points();
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace greensched::sim
