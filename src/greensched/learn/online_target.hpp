// An online estimate of FGD's target workload: the task shapes of the most recent arrivals (a
// sliding window of W pods, or every arrival so far) with their counts, cut as
// frag::build_target_workload cuts the trace's (most popular first until they cover 95 %).
// Over a window holding a whole trace it gives exactly that trace's target workload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <tuple>

#include "greensched/core/pod.hpp"
#include "greensched/frag/target_workload.hpp"

namespace greensched::learn {

class OnlineTargetEstimator {
 public:
  // window 0: every arrival so far.
  explicit OnlineTargetEstimator(std::size_t window, double coverage = 0.95);

  void observe(const PodSpec& pod);
  std::size_t observed() const { return observed_; }  // all arrivals seen
  std::size_t in_window() const { return window_ == 0 ? observed_ : recent_.size(); }
  std::size_t window() const { return window_; }

  // The target workload of the pods in the window.
  frag::TargetWorkload target() const;

 private:
  using Key = std::tuple<int64_t, int, int32_t, GpuModelSet>;  // as build_target_workload keys
  std::size_t window_;
  double coverage_;
  std::size_t observed_ = 0;
  std::deque<Key> recent_;
  std::map<Key, int64_t> counts_;
};

}  // namespace greensched::learn
