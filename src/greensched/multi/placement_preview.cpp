#include "greensched/multi/placement_preview.hpp"

#include <algorithm>

namespace greensched::multi {

GpuMask first_gpus(const PodSpec& pod) {
  if (!pod.needs_gpu()) return 0;
  return pod.shares_gpu() ? GpuMask{1} : (GpuMask{1} << pod.num_gpu) - 1;
}

PlacementCost placement_cost(const Cluster& cluster, const std::vector<power::NodePower>& figures,
                             const frag::FragmentationModel& frag, const PodSpec& pod,
                             NodeIndex node, GpuMask gpus, bool waking, double pue) {
  const NodeSpec& spec = cluster.spec(node);
  const NodeState& st = cluster.state(node);
  const power::NodePower& fig = figures[static_cast<std::size_t>(node)];
  auto after = st.gpu_free_milli;
  for (int g = 0; g < spec.gpu_count; ++g) {
    if ((gpus >> g) & 1U) after[g] -= pod.gpu_milli;
  }
  const double before_w =
      waking ? 0.0
             : power::node_power_watts(spec, fig, st.cpu_free_milli, st.gpu_free_milli.data());
  const double after_w =
      power::node_power_watts(spec, fig, st.cpu_free_milli - pod.cpu_milli, after.data());
  const double share_w = power::pod_floor_watts(spec, fig, pod);
  PlacementCost out;
  out.watts = std::max(after_w - before_w, share_w) * pue;
  const int64_t f_before =
      frag.scaled_frag(spec.model, spec.gpu_count, st.cpu_free_milli, st.gpu_free_milli.data());
  const int64_t f_after =
      frag.scaled_frag(spec.model, spec.gpu_count, st.cpu_free_milli - pod.cpu_milli, after.data());
  out.frag_milli = frag.to_gpu_milli(f_after - f_before);
  return out;
}

}  // namespace greensched::multi
