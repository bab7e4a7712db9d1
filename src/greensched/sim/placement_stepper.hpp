// One pod at a time on a cluster, for a learning agent: the inflation protocol of
// run_inflation (simulator.hpp) turned inside out, so that the caller, not a policy, picks
// each pod's node. Why a class of its own: an agent steps tens of thousands of times a second,
// so a step must be the simulator's own work (the same Cluster, the filter pass
// policy::fitting_nodes, the policy's GPU rule, power::ClusterPower, the fragmentation measure)
// and nothing more; the observation is written into buffers the caller owns (numpy arrays),
// changing only the row of the node a step touched. Following the policy's own pick at every
// step (expert mode) reproduces run_inflation's allocation exactly: the same engine.
//
// An episode: the seeded inflation draws the arrivals (pods arrive until `tune` x cluster GPU
// milli is requested); a pod that fits on no node fails and is dropped, as in the simulator,
// and the next one arrives; the episode ends after the last arrival.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/core/status.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/policy/policy.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/simulator.hpp"

namespace greensched::sim {

class PlacementStepper {
 public:
  // The pod's features in Buffers::pod: CPU milli, memory MiB, GPUs, milli per GPU.
  static constexpr int kPodFeatures = 4;

  // Caller-owned observation arrays (row-major float32 unless said otherwise). Every pointer
  // must stay valid while the stepper writes into it; null ones are not written.
  struct Buffers {
    float* gpu_free_milli = nullptr;   // nodes x gpu_slots; -1 where a node has no such GPU
    float* cpu_free_milli = nullptr;   // nodes
    float* memory_free_mib = nullptr;  // nodes
    float* pod = nullptr;              // kPodFeatures
    float* load = nullptr;             // 2: arrived and allocated GPU milli / cluster GPU milli
    uint8_t* mask = nullptr;           // nodes; 1 where the current pod fits
  };

  struct Config {
    std::string policy = "fgd";    // its GPU rule places pods on the chosen node; the expert
    double tune = 1.3;             // arrivals until tune x cluster GPU milli is requested
    bool expert = false;           // run the policy on every pod (expert_node())
    double alloc_weight = 1.0;     // x GPU milli placed / cluster GPU milli
    double energy_weight = 0.5;    // x facility watts added / the cluster's facility range
    double invalid_penalty = 1.0;  // x the dropped pod's GPU milli / cluster GPU milli
  };

  struct Step {
    double reward = 0;
    bool placed = false;  // false: the node was not feasible, and the pod was dropped
    double added_facility_watts = 0;
    bool done = false;  // no pod is left
  };

  struct Counts {
    int64_t pods_arrived = 0;  // offered, or dropped because they fit nowhere
    int64_t pods_placed = 0;
    int64_t pods_failed = 0;    // fit on no node
    int64_t pods_rejected = 0;  // the action named an infeasible node
    int64_t arrived_gpu_milli = 0;
    int64_t allocated_gpu_milli = 0;
    int64_t cluster_gpu_milli = 0;
    double facility_watts = 0;  // the cluster's power now, PUE included
    double frag_gpu_milli = 0;  // FGD's fragmentation measure of the cluster now
  };

  // `scenario` (and its workload) must outlive the stepper. Fails on a bad policy, tune or
  // weight, or a cluster without GPUs.
  static Result<std::unique_ptr<PlacementStepper>> create(const Scenario& scenario, Config config);

  std::size_t nodes() const { return nodes_.size(); }
  int gpu_slots() const { return gpu_slots_; }
  const Config& config() const { return config_; }
  // Facility watts with every node idle, and with every node fully allocated.
  double idle_facility_watts() const { return idle_facility_watts_; }
  double full_facility_watts() const { return full_facility_watts_; }

  // Where observations go; a reset writes them whole, a step only what changed.
  void set_buffers(const Buffers& buffers) { buffers_ = buffers; }

  // Starts an episode: the same generator as run_inflation with `seed` (arrivals, tie order,
  // then the policy's draws), up to the first pod that fits somewhere.
  Status reset(uint64_t seed);
  // Places the current pod on `node` if it is feasible (else drops the pod), and moves on to
  // the next pod that fits somewhere. Fails only when no episode is running or the engine
  // refused a placement.
  Result<Step> step(int64_t node);

  bool done() const { return done_; }
  // The policy's pick for the current pod (expert mode); -1 otherwise or when done.
  NodeIndex expert_node() const { return done_ || !config_.expert ? -1 : decision_.node; }
  // How many nodes the current pod fits (0 when done).
  int64_t feasible_nodes() const { return done_ ? 0 : feasible_; }
  const Counts& counts() const { return counts_; }

 private:
  PlacementStepper(const Scenario& scenario, Config config);
  void advance();  // to the next pod that fits somewhere, or done
  void write_node(NodeIndex node);
  void write_pod_and_load();

  const Scenario& scenario_;
  Config config_;
  std::vector<NodeSpec> nodes_;
  int gpu_slots_ = 0;
  int64_t cluster_gpu_milli_ = 0;
  double idle_facility_watts_ = 0;
  double full_facility_watts_ = 0;
  Buffers buffers_;

  // The episode (reset makes them anew; declared so that users are destroyed first).
  std::optional<Rng> rng_;
  std::vector<uint32_t> arrivals_;
  std::size_t next_ = 0;  // index into arrivals_ of the current pod
  bool done_ = true;
  std::optional<Cluster> cluster_;
  std::shared_ptr<frag::FragmentationModel> frag_model_;
  std::unique_ptr<policy::Policy> policy_;
  std::unique_ptr<policy::Scheduler> scheduler_;
  std::optional<frag::ClusterFragmentation> fragmentation_;
  std::optional<power::ClusterPower> power_;
  policy::Decision decision_;
  std::vector<NodeIndex> fitting_;
  std::vector<uint8_t> fits_;  // per node, for the current pod
  int64_t feasible_ = 0;
  Counts counts_;
};

}  // namespace greensched::sim
