// Node power model of the PWR paper (Lettich et al., CCGrid'25): node power = GPU power + CPU
// power. A GPU with any allocation draws its max power, a free GPU its idle power (rule "pwr");
// or, rule "proportional", idle + (max - idle) x the allocated share of the GPU, so that how
// much packing saves can be shown under both readings of a shared GPU. CPU:
// physical cores = ceil(vCPU / 2); idle cores = floor(free vCPU / 2); working = physical -
// idle; sockets = ceil(physical / cores per socket); active sockets = ceil(working / cores
// per socket); CPU power = active x max + (sockets - active) x idle.
//
// The figures are data, not code: a JSON file (data/power-model.json is built in) maps GPU
// models and CPU kinds to watts, with overrides per node type or per node name, and a PUE.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/gpu_model.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"

namespace greensched::power {

struct GpuPower {
  double idle_watts = 0;
  double max_watts = 0;
};

// How a GPU's draw follows its allocation.
enum class GpuPowerRule {
  kPwr,           // any allocation draws max (the PWR paper)
  kProportional,  // idle + (max - idle) x allocated share
};
// "pwr" or "proportional", as files and the command line spell them.
std::string_view gpu_power_rule_name(GpuPowerRule rule);
Result<GpuPowerRule> parse_gpu_power_rule(std::string_view text);

struct CpuPower {
  std::string name;
  double idle_watts = 0;
  double max_watts = 0;
  int cores_per_socket = 1;
};

// The power figures of one node.
struct NodePower {
  GpuPower gpu;
  CpuPower cpu;
  std::string gpu_name;  // the model the figures came from
  GpuPowerRule gpu_rule = GpuPowerRule::kPwr;
};

// Which CPU (and optionally GPU figures) a group of nodes has. Unset fields match any node.
struct NodeTypeOverride {
  std::optional<std::string> gpu_model;
  std::optional<int> gpu_count;
  std::optional<int64_t> cpu_milli;
  std::optional<std::string> cpu;
  std::optional<std::string> gpu;  // a key of the GPU table
};

class PowerModel {
 public:
  // The built-in model (data/power-model.json of the source tree).
  static PowerModel builtin();
  // Parses a whole model; errors name the source and the offending key.
  static Result<PowerModel> parse(std::string_view json_text, const std::string& source);
  // The built-in model with a file's entries on top: each of its GPUs and CPUs is added or
  // replaces the built-in one (a GPU needs only idle_watts and max_watts, or same_as any GPU
  // the built-in model or the file has); its node_types and nodes are added; default_cpu, pue
  // and gpu_power, where given, replace the built-in ones. Every section is optional.
  static Result<PowerModel> extend(std::string_view json_text, const std::string& source);
  // extend() with a file's text.
  static Result<PowerModel> load(const std::string& path);

  // Figures for every node, after the node_types and nodes overrides. Fails when a GPU node's
  // GPU (its own model, or the one an override names) has no figures; the error names that GPU
  // and `how_to_add`, the front end's way to give a power model (see check_gpu_models).
  Result<std::vector<NodePower>> resolve(std::span<const NodeSpec> nodes,
                                         const GpuModelRegistry& models,
                                         std::string_view how_to_add = "--power-model FILE") const;
  // The GPU models with figures, in their canonical spelling, sorted.
  std::vector<std::string> gpu_names() const;
  // Figures of GPU model `name` (any spelling canonical_gpu_model reads), if it has any.
  std::optional<GpuPower> gpu(std::string_view name) const;
  // Where the model came from: "built-in power model" or "power model FILE".
  const std::string& source() const { return source_; }
  double pue() const { return pue_; }
  void set_pue(double pue) { pue_ = pue; }
  GpuPowerRule gpu_rule() const { return gpu_rule_; }
  void set_gpu_rule(GpuPowerRule rule) { gpu_rule_ = rule; }

