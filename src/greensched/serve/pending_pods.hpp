// Pods seen by filter or prioritize and not yet bound, by namespace/name. The bind verb
// carries only the pod's name, namespace, UID and node, so the extender remembers each pod's
// request from the filter call that always precedes it. Bounded (least recently seen evicted
// first): a pod evicted or never seen (e.g. the extender restarted between filter and bind)
// fails its bind with an Error, and kube-scheduler retries it from filter.
//
// Each pod also keeps when it was first seen (under its UID) and last seen, so that
// GET /v1/defrag plans for the pods waiting longest, and only for those kube-scheduler still
// retries.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "greensched/serve/pod_request.hpp"

namespace greensched::serve {

class PendingPods {
 public:
  using Clock = std::chrono::steady_clock;

  struct Seen {
    PodRequest request;
    Clock::time_point first_seen;
    Clock::time_point last_seen;
  };

  explicit PendingPods(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  void put(const PodRequest& request, Clock::time_point now = Clock::now()) {
    const std::string key = request.ref.key();
    if (auto it = index_.find(key); it != index_.end()) {
      Seen& seen = it->second->second;
      // Another incarnation under the same name is a new pod: it waits from now.
      if (seen.request.ref.uid != request.ref.uid) seen.first_seen = now;
      seen.request = request;
      seen.last_seen = now;
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.emplace_front(key, Seen{request, now, now});
    index_.emplace(key, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  const PodRequest* find(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->second.request;
  }

  void erase(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return;
    order_.erase(it->second);
    index_.erase(it);
  }

  std::size_t size() const { return order_.size(); }

  // The pods last seen at or after `seen_since`, first seen first (ties by namespace/name).
  std::vector<Seen> oldest_first(Clock::time_point seen_since) const {
    std::vector<Seen> out;
    for (const auto& [key, seen] : order_) {
      if (seen.last_seen >= seen_since) out.push_back(seen);
    }
    std::sort(out.begin(), out.end(), [](const Seen& a, const Seen& b) {
      if (a.first_seen != b.first_seen) return a.first_seen < b.first_seen;
      return a.request.ref.key() < b.request.ref.key();
    });
    return out;
  }

 private:
  using Entry = std::pair<std::string, Seen>;
  std::size_t capacity_;
  std::list<Entry> order_;  // most recently seen first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace greensched::serve
