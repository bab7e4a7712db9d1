#include "greensched/policy/policies.hpp"

namespace greensched::policy {
namespace {

// score = int(100 * (1 - (c/Cmax * rc/Cmax + g/Gmax * rg/Gmax) / 2)) with c, g the node's free
// CPU and summed free GPU share and rc, rg the pod's requests.
class DotProductPolicy final : public Policy {
 public:
  std::string_view name() const override { return "dotprod"; }
  bool scores_by_class() const override { return true; }
  uint32_t class_key_parts() const override { return 0; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
             Rng&) override {
    const double cpu_req = static_cast<double>(pod.cpu_milli) / kMaxSpecCpuMilli;
    const double gpu_req = static_cast<double>(pod.total_gpu_milli()) / kMaxSpecGpuMilli;
    for (Candidate& c : candidates) {
      const NodeState& s = cluster.state(c.node);
      const double cpu_free = static_cast<double>(s.cpu_free_milli) / kMaxSpecCpuMilli;
      const double gpu_free = static_cast<double>(s.gpu_free_total_milli) / kMaxSpecGpuMilli;
      const double dot = (cpu_free * cpu_req + gpu_free * gpu_req) / 2.0;
      c.raw = static_cast<int64_t>(100.0 * (1.0 - dot));
    }
  }
};

}  // namespace

std::unique_ptr<Policy> make_dot_product_policy() {
  return std::make_unique<DotProductPolicy>();
}

}  // namespace greensched::policy
