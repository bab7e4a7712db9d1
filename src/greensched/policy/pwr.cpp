#include "greensched/policy/gpu_select.hpp"
#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

// PWR (Lettich et al., CCGrid'25): raw = int(node power before - node power after placing the
// pod), <= 0 watts; a sharing pod tries every fitting GPU and keeps the best (first index among
// equals). Min-max normalised over the feasible nodes; all equal gives all 100.
//
// Only two things change with a placement: the CPU sockets (the same whichever GPU is chosen)
// and the GPUs that go from fully free (idle) to in use (max). So a sharing pod's best GPU is
// the first fitting GPU already in use (no GPU powers up), else the first fully free one.
class PwrPolicy final : public Policy {
 public:
  explicit PwrPolicy(std::shared_ptr<const std::vector<power::NodePower>> power)
      : power_(std::move(power)) {}

  std::string_view name() const override { return "pwr"; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng&) override {
    for (Candidate& c : candidates) c.raw = best_on(cluster, c.node, pod).first;
  }

  void normalize(std::span<Candidate> candidates) const override {
    normalize_min_max(candidates, 100);
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    if (!pod.shares_gpu()) return Policy::select_gpus(cluster, node, pod, rng);
    return best_on(cluster, node, pod).second;
  }

 private:
  // (raw score, GPU mask for a sharing pod).
  std::pair<int64_t, GpuMask> best_on(const Cluster& cluster, NodeIndex node,
                                      const PodSpec& pod) const {
    const NodeSpec& spec = cluster.spec(node);
    const NodeState& s = cluster.state(node);
    const power::NodePower& figures = (*power_)[node];
    const double cpu_before = power::cpu_power_watts(spec, figures.cpu, s.cpu_free_milli);
    const double cpu_after =
        power::cpu_power_watts(spec, figures.cpu, s.cpu_free_milli - pod.cpu_milli);
    const double gpu_up = figures.gpu.max_watts - figures.gpu.idle_watts;
    double gpus_powering_up = 0;
    GpuMask mask = 0;
    if (pod.shares_gpu()) {
      int first_free = -1;
      for (int g = 0; g < spec.gpu_count && mask == 0; ++g) {
        const int32_t f = s.gpu_free_milli[g];
        if (f < pod.gpu_milli) continue;
        if (f < kGpuMilli) {
          mask = GpuMask{1} << g;
        } else if (first_free < 0) {
          first_free = g;
        }
      }
      if (mask == 0 && first_free >= 0) {
        mask = GpuMask{1} << first_free;
        gpus_powering_up = 1;
      }
    } else if (pod.needs_gpu()) {
      gpus_powering_up = pod.num_gpu;
    }
    // Same arithmetic as before - after on whole-node power (all terms are whole watts).
    const double delta = (cpu_before - cpu_after) - gpus_powering_up * gpu_up;
    return {static_cast<int64_t>(delta), mask};
  }

  std::shared_ptr<const std::vector<power::NodePower>> power_;
};

}  // namespace

std::unique_ptr<Policy> make_pwr_policy(
    std::shared_ptr<const std::vector<power::NodePower>> power) {
  return std::make_unique<PwrPolicy>(std::move(power));
}

}  // namespace greensched::policy
