// The extender's verbs on the cluster state. Two locks: `state_mu_` is shared by the verbs
// that only read the allocations (filter, prioritize, the gauges) and exclusive for those that
// change them (bind, release, resync, adding a node). `decide_mu_` serialises what the readers
// still change: the pending pods, the shape ids, and the policy's caches and random generator.
// A writer holds `state_mu_` exclusively, which keeps every reader out, so it needs no
// `decide_mu_`. Filters then run beside each other and beside a prioritize, and a thread
// preempted while it holds a shared lock does not stall the others. The journal commit of a
// bind happens after the lock is released, so concurrent binds share commits. Filter and prioritize
// use the same policy code as the simulator (policy::filter_node, Policy::score/normalize); bind
// re-checks the node, lets the policy pick the GPUs, allocates through core::Cluster (which refuses
// overcommit) and returns only once the change is in the journal.
//
// Binds in flight: kube-scheduler binds asynchronously and already filters the next pod, on a
// cache where the previous pod is assumed on the node it chose. The extender assumes it too:
// prioritize holds the pod's room on the node it scores highest (ClusterState::assume, GPUs
// chosen by the policy, as bind would choose them), so the next filter sees that room taken
// and nothing ever waits for another pod's bind. The bind that follows confirms the
// assumption when it names that node, and otherwise forgets it and allocates afresh (counted
// as an assume miss). An assumption whose bind does not come within assume_ttl_ms (a later
// plugin rejected the pod, the scheduler restarted) is forgotten; so is one whose pod is
// filtered or prioritized again. Assumptions are never journaled: a bind is what makes room
// durable, and bind re-checks the node, so no GPU share is ever allocated twice.
//
// `await_mu_`-free: `names_mu_` guards only the node list a filter remembers for the next
// request (see last_names_) and is never held while taking another lock.
//
// Per-node filter reasons are categorical (filter_message.hpp); when no node fits, the numbers
// behind them go to the decision log (decision_log.hpp), written after both locks are
// released, under its own mutex.
//
// Unknown nodes: with node objects (nodeCacheCapable: false) a node the state does not know
// is added from its object (UnknownNodes::kAdd, the default) or rejected as unresolvable
// (kReject); a node known only by name (nodeCacheCapable: true) is always rejected. A known
// node's object is not re-read: its capacity is the one it was added with.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/serve/cluster_state.hpp"
#include "greensched/serve/decision_log.hpp"
#include "greensched/serve/extender_protocol.hpp"
#include "greensched/serve/journal.hpp"
#include "greensched/serve/metrics.hpp"
#include "greensched/serve/pending_pods.hpp"

namespace greensched::serve {

enum class UnknownNodes { kAdd, kReject };

struct ExtenderOptions {
  UnknownNodes unknown_nodes = UnknownNodes::kAdd;
  std::size_t pending_capacity = 65536;
  uint64_t compact_every = 100000;  // journal entries after which a snapshot replaces them
  std::string decision_log;         // JSON lines of unschedulable filters; "" = none
  // How long prioritize's assumption of a pod on its best node holds that room waiting for
  // the pod's bind (0: no assumptions; a filter then sees a pod's room only once it is bound).
  int assume_ttl_ms = 5000;
  // GET /v1/defrag plans for pending pods filtered within this many seconds: kube-scheduler
  // retries an unschedulable pod at least every minute, so an older one is likely gone.
  int defrag_pending_seconds = 300;
};

// GET /v1/defrag's question: plan at most `budget` moves in all; pods in `exclude`
// (namespace/name) stay where they are.
struct DefragRequest {
  int budget = 0;
  std::set<std::string> exclude;
};

// Posts the binding to the API server (see kube_binder.hpp); called after the bind is durable.
using Binder = std::function<Status(const BindingArgs& args, const std::string& gpu_index)>;

struct BindOutcome {
  std::string error;      // "" on success
  std::string gpu_index;  // alibabacloud.com/gpu-index of the pod ("" for no GPU)
};

struct ReleaseOutcome {
  int http_status = 200;  // 200, 404 (not bound), 409 (UID mismatch), 503 (journal)
  std::string error;
};

struct ResyncOutcome {
  int added = 0;
  int removed = 0;
  int unchanged = 0;
  std::vector<std::pair<std::string, std::string>> errors;  // pod key, reason
  std::string error;                                        // journal failure
};

class Extender {
 public:
  Extender(std::unique_ptr<ClusterState> state, std::unique_ptr<Journal> journal,
           ExtenderOptions options);
  // Commits whatever is still queued in the journal.
  ~Extender();
  Extender(const Extender&) = delete;
  Extender& operator=(const Extender&) = delete;

  // Binds through the API server after the journal commit (may be set while serving).
  void set_binder(Binder binder);

