// Extender::resync: reconcile the state with the full list of bound pods a controller reports
// (from the API server): pods the state holds but the list lacks, or holds differently (other
// node, UID, request or GPUs), are released (a changed greensched.io/movable annotation alone
// is taken in place); listed pods the state lacks are bound, those with
// their GPU indices first (they are facts), then those without (the policy picks their GPUs
// on the given node). A pod that cannot be placed (unknown node, overcommit) is reported and
// skipped. All changes go to the journal as one unit.
#include <map>

#include <fmt/format.h>

#include "greensched/policy/filter.hpp"
#include "greensched/serve/extender.hpp"
#include "greensched/serve/filter_message.hpp"

namespace greensched::serve {
namespace {

bool same_placement(const BoundPod& held, const ResyncPod& want) {
  const PodRequest& a = held.request;
  const PodRequest& b = want.request;
  return held.node == want.node && a.ref.uid == b.ref.uid && a.cpu_milli == b.cpu_milli &&
         a.memory_mib == b.memory_mib && a.num_gpu == b.num_gpu && a.gpu_milli == b.gpu_milli &&
         a.gpu_models == b.gpu_models && (!want.gpus || *want.gpus == held.gpus);
}

}  // namespace

ResyncOutcome Extender::resync(std::vector<ResyncPod> pods) {
  ResyncOutcome out;
  std::unique_lock lock(state_mu_);
  if (Status h = health(); !h.ok()) {
    out.error = h.message();
    return out;
  }
  // The API server's list is the truth: every assumption is forgotten (their binds, if they
  // come, decide on the state they find).
  forget_all_assumptions();
  std::map<std::string, ResyncPod> wanted;
  for (ResyncPod& p : pods) {
    std::string key = p.request.ref.key();
    if (wanted.contains(key)) {
      out.errors.emplace_back(key, "listed twice; the first entry is used");
      continue;
    }
    wanted.emplace(std::move(key), std::move(p));
  }

  std::vector<std::string> entries;
  std::vector<std::string> to_release;
  std::vector<std::pair<std::string, bool>> to_mark;  // same placement, movable changed
  for (const auto& [key, held] : state_->pods()) {
    auto it = wanted.find(key);
    if (it == wanted.end() || !same_placement(held, it->second)) {
      to_release.push_back(key);
    } else if (held.request.movable != it->second.request.movable) {
      to_mark.emplace_back(key, it->second.request.movable);
    }
  }
  // A changed greensched.io/movable annotation keeps the pod where it is; the journal says it
  // as the pod's release and bind on the same GPUs.
  for (const auto& [key, movable] : to_mark) {
    if (Status s = state_->set_movable(key, movable); !s.ok()) {
      out.errors.emplace_back(key, s.message());
      continue;
    }
    const BoundPod& pod = *state_->find_pod(key);
    entries.push_back(ClusterState::release_entry(pod.request.ref));
    entries.push_back(ClusterState::bind_entry(pod));
  }
  for (const std::string& key : to_release) {
    entries.push_back(ClusterState::release_entry(state_->find_pod(key)->request.ref));
    if (Status s = state_->release(key); !s.ok()) {
      out.errors.emplace_back(key, s.message());
      continue;
    }
    ++out.removed;
  }

  for (int pass = 0; pass < 2; ++pass) {
    const bool with_gpus = pass == 0;
    for (auto& [key, want] : wanted) {
      if (want.gpus.has_value() != with_gpus) continue;
      if (state_->find_pod(key) != nullptr) {
        ++out.unchanged;
        continue;
      }
      const auto node = state_->find_node(want.node);
      if (!node) {
        out.errors.emplace_back(key, fmt::format("unknown node {}", want.node));
        continue;
      }
      GpuMask gpus = want.gpus.value_or(0);
      if (!want.gpus) {
        const PodSpec spec = state_->pod_spec(want.request);
        const Cluster& cluster = state_->cluster();
        const policy::FilterReason reason =
            policy::filter_node(cluster.spec(*node), cluster.state(*node), spec);
        if (reason != policy::FilterReason::kFits) {
          out.errors.emplace_back(
              key, filter_message(filter_facts(reason, cluster.spec(*node), cluster.state(*node)),
                                  spec, state_->models()));
          continue;
        }
        gpus = state_->policy().select_gpus(cluster, *node, spec, state_->rng());
      }
      if (Status s = state_->bind(want.request, want.node, gpus); !s.ok()) {
        out.errors.emplace_back(key, s.message());
        continue;
      }
      entries.push_back(ClusterState::bind_entry(*state_->find_pod(key)));
      pending_.erase(key);
      ++out.added;
    }
  }
  uint64_t ticket = 0;
  if (!entries.empty()) ticket = journal_->enqueue(std::move(entries));
  maybe_compact();
  lock.unlock();
  if (ticket != 0) {
    if (Status s = journal_->wait_durable(ticket); !s.ok()) out.error = s.message();
  }
  return out;
}

}  // namespace greensched::serve
