// Keeps the extender's state in step with the cluster's pods through the Kubernetes API: the
// job of the release/resync controller, built in (greensched serve --kube-watch).
//
// At start, before the service answers any verb, it lists every pod and reconciles with
// resync (safe then: no bind is in flight). It then watches pods from the list's
// resourceVersion and releases a pod when it is deleted or reaches phase Succeeded or Failed;
// release checks the UID, so a recreated pod of the same name is never freed by its
// predecessor's event. A watch that ends is resumed from the last resourceVersion. When that
// version is too old (410 Gone) it lists again. A relist releases only held pods that the list
// lacks entirely or shows finished: a pod bound while the list was being read is in the list
// (bound or not yet), so it is kept, and no resync races a bind. The event of a live pod also
// carries its greensched.io/movable annotation to the extender (Extender::mark_movable).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/serve/extender.hpp"
#include "greensched/serve/kube_binder.hpp"

namespace httplib {
class Client;
}

namespace greensched::serve {

// The pod a watch event frees: DELETED, or a pod in phase Succeeded or Failed. nullopt for
// anything else (ADDED, a running pod, BOOKMARK, malformed objects).
std::optional<PodRef> pod_to_release(const nlohmann::json& event);

// After a relist: the held pods (Extender::pods()) that the v1.PodList lacks or shows finished.
std::vector<PodRef> stale_after_relist(const nlohmann::json& held, const nlohmann::json& list);

struct PodWatchStats {
  uint64_t events = 0;
  uint64_t released = 0;
  uint64_t relists = 0;
  uint64_t errors = 0;
};

class PodWatcher {
 public:
  // `api` as resolve_kube_api returns it. The extender must outlive the watcher.
  PodWatcher(Extender& extender, KubeApiOptions api, int retry_seconds = 5);
  ~PodWatcher();  // stops the watch
  PodWatcher(const PodWatcher&) = delete;
  PodWatcher& operator=(const PodWatcher&) = delete;

  // Lists the pods and resyncs; call before the service attaches the extender.
  Result<ResyncOutcome> initial_sync();
  // Watches on a thread of its own until stop().
  void start();
  void stop();
  PodWatchStats stats() const;

 private:
  // LIST /api/v1/pods: the PodList, and its resourceVersion in resource_version_.
  Result<nlohmann::json> list_pods();
  // One WATCH request, until the server ends it, an error, or stop(). 410 Gone: relist_ set.
  Status watch_once();
  Status relist();
  void handle_line(std::string_view line);
  void run();
  void sleep_for_retry();

  Extender& extender_;
  KubeApiOptions api_;
  int retry_seconds_;
  std::string resource_version_;
  bool relist_ = false;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;  // guards stats_, active_ and the wake-up of sleep_for_retry
  std::condition_variable wake_;
  PodWatchStats stats_;
  httplib::Client* active_ = nullptr;  // the watch in progress, for stop() to cut
  std::thread thread_;
};

}  // namespace greensched::serve
