// A scheduling policy in the kube-scheduler plugin style: the scheduler filters nodes (see
// filter.hpp), then the policy scores the feasible ones, normalises the scores, and picks the
// GPUs on the winning node. A policy never changes the cluster; it may keep caches of its own.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/rng.hpp"

namespace greensched::policy {

struct Candidate {
  NodeIndex node = -1;
  int64_t raw = 0;    // the policy's own score, higher is better
  int64_t score = 0;  // after normalisation, 0..100
};

// One scoring term of a candidate: the policy itself, or a member of a mix.
struct TermScore {
  std::string name;
  int64_t weight = 1;
  int64_t raw = 0;
  int64_t score = 0;  // normalised
};

class Policy {
 public:
  virtual ~Policy() = default;

  virtual std::string_view name() const = 0;

  // Score phase: sets `raw` of every candidate (all are feasible for `pod`).
  virtual void score(const Cluster& cluster, const PodSpec& pod, std::span<Candidate> candidates,
                     Rng& rng) = 0;

  // Normalize phase: sets `score` from `raw`. The default keeps the raw score.
  virtual void normalize(std::span<Candidate> candidates) const;

  // The GPUs `pod` takes on `node` (feasible). The default is the reference rule: a sharing pod
  // takes the GPU with the least free share that fits (first index among equals), a k-GPU pod
  // the first k fully free GPUs, a CPU-only pod none.
  virtual GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod, Rng& rng);

  // Whether scores depend on the GPU power rule of the nodes' figures (power::GpuPowerRule):
  // if not, a replay can account one schedule under several rules.
  virtual bool reads_gpu_power_rule() const { return false; }

  // Node classes (node_classes.hpp): true when the raw score of a node depends only on the
  // pod, the node's spec (bar the name), its state (bar the version) and node_class_tag(node),
  // and normalisation only on the set of distinct raw scores (min-max does), so that scoring
  // one node of each class scores them all. Off by default; Random, which draws one of the
  // candidates, stays off.
  virtual bool scores_by_class() const { return false; }
  // What the score reads of a node beyond what the filter reads anyway (free CPU, the free GPU
  // shares as a multiset, GPU model and count, online), so that the class key holds it: the
  // fewer parts, the fewer classes. Default: all of them.
  enum ClassKeyPart : uint32_t {
    kKeyMemory = 1,     // free memory
    kKeyGpuOrder = 2,   // which GPU index has which free share
    kKeyPods = 4,       // how many pods the node hosts
    kKeyPodsByTag = 8,  // pods per GPU tag
    kKeyCapacity = 16,  // the spec's CPU and memory capacity
    kKeyAll = 31,
  };
  virtual uint32_t class_key_parts() const { return kKeyAll; }
  // True when, beyond scores_by_class, the raw score of a node class for `pod` depends only on
  // pod.shape (not on the rest of the pod, nor on the run so far), so that the scheduler may
  // keep one raw score per (class, shape) for as long as the class lives. Off by default.
  virtual bool raw_score_by_shape(const PodSpec& pod) const {
    (void)pod;
    return false;
  }
  // True when normalize keeps every raw score as it is (the default normalize), so that the
  // best candidate is the one with the highest raw score whatever the other candidates are.
  // With raw_score_by_shape, the scheduler then keeps the best class per shape up to date
  // (shape_best.hpp) instead of passing over every class for every pod. Off by default.
  virtual bool best_is_highest_raw() const { return false; }
  // What the score reads of a node beyond its spec and state (its power figures, say), as an id
  // that is equal for nodes the score cannot tell apart.
  virtual uint32_t node_class_tag(NodeIndex node) const {
    (void)node;
    return 0;
  }

  // For explanations: keep each term's scores of the last cycle (off by default, so the fast
  // path pays nothing), and report them for candidate i of that cycle. The default is the
  // policy as its single term.
  virtual void capture_terms(bool on) { (void)on; }
  virtual std::vector<TermScore> terms(std::span<const Candidate> candidates, std::size_t i) const;
};

// Integer min-max normalisation to 0..100 as the reference does: (raw - low) * 100 / (high -
// low) with integer division; when all are equal every score is `all_equal` (BestFit 0, PWR 100).
void normalize_min_max(std::span<Candidate> candidates, int64_t all_equal = 0);

}  // namespace greensched::policy
