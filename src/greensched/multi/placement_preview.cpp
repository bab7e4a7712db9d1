#include "greensched/multi/placement_preview.hpp"

#include <algorithm>
#include <limits>

#include "greensched/policy/filter.hpp"

namespace greensched::multi {

bool fits_now(const Cluster& c, const PodSpec& pod) {
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
    if (policy::filter_node(c.spec(n), c.state(n), pod) == policy::FilterReason::kFits) return true;
  }
  return false;
}

bool fits_empty_node(const NodeSpec& node, const PodSpec& pod) {
  if (pod.cpu_milli > node.cpu_milli || pod.memory_mib > node.memory_mib) return false;
  return !pod.needs_gpu() ||
         (node.gpu_count >= pod.num_gpu && model_allowed(pod.gpu_spec, node.model));
}

bool fits_ever(const Cluster& c, const PodSpec& pod) {
  for (const NodeSpec& spec : c.specs()) {
    if (fits_empty_node(spec, pod)) return true;
  }
  return false;
}

double least_floor_watts(const Cluster& c, const std::vector<power::NodePower>& figures,
                         const PodSpec& pod) {
  double watts = std::numeric_limits<double>::infinity();
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
    const NodeSpec& spec = c.spec(n);
    if (pod.cpu_milli > spec.cpu_milli) continue;
    if (pod.needs_gpu() &&
        (spec.gpu_count < pod.num_gpu || !model_allowed(pod.gpu_spec, spec.model))) {
      continue;
    }
    watts =
        std::min(watts, power::pod_floor_watts(spec, figures[static_cast<std::size_t>(n)], pod));
  }
  return watts;
}

GpuMask first_gpus(const PodSpec& pod) {
  if (!pod.needs_gpu()) return 0;
  return pod.shares_gpu() ? GpuMask{1} : (GpuMask{1} << pod.num_gpu) - 1;
}

PlacementCost placement_cost(const Cluster& cluster, const std::vector<power::NodePower>& figures,
                             const frag::FragmentationModel& frag, const PodSpec& pod,
                             NodeIndex node, GpuMask gpus, bool waking, double pue,
                             std::optional<int64_t> frag_before) {
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
  const int64_t f_before = frag_before
                               ? *frag_before
                               : frag.scaled_frag(spec.model, spec.gpu_count, st.cpu_free_milli,
                                                  st.gpu_free_milli.data());
  const int64_t f_after =
      frag.scaled_frag(spec.model, spec.gpu_count, st.cpu_free_milli - pod.cpu_milli, after.data());
  out.frag_milli = frag.to_gpu_milli(f_after - f_before);
  return out;
}

}  // namespace greensched::multi
