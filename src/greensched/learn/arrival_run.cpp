#include "greensched/learn/arrival_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "greensched/core/cluster.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/trace/inflation.hpp"

namespace greensched::learn {

Result<sim::RunResult> run_arrivals(const sim::Scenario& scenario, const sim::RunSpec& spec,
                                    std::span<const uint32_t> arrivals, Rng& rng,
                                    const PolicyMaker& make) {
  const auto start = std::chrono::steady_clock::now();
  const trace::Workload& workload = *scenario.workload;
  sim::RunResult result;
  result.spec = spec;
  Cluster cluster(workload.nodes);
  result.cluster_gpu_milli = cluster.total_gpu_milli();

  auto model = std::make_shared<frag::FragmentationModel>(scenario.target);
  policy::PolicyContext context;
  context.frag = model;
  context.shape_count = workload.shape_count;
  context.power = scenario.power;
  context.gpu_select = spec.gpu_select;
  auto policy = make ? make(context) : policy::make_policy(spec.policy, context);
  if (!policy.ok()) return Error{policy.error()};
  policy::Scheduler scheduler(*policy.value(), policy::random_tie_rank(cluster.size(), rng));
  frag::ClusterFragmentation fragmentation(*model, cluster);
  power::ClusterPower power(*scenario.power, cluster);
  sim::ArrivalCurve curve(cluster.total_gpu_milli(),
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
      power.update(cluster, d.node);
      ++result.pods_scheduled;
    } else {
      ++result.pods_failed;
    }
    curve.record(result.arrived_gpu_milli, cluster.allocated_gpu_milli(), fragmentation.gpu_milli(),
                 power.watts() * scenario.pue);
    ++step;
  }
  result.allocated_gpu_milli = cluster.allocated_gpu_milli();
  result.curve = curve.points();
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

Result<sim::RunResult> run_inflation_with(const sim::Scenario& scenario, const sim::RunSpec& spec,
                                          const PolicyMaker& make) {
  Cluster probe(scenario.workload->nodes);
  Rng rng(spec.seed);
  const std::vector<uint32_t> arrivals =
      trace::inflate(scenario.workload->pods, spec.tune, probe.total_gpu_milli(), rng);
  return run_arrivals(scenario, spec, arrivals, rng, make);
}

Status parallel_for(std::size_t count, int jobs, const std::function<Status(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::size_t error_index = count;
  std::string error;
  auto worker = [&] {
    while (!failed.load()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      Status s = fn(i);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (i < error_index) {
          error_index = i;
          error = s.message();
        }
        failed.store(true);
      }
    }
  };
  unsigned threads =
      jobs > 0 ? static_cast<unsigned>(jobs) : std::max(1U, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max<std::size_t>(count, 1)));
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
  }
  if (failed.load()) return Error{error};
  return Status::Ok();
}

}  // namespace greensched::learn