  FilterResult filter(ExtenderArgs& args);
  std::vector<HostPriority> prioritize(ExtenderArgs& args);
  BindOutcome bind(const BindingArgs& args);
  ReleaseOutcome release(const PodRef& ref);
  ResyncOutcome resync(std::vector<ResyncPod> pods);
  // Takes a bound pod's changed greensched.io/movable annotation (the pod watcher's MODIFIED
  // events): true when the pod is bound under that UID and its flag changed (journalled as
  // its release and bind on the same GPUs).
  bool mark_movable(const PodRef& ref, bool movable);
  // A defragmentation plan for the pending pods, oldest first (serve/defrag.cpp; its reply is
  // documented there and in docs/SERVE.md). Planned on a copy after the locks are released:
  // the state is never changed.
  Result<nlohmann::json> defrag(const DefragRequest& request);

  std::optional<nlohmann::json> pod(const std::string& ns, const std::string& name);
  nlohmann::json pods();
  StateGauges gauges();
  // Ok, or why changes are refused (journal failure).
  Status health() const;

 private:
  // The state lock of a filter or prioritize: shared, or exclusive when the request carries
  // node objects, whose unknown nodes are then added. Holds exactly one of the two.
  struct RequestLock {
    std::unique_lock<std::shared_mutex> exclusive;
    std::shared_lock<std::shared_mutex> shared;
  };
  RequestLock lock_for_request(const ExtenderArgs& args, FilterResult* result);
  // Remembers the pod for its bind; returns it as the policies see it (state lock held).
  PodSpec note_pending(const PodRequest& pod);
  // Adds the unknown nodes of a request with node objects (lock held).
  void add_unknown_nodes(const ExtenderArgs& args, FilterResult* result);
  // Before a filter or prioritize: forgets expired assumptions, and the pod's own (it is
  // being scheduled again). Takes the state lock exclusively only when there is one to forget.
  void settle_assumptions(const std::string& key);
  // Forgets assumptions past their time, and `key`'s when given (state lock held exclusively).
  void expire_assumptions(std::chrono::steady_clock::time_point now, const std::string* key);
  // Forgets every assumption (state lock held exclusively).
  void forget_all_assumptions();
  // Holds the pod's room on `node` until its bind (state lock held exclusively).
  void assume(const std::string& key, const std::string& node);
  // The node of the pod if it is bound under the same UID, else "" (state lock held).
  std::string bound_node_of(const PodRef& ref) const;
  // The nodes of a request's names, by position (-1: unknown), each name looked up once per
  // distinct list (state lock held; see ResolvedNames).
  struct ResolvedNames;
  std::shared_ptr<const ResolvedNames> resolve_names(const std::vector<std::string>& names,
                                                     bool* reused);
  // The nodes of prioritize's names (-1: unknown): matched in order against the last list a
  // filter resolved, of which they are usually a part, else looked up (state lock held).
  std::vector<NodeIndex> nodes_in_order(const std::vector<std::string>& names);
  // Snapshot when the journal tail is long (lock held).
  void maybe_compact();
  // Rolls back a bind whose journal commit failed.
  void undo_bind(const PodRef& ref, const std::string& node);

  std::shared_mutex state_mu_;
  std::mutex decide_mu_;  // taken after state_mu_, never before
  std::unique_ptr<ClusterState> state_;
  std::map<std::string, std::string> refused_nodes_;  // under state_mu_: name -> reason logged
  std::unique_ptr<Journal> journal_;
  ExtenderOptions options_;
  PendingPods pending_;
  std::shared_ptr<const Binder> binder_;  // read by bind under state_mu_, called after
  // Under state_mu_ (written exclusively): when each assumption of the state expires.
  std::map<std::string, std::chrono::steady_clock::time_point> assumed_until_;
  // No later than the earliest of them (steady-clock ns; max when none), and how many there
  // are: read without the lock, so that filters take it exclusively, and binds scan the
  // assumptions, only when something is to be forgotten.
  std::atomic<int64_t> next_expiry_ns_{INT64_MAX};
  std::atomic<int64_t> assumed_count_{0};
  std::atomic<uint64_t> assume_misses_{0};     // binds to another node than the assumed one
  std::atomic<uint64_t> assume_expired_{0};    // assumptions whose bind never came
  std::unique_ptr<DecisionLog> decision_log_;  // null when none
  // The last node list a filter resolved: kube-scheduler sends the same list in the same order
  // to filter after filter, so the next one reuses its nodes when its text is the same (and no
  // node was added since), and prioritize's list, the passing part of it, is matched in order.
  // `names_mu_` guards only the pointer and is never held while taking another lock.
  std::mutex names_mu_;
  std::shared_ptr<const ResolvedNames> last_names_;
  static constexpr std::size_t kLogExamples = 3;  // nodes quoted per reason in the log
};

}  // namespace greensched::serve