 private:
  // gpus_'s entry for `name` in any spelling, or end().
  std::map<std::string, GpuPower>::const_iterator find_gpu(std::string_view name) const;
  std::map<std::string, GpuPower> gpus_;
  std::map<std::string, CpuPower> cpus_;
  std::string default_cpu_;
  std::vector<NodeTypeOverride> node_types_;
  std::map<std::string, NodeTypeOverride> nodes_;
  double pue_ = 1.0;
  GpuPowerRule gpu_rule_ = GpuPowerRule::kPwr;
  std::string source_;
};

// The one rule for a node whose GPU model the power model has no figures for, the same in
// every front end (simulate, multi, serve): the node is refused. The error names where the
// model was first seen (GpuModelRegistry::first_seen: "nodes.csv:12", "Node gpu-7"), the
// model, the models that have figures, and `how_to_add` (the front end's way to give a power
// model: "--power-model FILE"). Ok when every GPU node's model has figures. It is the status
// of PowerModel::resolve, so a node_types or nodes override that points at a GPU with no
// figures is refused too, naming that GPU.
Status check_gpu_models(const PowerModel& model, std::span<const NodeSpec> nodes,
                        const GpuModelRegistry& models, std::string_view how_to_add);

// The same from whole cores: a socket with any working core draws max_watts, an idle one
// idle_watts; sockets = ceil(physical / cores_per_socket). Inline and, for up to 16 sockets,
// free of division: power-aware policies call it for every candidate node.
inline double cpu_power_from_cores(int64_t physical_cores, int64_t working_cores,
                                   int64_t cores_per_socket, double max_watts, double idle_watts) {
  int64_t sockets = 0;
  int64_t active = 0;
  if (physical_cores <= 16 * cores_per_socket) {
    for (int64_t first = 0; first < physical_cores; first += cores_per_socket) {
      ++sockets;
      if (first < working_cores) ++active;
    }
  } else {
    sockets = (physical_cores + cores_per_socket - 1) / cores_per_socket;
    active = (working_cores + cores_per_socket - 1) / cores_per_socket;
  }
  return static_cast<double>(active) * max_watts +
         static_cast<double>(sockets - active) * idle_watts;
}
// CPU power of a node with `cpu_free_milli` free, in watts: physical cores = ceil(vCPU / 2),
// idle cores = floor(free vCPU / 2).
inline double cpu_power_watts(const NodeSpec& spec, const CpuPower& cpu, int64_t cpu_free_milli) {
  const int64_t physical = (std::max<int64_t>(spec.cpu_milli, 0) + 1999) / 2000;
  const int64_t idle = std::min(std::max<int64_t>(cpu_free_milli, 0) / 2000, physical);
  return cpu_power_from_cores(physical, physical - idle, std::max(cpu.cores_per_socket, 1),
                              cpu.max_watts, cpu.idle_watts);
}
// Power of one node in a given state, in watts (IT power, before PUE).
double node_power_watts(const NodeSpec& spec, const NodePower& power, int64_t cpu_free_milli,
                        const int32_t* gpu_free_milli);
// Power of one GPU with `free_milli` of its 1000 unallocated, in watts.
double gpu_power_watts(const NodePower& power, int32_t free_milli);
// The least a pod can draw on `spec`: its share of its GPUs' max power and of the node's CPU
// power with every socket busy (IT watts). An ideal energy-proportional cluster draws the sum
// of this over running pods and nothing else: the energy floor.
double pod_floor_watts(const NodeSpec& spec, const NodePower& power, const PodSpec& pod);
// Split of a node's power into CPU and GPU parts.
struct PowerSplit {
  double cpu_watts = 0;
  double gpu_watts = 0;
  double total() const { return cpu_watts + gpu_watts; }
};
PowerSplit node_power_split(const NodeSpec& spec, const NodePower& power, int64_t cpu_free_milli,
                            const int32_t* gpu_free_milli);

// Cluster power kept up to date one changed node at a time.
class ClusterPower {
 public:
  ClusterPower(std::vector<NodePower> nodes, const Cluster& cluster);
  void update(const Cluster& cluster, NodeIndex node);
  // IT power of all nodes, in watts.
  double watts() const { return total_watts_; }
  double node_watts(NodeIndex node) const { return node_watts_[node]; }
  const NodePower& node_power(NodeIndex node) const { return nodes_[node]; }
  // Power of `node` in its current state (for policies that compare before and after).
  const std::vector<NodePower>& figures() const { return nodes_; }

 private:
  std::vector<NodePower> nodes_;
  std::vector<double> node_watts_;
  double total_watts_ = 0;
};

}  // namespace greensched::power
