#include "greensched/monitor/workload_profile.hpp"

#include <algorithm>

namespace greensched::monitor {

namespace {

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

}  // namespace

WorkloadProfile profile_workload(std::span<const PodSpec> pods, const GpuModelRegistry& models,
                                 std::string source) {
  WorkloadProfile p;
  p.source = std::move(source);
  p.pods = static_cast<int64_t>(pods.size());
  for (int k = 0; k < kPodKinds; ++k) p.kinds[k].kind = pod_kind_name(static_cast<PodKind>(k));

  for (int b = 0; b < 10; ++b)
    p.gpu_milli.push_back(GpuMilliBin{b * 100 + 1, (b + 1) * 100, 0, 0, 0});
  p.gpu_milli[9].hi = 999;
  p.gpu_milli.push_back(GpuMilliBin{1000, 1000, 0, 0, 0});

  std::array<std::vector<double>, kPodKinds> cpu_per_gpu, mem_per_gpu, lifetime;
  std::vector<double> cpu_all, mem_all, life_all;
  std::vector<int64_t> model_pods(models.size(), 0);
  std::array<QosRow, 5> qos;
  for (Qos q : {Qos::kUnknown, Qos::kLS, Qos::kBE, Qos::kBurstable, Qos::kGuaranteed}) {
    qos[static_cast<int>(q)].qos = qos_name(q);
  }

  for (const PodSpec& pod : pods) {
    const int k = static_cast<int>(pod_kind(pod));
    const double gpus = static_cast<double>(pod.total_gpu_milli()) / kGpuMilli;
    p.kinds[k].pods += 1;
    p.kinds[k].gpus += gpus;
    p.requested_gpus += gpus;
    QosRow& q = qos[static_cast<int>(pod.qos)];
    q.pods += 1;
    q.gpus += gpus;
    if (pod.needs_gpu()) {
      ++p.gpu_pods;
      for (GpuMilliBin& b : p.gpu_milli) {
        if (pod.gpu_milli >= b.lo && pod.gpu_milli <= b.hi) {
          b.pods += 1;
          b.gpus += gpus;
        }
      }
      const double vcpu = static_cast<double>(pod.cpu_milli) / 1000.0 / gpus;
      const double gib = static_cast<double>(pod.memory_mib) / 1024.0 / gpus;
      cpu_per_gpu[k].push_back(vcpu);
      mem_per_gpu[k].push_back(gib);
      cpu_all.push_back(vcpu);
      mem_all.push_back(gib);
      if (pod.gpu_spec != 0) {
        ++p.constrained_pods;
        for (std::size_t m = 0; m < models.size(); ++m) {
          if ((pod.gpu_spec >> m) & 1U) ++model_pods[m];
        }
      }
    }
    if (pod.creation_time >= 0 && pod.deletion_time >= 0) {
      ++p.timed_pods;
      const double h = static_cast<double>(pod.deletion_time - pod.creation_time) / 3600.0;
      lifetime[k].push_back(h);
      life_all.push_back(h);
    }
    if (pod.creation_time >= 0) {
      p.arrivals_by_hour[static_cast<std::size_t>((pod.creation_time / 3600) % 24)] += 1;
      const auto day = static_cast<std::size_t>(pod.creation_time / 86400);
      if (p.arrivals_by_day.size() <= day) p.arrivals_by_day.resize(day + 1, 0);
      p.arrivals_by_day[day] += 1;
    }
  }

  for (KindRow& k : p.kinds) {
    k.pod_share = ratio(static_cast<double>(k.pods), static_cast<double>(p.pods));
    k.gpu_share = ratio(k.gpus, p.requested_gpus);
  }
  for (GpuMilliBin& b : p.gpu_milli) {
    b.pod_share = ratio(static_cast<double>(b.pods), static_cast<double>(p.gpu_pods));
  }
  for (int k = 1; k < kPodKinds; ++k) {
    const char* name = pod_kind_name(static_cast<PodKind>(k));
    p.cpu_per_gpu.push_back(DistributionRow{name, trace::describe(cpu_per_gpu[k])});
    p.memory_per_gpu.push_back(DistributionRow{name, trace::describe(mem_per_gpu[k])});
  }
  p.cpu_per_gpu.push_back(DistributionRow{"gpu_pods", trace::describe(cpu_all)});
  p.memory_per_gpu.push_back(DistributionRow{"gpu_pods", trace::describe(mem_all)});
  const int64_t unconstrained = p.gpu_pods - p.constrained_pods;
  p.gpu_models.push_back(
      ModelRow{"any", unconstrained,
               ratio(static_cast<double>(unconstrained), static_cast<double>(p.gpu_pods))});
  for (std::size_t m = 0; m < models.size(); ++m) {
    if (model_pods[m] == 0) continue;
    p.gpu_models.push_back(
        ModelRow{models.name(static_cast<GpuModelId>(m)), model_pods[m],
                 ratio(static_cast<double>(model_pods[m]), static_cast<double>(p.gpu_pods))});
  }
  for (QosRow& q : qos) {
    if (q.pods == 0) continue;
    q.pod_share = ratio(static_cast<double>(q.pods), static_cast<double>(p.pods));
    q.gpu_share = ratio(q.gpus, p.requested_gpus);
    p.qos.push_back(q);
  }
  if (p.timed_pods > 0) {
    for (int k = 0; k < kPodKinds; ++k) {
      p.lifetime_hours.push_back(
          DistributionRow{pod_kind_name(static_cast<PodKind>(k)), trace::describe(lifetime[k])});
    }
    p.lifetime_hours.push_back(DistributionRow{"all", trace::describe(life_all)});
  }
  p.target = frag::build_target_workload(pods);
  return p;
}

}  // namespace greensched::monitor
