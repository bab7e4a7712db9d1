// Pods seen by filter or prioritize and not yet bound, by namespace/name. The bind verb
// carries only the pod's name, namespace, UID and node, so the extender remembers each pod's
// request from the filter call that always precedes it. Bounded (least recently seen evicted
// first): a pod evicted or never seen (e.g. the extender restarted between filter and bind)
// fails its bind with an Error, and kube-scheduler retries it from filter.
#pragma once

#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>

#include "greensched/serve/pod_request.hpp"

namespace greensched::serve {

class PendingPods {
 public:
  explicit PendingPods(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  void put(const PodRequest& request) {
    const std::string key = request.ref.key();
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->second = request;
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.emplace_front(key, request);
    index_.emplace(key, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  const PodRequest* find(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->second;
  }

  void erase(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return;
    order_.erase(it->second);
    index_.erase(it);
  }

  std::size_t size() const { return order_.size(); }

 private:
  using Entry = std::pair<std::string, PodRequest>;
  std::size_t capacity_;
  std::list<Entry> order_;  // most recently seen first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace greensched::serve
