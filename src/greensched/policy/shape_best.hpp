// The best node class per pod shape, kept up to date instead of found by a pass over every
// class for every pod.
//
// For a policy whose raw score of a class depends only on the pod's shape
// (Policy::raw_score_by_shape) and whose best candidate is the one with the highest raw score
// (Policy::best_is_highest_raw), what a class offers a pod of a given shape is fixed for the
// class's life: the filter's shape fields (free CPU, GPU room, GPU model) are part of the class
// key, and so is everything the score reads. Only the free memory, outside the key, differs
// from pod to pod of one shape and from member to member. So each shape seen so far keeps the
// classes that pass its filter bar memory, in buckets by raw score (highest first), brought up
// to date when a pod of the shape comes: the classes made since it was last served are read
// from the classes' change log (NodeClasses::made_since) and filed, and gone ones are
// dropped lazily (their slot's generation no longer matches). A shape too far behind the log
// files every class afresh. A pod then costs the classes made since its shape was last served
// and a walk of its shape's best buckets down to the first one with a class that has the
// memory; within that bucket the node is, as in the pass over classes, the first member in tie
// order with the memory among the classes that have it. The decisions are those of
// Scheduler's pass over classes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/policy/node_classes.hpp"
#include "greensched/policy/policy.hpp"

namespace greensched::policy {

class ShapeBest {
 public:
  // `tie_rank` must outlive this object.
  ShapeBest(Policy& policy, std::span<const uint32_t> tie_rank);

  struct Best {
    NodeIndex node = -1;  // -1: no node fits
    int64_t raw = 0;
  };
  // The node the pass over `classes` (synced to `cluster`) would pick for `pod`, whose shape
  // the policy scores by shape, with CPU and memory within the filter columns' range.
  Best find(const Cluster& cluster, const NodeClasses& classes, const PodSpec& pod, Rng& rng);

 private:
  struct Item {
    uint32_t slot;
    uint64_t generation;  // the class filed; stale once its slot holds another or none
  };
  struct Bucket {
    int64_t raw;
    std::vector<Item> items;
  };
  struct Shape {
    bool used = false;
    PodSpec pod;         // a pod of the shape (memory aside, all its pods score and filter alike)
    uint64_t epoch = 0;  // NodeClasses::epoch() the buckets were built for
    uint64_t read = 0;   // log entries read
    std::vector<Bucket> buckets;  // by raw score, highest first
    std::size_t items = 0;        // filed, stale ones included
  };

  // Files the classes in slots_ (live, and passing the shape's filter bar memory).
  void file(Shape& shape, const Cluster& cluster, const NodeClasses& classes, Rng& rng);
  void drop_stale(Shape& shape, const NodeClasses& classes) const;
  void catch_up(Shape& shape, const Cluster& cluster, const NodeClasses& classes, Rng& rng);

  Policy& policy_;
  std::span<const uint32_t> tie_rank_;
  std::vector<Shape> shapes_;  // by shape id
  // Scratch: the classes to file and their representatives to score.
  std::vector<uint32_t> slots_;
  std::vector<Candidate> scored_;
};

}  // namespace greensched::policy
