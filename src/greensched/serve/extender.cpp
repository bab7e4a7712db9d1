#include "greensched/serve/extender.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "greensched/policy/filter.hpp"
#include "greensched/serve/filter_message.hpp"
#include "greensched/serve/gpu_index.hpp"
#include "greensched/sim/decision_record.hpp"

namespace greensched::serve {

Extender::Extender(std::unique_ptr<ClusterState> state, std::unique_ptr<Journal> journal,
                   ExtenderOptions options)
    : state_(std::move(state)),
      journal_(std::move(journal)),
      options_(options),
      pending_(options.pending_capacity) {
  if (!options_.decision_log.empty()) {
    auto log = DecisionLog::open(options_.decision_log);
    if (log.ok()) {
      decision_log_ = std::move(log.value());
    } else {
      fmt::print(stderr, "greensched serve: no decision log: {}\n", log.error());
    }
  }
}

Extender::~Extender() {
  if (Status s = journal_->flush(); !s.ok()) {
    fmt::print(stderr, "greensched serve: journal not flushed at shutdown: {}\n", s.message());
  }
}

void Extender::add_unknown_nodes(const ExtenderArgs& args, FilterResult* result) {
  // The nodes that can join, added together below: one rebuild for the whole request.
  std::vector<NodeSpec> joining;
  std::set<std::string, std::less<>> joining_names;
  for (const NodeItem& item : args.nodes) {
    if (state_->find_node(item.name) || joining_names.contains(item.name)) continue;
    std::string_view why;
    if (options_.unknown_nodes == UnknownNodes::kReject) {
      why = kRejectedNodeCategory;
    } else if (!item.info) {
      why = kMalformedNodeCategory;
      fmt::print(stderr, "greensched serve: node {}: malformed Node object: {}\n", item.name,
                 item.error);
    } else {
      auto spec = state_->node_spec(*item.info);
      // The rule of power::check_gpu_models, as at start-up and in `greensched simulate`.
      Status model_known =
          spec.ok() ? power::check_gpu_models(state_->power_model(), std::span(&spec.value(), 1),
                                              state_->models(), kPowerModelHint)
                    : Status::Ok();
      Status s = !spec.ok() ? Status(Error{spec.error()}) : model_known;
      if (s.ok()) {
        joining_names.insert(item.name);
        joining.push_back(std::move(spec.value()));
        continue;
      }
      why = model_known.ok() ? kMalformedNodeCategory : kUnknownGpuModelCategory;
      // Said once per node and reason, not on every request that lists the node.
      if (std::string& said = refused_nodes_[item.name]; said != s.message()) {
        said = s.message();
        fmt::print(stderr, "greensched serve: node {} cannot be added: {}\n", item.name, said);
      }
    }
    if (result != nullptr) result->failed_unresolvable[item.name] = std::string(why);
  }
  if (joining.empty()) return;
  std::vector<std::string> entries;
  for (const NodeSpec& spec : joining) {
    entries.push_back(ClusterState::node_entry(spec, state_->models()));
  }
  if (Status s = state_->add_nodes(std::move(joining)); !s.ok()) {
    fmt::print(stderr, "greensched serve: nodes cannot be added: {}\n", s.message());
    if (result != nullptr) {
      for (const std::string& name : joining_names) {
        result->failed_unresolvable[name] = std::string(kMalformedNodeCategory);
      }
    }
    return;
  }
  // No wait: a later bind's commit carries these first (the journal keeps queue order).
  journal_->enqueue(std::move(entries));
}

Extender::RequestLock Extender::lock_for_request(const ExtenderArgs& args, FilterResult* result) {
  RequestLock lock;
  if (args.node_objects) {
    lock.exclusive = std::unique_lock(state_mu_);
    add_unknown_nodes(args, result);
  } else {
    lock.shared = std::shared_lock(state_mu_);
  }
  return lock;
}

PodSpec Extender::note_pending(const PodRequest& pod) {
  std::lock_guard decide(decide_mu_);
  pending_.put(pod);
  return state_->pod_spec(pod);
}

std::string Extender::bound_node_of(const PodRef& ref) const {
  const BoundPod* bound = state_->find_pod(ref.key());
  if (bound == nullptr) return {};
  const std::string& uid = bound->request.ref.uid;
  return uid.empty() || ref.uid.empty() || uid == ref.uid ? bound->node : std::string();
}

namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t steady_ns(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

void Extender::expire_assumptions(SteadyClock::time_point now, const std::string* key) {
  const auto forget = [&](std::map<std::string, SteadyClock::time_point>::iterator it) {
    if (Status s = state_->forget_assumed(it->first); !s.ok()) {
      fmt::print(stderr, "greensched serve: forgetting the assumption of {}: {}\n", it->first,
                 s.message());
    }
    if (it->second <= now) assume_expired_.fetch_add(1, std::memory_order_relaxed);
    return assumed_until_.erase(it);
  };
  if (key != nullptr) {
    if (auto it = assumed_until_.find(*key); it != assumed_until_.end()) forget(it);
  }
  assumed_count_.store(static_cast<int64_t>(assumed_until_.size()), std::memory_order_relaxed);
  // The earliest expiry may be early (its entry gone since): then this scan finds less to do.
  if (steady_ns(now) < next_expiry_ns_.load(std::memory_order_relaxed)) return;
  int64_t next = INT64_MAX;
  for (auto it = assumed_until_.begin(); it != assumed_until_.end();) {
    if (it->second <= now) {
      it = forget(it);
      continue;
    }
    next = std::min(next, steady_ns(it->second));
    ++it;
  }
  next_expiry_ns_.store(next, std::memory_order_relaxed);
  assumed_count_.store(static_cast<int64_t>(assumed_until_.size()), std::memory_order_relaxed);
}

void Extender::forget_all_assumptions() {
  for (const auto& [key, until] : assumed_until_) {
    if (Status s = state_->forget_assumed(key); !s.ok()) {
      fmt::print(stderr, "greensched serve: forgetting the assumption of {}: {}\n", key,
                 s.message());
    }
  }
  assumed_until_.clear();
  next_expiry_ns_.store(INT64_MAX, std::memory_order_relaxed);
  assumed_count_.store(0, std::memory_order_relaxed);
}

void Extender::settle_assumptions(const std::string& key) {
  if (assumed_count_.load(std::memory_order_relaxed) == 0) return;
  const auto now = SteadyClock::now();
  bool act = steady_ns(now) >= next_expiry_ns_.load(std::memory_order_relaxed);
  if (!act) {
    std::shared_lock lock(state_mu_);
    act = assumed_until_.contains(key);
  }
  if (!act) return;
  std::unique_lock lock(state_mu_);
  expire_assumptions(now, &key);
}

void Extender::assume(const std::string& key, const std::string& node_name) {
  const auto now = SteadyClock::now();
  expire_assumptions(now, &key);
  if (state_->find_pod(key) != nullptr) return;
  const PodRequest* pending = pending_.find(key);
  const std::optional<NodeIndex> node = state_->find_node(node_name);
  if (pending == nullptr || !node) return;
  const PodSpec spec = state_->pod_spec(*pending);
  const Cluster& cluster = state_->cluster();
  // Another writer may have taken the room since prioritize scored it: then nothing is held,
  // and the bind decides on the state it finds.
  if (policy::filter_node(cluster.spec(*node), cluster.state(*node), spec) !=
      policy::FilterReason::kFits) {
    return;
  }
  const GpuMask gpus = state_->policy().select_gpus(cluster, *node, spec, state_->rng());
  if (Status s = state_->assume(*pending, node_name, gpus); !s.ok()) {
    fmt::print(stderr, "greensched serve: assuming {} on {}: {}\n", key, node_name, s.message());
    return;
  }
  const auto until = now + std::chrono::milliseconds(options_.assume_ttl_ms);
  assumed_until_[key] = until;
  next_expiry_ns_.store(std::min(next_expiry_ns_.load(std::memory_order_relaxed), steady_ns(until)),
                        std::memory_order_relaxed);
  assumed_count_.store(static_cast<int64_t>(assumed_until_.size()), std::memory_order_relaxed);
}

// A request's node names and their nodes (see Extender::last_names_). The names are kept back
// to back in one text; a node added later may carry a name that was unknown, so the nodes are
// valid while the state has `known` nodes (nodes are only ever added).
struct Extender::ResolvedNames {
  std::string text;
  std::vector<uint32_t> end;     // name i is text[end[i-1], end[i])
  std::vector<NodeIndex> nodes;  // -1: unknown
  std::size_t known = 0;
  mutable std::once_flag order_once;
  mutable std::shared_ptr<const std::vector<uint32_t>> order;

  std::size_t size() const { return end.size(); }
  std::string_view name(std::size_t i) const {
    const uint32_t begin = i == 0 ? 0 : end[i - 1];
    return std::string_view(text).substr(begin, end[i] - begin);
  }
  bool same_names(const std::vector<std::string>& names) const {
    if (names.size() != size()) return false;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] != name(i)) return false;
    }
    return true;
  }
  // Every position, ordered by name (request order among equal names); made on first use.
  std::shared_ptr<const std::vector<uint32_t>> name_order() const {
    std::call_once(order_once, [this] {
      auto o = std::make_shared<std::vector<uint32_t>>(size());
      for (uint32_t i = 0; i < o->size(); ++i) (*o)[i] = i;
      std::stable_sort(o->begin(), o->end(),
                       [this](uint32_t a, uint32_t b) { return name(a) < name(b); });
      order = std::move(o);
    });
    return order;
  }
};

std::shared_ptr<const Extender::ResolvedNames> Extender::resolve_names(
    const std::vector<std::string>& names, bool* reused) {
  const std::size_t known = state_->cluster().size();
  std::shared_ptr<const ResolvedNames> last;
  {
    std::lock_guard lock(names_mu_);
    last = last_names_;
  }
  *reused = last && last->known == known && last->same_names(names);
  if (*reused) return last;
  auto fresh = std::make_shared<ResolvedNames>();
  fresh->known = known;
  std::size_t chars = 0;
  for (const std::string& name : names) chars += name.size();
  if (chars > UINT32_MAX) return fresh;  // not kept; the caller looks the names up itself
  fresh->text.reserve(chars);
  fresh->end.reserve(names.size());
  fresh->nodes.reserve(names.size());
  for (const std::string& name : names) {
    fresh->text += name;
    fresh->end.push_back(static_cast<uint32_t>(fresh->text.size()));
    fresh->nodes.push_back(state_->find_node(name).value_or(-1));
  }
  std::lock_guard lock(names_mu_);
  last_names_ = fresh;
  return fresh;
}

FilterResult Extender::filter(ExtenderArgs& args) {
  settle_assumptions(args.pod.ref.key());
  FilterResult result;
  const std::size_t n = args.node_names.size();
  // Under the lock: decide, and copy what the messages need. The text is written after.
  enum class Verdict : uint8_t { kFits, kFails, kUnknown, kRejected, kBoundElsewhere };
  std::vector<Verdict> verdict(n, Verdict::kFits);
  std::vector<FilterFacts> facts(n);
  std::optional<GpuModelRegistry> models;
  PodSpec pod;
  nlohmann::json request;  // for the decision log, when no node fits
  std::string policy;
  {
    const RequestLock lock = lock_for_request(args, &result);
    pod = note_pending(args.pod);
    // A pod already bound (its bind was committed but the reply lost, e.g. in a crash) may
    // only go back to its node: the retried bind then answers as the first one did.
    const std::string bound_node = bound_node_of(args.pod.ref);
    const Cluster& cluster = state_->cluster();
    bool reused = false;
    const std::shared_ptr<const ResolvedNames> resolved = resolve_names(args.node_names, &reused);
    const bool have_nodes = resolved->size() == n;
    if (reused) result.name_order = resolved->name_order();
    bool any_fits = false;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& name = args.node_names[i];
      if (!result.failed_unresolvable.empty() && result.failed_unresolvable.contains(name)) {
        verdict[i] = Verdict::kRejected;
        continue;
      }
      const std::optional<NodeIndex> node = !have_nodes ? state_->find_node(name)
                                            : resolved->nodes[i] >= 0
                                                ? std::optional<NodeIndex>(resolved->nodes[i])
                                                : std::nullopt;
      if (!node) {
        verdict[i] = Verdict::kUnknown;
        continue;
      }
      if (!bound_node.empty()) {
        verdict[i] = name == bound_node ? Verdict::kFits : Verdict::kBoundElsewhere;
        any_fits |= name == bound_node;
        continue;
      }
      const NodeSpec& spec = cluster.spec(*node);
      const NodeState& s = cluster.state(*node);
      const policy::FilterReason reason = policy::filter_node(spec, s, pod);
      if (reason == policy::FilterReason::kFits) {
        any_fits = true;
        continue;
      }
      verdict[i] = Verdict::kFails;
      facts[i] = filter_facts(reason, spec, s);
    }
    // For the decision log: its texts and the request name GPU models.
    if (!any_fits && n > 0) {
      models = state_->models();
      request = sim::request_json(pod, *models);
      policy = state_->policy_spec();
    }
  }
  static const GpuModelRegistry kNoModels;
  const GpuModelRegistry& names = models ? *models : kNoModels;
  // Failed nodes by position (the reply writes their names); reasons counted per category.
  constexpr std::size_t kUnknownSlot = policy::kFilterReasonCount;
  constexpr std::size_t kBoundElsewhereSlot = kUnknownSlot + 1;
  std::array<int64_t, kBoundElsewhereSlot + 1> counts{};
  auto fail = [&](std::size_t i, std::string_view category, bool unresolvable, std::size_t slot) {
    result.failed_nodes.push_back(
        FilterResult::FailedNode{static_cast<uint32_t>(i), unresolvable, category});
    ++counts[slot];
  };
  result.failed_nodes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (verdict[i]) {
      case Verdict::kFits:
        result.passed.push_back(i);
        break;
      case Verdict::kRejected:
        ++result.reason_counts[result.failed_unresolvable[args.node_names[i]]];
        break;
      case Verdict::kUnknown:
        fail(i, kUnknownNodeCategory, true, kUnknownSlot);
        break;
      case Verdict::kBoundElsewhere:
        fail(i, kBoundElsewhereCategory, true, kBoundElsewhereSlot);
        break;
      case Verdict::kFails:
        fail(i, filter_category(facts[i].reason), filter_unresolvable(facts[i], pod),
             static_cast<std::size_t>(facts[i].reason));
        break;
    }
  }
  for (std::size_t slot = 0; slot < counts.size(); ++slot) {
    if (counts[slot] == 0) continue;
    const std::string_view category =
        slot == kUnknownSlot          ? kUnknownNodeCategory
        : slot == kBoundElsewhereSlot ? kBoundElsewhereCategory
                                      : filter_category(static_cast<policy::FilterReason>(slot));
    result.reason_counts[std::string(category)] += counts[slot];
  }
  if (result.passed.empty() && n > 0 && decision_log_) {
    // The numbers behind the categories, for `greensched explain --record <state>/decisions.jsonl`.
    nlohmann::json record;
    record["pod"] = args.pod.ref.key();
    record["uid"] = args.pod.ref.uid;
    record["policy"] = std::move(policy);
    record["request"] = std::move(request);
    record["nodes_total"] = n;
    record["feasible_nodes"] = 0;
    record["reason_counts"] = result.reason_counts;
    record["chosen_node"] = nullptr;
    nlohmann::json examples = nlohmann::json::object();
    nlohmann::json split_examples = nlohmann::json::array();
    int64_t split = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (verdict[i] != Verdict::kFails) continue;
      const FilterFacts& f = facts[i];
      nlohmann::json& some = examples[std::string(filter_category(f.reason))];
      if (some.size() < kLogExamples) {
        some[args.node_names[i]] = filter_message(f, pod, names);
      }
      // Enough free GPU in total, but not on single GPUs: fragmentation.
      const bool share = f.reason == policy::FilterReason::kInsufficientGpuShare &&
                         f.gpu_free_total_milli >= pod.gpu_milli;
      const bool whole = f.reason == policy::FilterReason::kInsufficientWholeGpus &&
                         f.gpu_free_total_milli >= int64_t{pod.num_gpu} * kGpuMilli;
      if (share || whole) {
        if (++split <= static_cast<int64_t>(kLogExamples)) {
          split_examples.push_back(args.node_names[i]);
        }
      }
    }
    record["reason_examples"] = std::move(examples);
    record["diagnosis"] = {{"split_gpu_nodes", split},
                           {"split_gpu_examples", std::move(split_examples)},
                           {"searched", false}};
    decision_log_->append(record);
  }
  return result;
}

std::vector<NodeIndex> Extender::nodes_in_order(const std::vector<std::string>& names) {
  std::vector<NodeIndex> out(names.size(), -1);
  std::shared_ptr<const ResolvedNames> last;
  {
    std::lock_guard lock(names_mu_);
    last = last_names_;
  }
  if (last && last->known != state_->cluster().size()) last.reset();
  // Each name is searched for after the previous one's place in the last list; once one is not
  // there, the rest are looked up by name.
  std::size_t j = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (last) {
      while (j < last->size() && last->name(j) != names[i]) ++j;
      if (j < last->size()) {
        out[i] = last->nodes[j++];
        continue;
      }
      last.reset();
    }
    out[i] = state_->find_node(names[i]).value_or(-1);
  }
  return out;
}

std::vector<HostPriority> Extender::prioritize(ExtenderArgs& args) {
  settle_assumptions(args.pod.ref.key());
  const std::size_t n = args.node_names.size();
  std::vector<int32_t> slot(n, -1);
  std::vector<policy::Candidate> candidates;
  candidates.reserve(n);
  {
    const RequestLock lock = lock_for_request(args, nullptr);
    const PodSpec pod = note_pending(args.pod);
    const std::string bound_node = bound_node_of(args.pod.ref);
    const Cluster& cluster = state_->cluster();
    const std::vector<NodeIndex> nodes = nodes_in_order(args.node_names);
    for (std::size_t i = 0; i < n; ++i) {
      const std::optional<NodeIndex> node =
          nodes[i] >= 0 ? std::optional<NodeIndex>(nodes[i]) : std::nullopt;
      if (!node) continue;
      if (!bound_node.empty()) {
        // Already bound (see filter): only its node, as the one candidate.
        if (args.node_names[i] == bound_node) {
          slot[i] = static_cast<int32_t>(candidates.size());
          candidates.push_back(policy::Candidate{*node, 0, 0});
        }
        continue;
      }
      if (policy::filter_node(cluster.spec(*node), cluster.state(*node), pod) !=
          policy::FilterReason::kFits) {
        continue;
      }
      slot[i] = static_cast<int32_t>(candidates.size());
      candidates.push_back(policy::Candidate{*node, 0, 0});
    }
    if (!candidates.empty() && bound_node.empty()) {
      std::lock_guard decide(decide_mu_);
      state_->policy().score(cluster, pod, candidates, state_->rng());
      state_->policy().normalize(candidates);
    }
  }
  int64_t low = 0;
  int64_t high = 0;
  if (!candidates.empty()) {
    low = high = candidates.front().score;
    for (const policy::Candidate& c : candidates) {
      low = std::min(low, c.score);
      high = std::max(high, c.score);
    }
  }
  // The node the policy itself would take: the best score, ties to the first node in the
  // extender's node order, as `greensched simulate` breaks them.
  std::optional<std::size_t> top;
  for (std::size_t i = 0; i < n; ++i) {
    if (slot[i] < 0) continue;
    const policy::Candidate& c = candidates[slot[i]];
    const policy::Candidate* t = top ? &candidates[slot[*top]] : nullptr;
    if (t == nullptr || c.score > t->score || (c.score == t->score && c.node < t->node)) top = i;
  }
  // Min-max over the candidates to 0..10, and 10 for that node alone (the others tied with it
  // get 9): kube-scheduler draws at random among equal best totals (1.20.5 upstream and later),
  // which on a lightly used cluster spreads pods over the hundreds of nodes FGD ties.
  std::vector<HostPriority> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    int64_t score = 0;
    if (slot[i] >= 0) {
      const int64_t s = candidates[slot[i]].score;
      score = high == low ? kMaxExtenderScore : (s - low) * kMaxExtenderScore / (high - low);
      if (i != *top) score = std::min(score, kMaxExtenderScore - 1);
    }
    out.push_back(HostPriority{args.node_names[i], score});
  }
  if (top && options_.assume_ttl_ms > 0) {
    std::unique_lock lock(state_mu_);
    // A pod already bound keeps its node (see filter): nothing to assume.
    if (bound_node_of(args.pod.ref).empty()) assume(args.pod.ref.key(), args.node_names[*top]);
  }
  return out;
}

void Extender::set_binder(Binder binder) {
  auto shared = std::make_shared<const Binder>(std::move(binder));
  std::lock_guard lock(state_mu_);
  binder_ = std::move(shared);
}

void Extender::maybe_compact() {
  if (journal_->stats().since_snapshot < options_.compact_every) return;
  if (Status s = journal_->compact(state_->snapshot_entry()); !s.ok()) {
    fmt::print(stderr, "greensched serve: journal compaction failed: {}\n", s.message());
  }
}

void Extender::undo_bind(const PodRef& ref, const std::string& node) {
  std::lock_guard lock(state_mu_);
  const BoundPod* pod = state_->find_pod(ref.key());
  if (pod != nullptr && pod->node == node && pod->request.ref.uid == ref.uid) {
    if (Status s = state_->release(ref.key()); !s.ok()) {
      fmt::print(stderr, "greensched serve: undoing the bind of {}: {}\n", ref.key(), s.message());
    }
  }
}

BindOutcome Extender::bind(const BindingArgs& args) {
  BindOutcome out;
  const std::string key = args.pod.key();
  std::unique_lock lock(state_mu_);
  if (Status h = health(); !h.ok()) {
    out.error = h.message();
    return out;
  }
  // The pod's assumption becomes its binding when kube-scheduler chose the node prioritize
  // assumed; otherwise it is forgotten and the bind decides afresh.
  const auto now = SteadyClock::now();
  expire_assumptions(now, nullptr);
  bool confirmed = false;
  if (const BoundPod* assumed = state_->find_assumed(key)) {
    const bool same_uid = args.pod.uid.empty() || assumed->request.ref.uid.empty() ||
                          assumed->request.ref.uid == args.pod.uid;
    if (same_uid && assumed->node == args.node && state_->find_pod(key) == nullptr) {
      confirmed = state_->confirm_assumed(key, args.pod.uid).ok();
    }
    if (!confirmed) {
      assume_misses_.fetch_add(1, std::memory_order_relaxed);
      expire_assumptions(now, &key);
    } else {
      assumed_until_.erase(key);
      assumed_count_.store(static_cast<int64_t>(assumed_until_.size()), std::memory_order_relaxed);
    }
  }
  std::vector<std::string> entries;
  std::string error;
  PodRequest request;
  GpuMask gpus = 0;
  if (confirmed) {
    const BoundPod* pod = state_->find_pod(key);
    request = pod->request;
    gpus = pod->gpus;
  } else {
    if (const BoundPod* existing = state_->find_pod(key)) {
      const bool same_pod = args.pod.uid.empty() || existing->request.ref.uid.empty() ||
                            existing->request.ref.uid == args.pod.uid;
      if (same_pod && existing->node == args.node) {
        out.gpu_index = format_gpu_index(existing->gpus);  // a retried bind: already done
        return out;
      }
      if (same_pod) {
        out.error = fmt::format("pod {} is already bound to node {}", key, existing->node);
        return out;
      }
      // Same namespace/name, new UID: the old pod is gone (names are unique among live pods).
      entries.push_back(ClusterState::release_entry(existing->request.ref));
      if (Status s = state_->release(key); !s.ok()) {
        out.error = fmt::format("pod {}: releasing its old UID: {}", key, s.message());
        return out;
      }
    }
    const PodRequest* pending = pending_.find(key);
    std::optional<NodeIndex> node;
    if (pending == nullptr) {
      error = fmt::format(
          "pod {} was not seen by filter or prioritize (or was forgotten since); kube-scheduler "
          "retries it from filter",
          key);
    } else if (!args.pod.uid.empty() && !pending->ref.uid.empty() &&
               pending->ref.uid != args.pod.uid) {
      error = fmt::format("pod {} was filtered as UID {} but is bound as UID {}", key,
                          pending->ref.uid, args.pod.uid);
    } else if (node = state_->find_node(args.node); !node) {
      error = fmt::format("cannot bind pod {}: unknown node {}", key, args.node);
    }
    if (error.empty()) {
      request = *pending;
      if (!args.pod.uid.empty()) request.ref.uid = args.pod.uid;
      const PodSpec spec = state_->pod_spec(request);
      const Cluster& cluster = state_->cluster();
      const policy::FilterReason reason =
          policy::filter_node(cluster.spec(*node), cluster.state(*node), spec);
      if (reason != policy::FilterReason::kFits) {
        error = fmt::format(
            "cannot bind pod {} to node {}: {}", key, args.node,
            filter_message(filter_facts(reason, cluster.spec(*node), cluster.state(*node)), spec,
                           state_->models()));
      } else {
        gpus = state_->policy().select_gpus(cluster, *node, spec, state_->rng());
        if (Status s = state_->bind(request, args.node, gpus); !s.ok()) {
          error = fmt::format("cannot bind pod {} to node {}: {}", key, args.node, s.message());
        }
      }
    }
  }
  if (error.empty()) {
    entries.push_back(ClusterState::bind_entry(*state_->find_pod(key)));
    pending_.erase(key);
  }
  uint64_t ticket = 0;
  if (!entries.empty()) ticket = journal_->enqueue(std::move(entries));
  if (error.empty()) maybe_compact();
  const std::shared_ptr<const Binder> binder = binder_;
  lock.unlock();

  if (ticket != 0) {
    if (Status s = journal_->wait_durable(ticket); !s.ok()) {
      if (error.empty()) undo_bind(request.ref, args.node);
      out.error = fmt::format("pod {} not bound: {}", key, s.message());
      return out;
    }
  }
  if (!error.empty()) {
    out.error = std::move(error);
    return out;
  }
  out.gpu_index = format_gpu_index(gpus);
  if (binder && *binder) {
    if (Status s = (*binder)(args, out.gpu_index); !s.ok()) {
      lock.lock();
      uint64_t undo = 0;
      std::string undo_error;
      const BoundPod* pod = state_->find_pod(key);
      if (pod != nullptr && pod->node == args.node && pod->request.ref.uid == request.ref.uid) {
        const PodRef ref = pod->request.ref;
        if (Status r = state_->release(key); r.ok()) {
          undo = journal_->enqueue({ClusterState::release_entry(ref)});
        } else {
          undo_error = r.message();
        }
      }
      lock.unlock();
      if (undo != 0) {
        if (Status d = journal_->wait_durable(undo); !d.ok()) undo_error = d.message();
      }
      out.error = fmt::format("pod {}: binding through the API server failed: {}{}", key,
                              s.message(), undo_error.empty() ? "" : "; undoing it: " + undo_error);
      out.gpu_index.clear();
    }
  }
  return out;
}

ReleaseOutcome Extender::release(const PodRef& ref) {
  ReleaseOutcome out;
  const std::string key = ref.key();
  std::unique_lock lock(state_mu_);
  pending_.erase(key);
  expire_assumptions(SteadyClock::now(), &key);  // a pod deleted before its bind
  if (Status h = health(); !h.ok()) {
    out.http_status = 503;
    out.error = h.message();
    return out;
  }
  const BoundPod* pod = state_->find_pod(key);
  if (pod == nullptr) {
    out.http_status = 404;
    out.error = fmt::format("pod {} holds no allocation", key);
    return out;
  }
  if (!ref.uid.empty() && !pod->request.ref.uid.empty() && ref.uid != pod->request.ref.uid) {
    out.http_status = 409;
    out.error =
        fmt::format("pod {} is bound as UID {}, not {}", key, pod->request.ref.uid, ref.uid);
    return out;
  }
  const std::string entry = ClusterState::release_entry(pod->request.ref);
  if (Status s = state_->release(key); !s.ok()) {
    out.http_status = 500;
    out.error = s.message();
    return out;
  }
  const uint64_t ticket = journal_->enqueue({entry});
  lock.unlock();
  if (Status s = journal_->wait_durable(ticket); !s.ok()) {
    out.http_status = 503;
    out.error = s.message();
  }
  return out;
}

bool Extender::mark_movable(const PodRef& ref, bool movable) {
  const std::string key = ref.key();
  const auto changes = [&] {
    const BoundPod* pod = state_->find_pod(key);
    return pod != nullptr && pod->request.movable != movable &&
           (ref.uid.empty() || pod->request.ref.uid.empty() || pod->request.ref.uid == ref.uid);
  };
  {
    std::shared_lock lock(state_mu_);
    if (!changes()) return false;
  }
  std::unique_lock lock(state_mu_);
  if (!changes() || !health().ok()) return false;
  if (!state_->set_movable(key, movable).ok()) return false;
  const BoundPod& pod = *state_->find_pod(key);
  const uint64_t ticket = journal_->enqueue(
      {ClusterState::release_entry(pod.request.ref), ClusterState::bind_entry(pod)});
  lock.unlock();
  return journal_->wait_durable(ticket).ok();
}

std::optional<nlohmann::json> Extender::pod(const std::string& ns, const std::string& name) {
  std::shared_lock lock(state_mu_);
  const BoundPod* p = state_->find_pod(ns + "/" + name);
  if (p == nullptr) return std::nullopt;
  return ClusterState::pod_json(*p);
}

nlohmann::json Extender::pods() {
  nlohmann::json out = nlohmann::json::array();
  std::shared_lock lock(state_mu_);
  for (const auto& [key, p] : state_->pods()) out.push_back(ClusterState::pod_json(p));
  return out;
}

StateGauges Extender::gauges() {
  StateGauges g;
  g.journal = journal_->stats();
  std::shared_lock lock(state_mu_);
  const Cluster& cluster = state_->cluster();
  g.nodes.reserve(cluster.size());
  for (std::size_t n = 0; n < cluster.size(); ++n) {
    const auto node = static_cast<NodeIndex>(n);
    const NodeSpec& spec = cluster.spec(node);
    const NodeState& s = cluster.state(node);
    NodeGauge ng;
    ng.name = spec.name;
    ng.gpu_model = spec.model == kNoGpuModel ? std::string() : state_->models().name(spec.model);
    ng.gpu_capacity_milli = int64_t{spec.gpu_count} * kGpuMilli;
    ng.gpu_allocated_milli = ng.gpu_capacity_milli - s.gpu_free_total_milli;
    ng.pods = s.pods;
    ng.power_watts = state_->node_power_watts(node);
    g.nodes.push_back(std::move(ng));
  }
  g.gpu_capacity_milli = cluster.total_gpu_milli();
  g.gpu_allocated_milli = cluster.allocated_gpu_milli();
  g.fragmentation_gpu_milli = state_->fragmentation_gpu_milli();
  g.power_watts = state_->power_watts();
  g.pue = state_->pue();
  g.pods = static_cast<int64_t>(state_->pods().size());
  g.assumed = static_cast<int64_t>(state_->assumed().size());
  g.assume_misses = assume_misses_.load(std::memory_order_relaxed);
  g.assume_expired = assume_expired_.load(std::memory_order_relaxed);
  {
    std::lock_guard decide(decide_mu_);
    g.pending = static_cast<int64_t>(pending_.size());
  }
  g.policy = state_->policy_spec();
  return g;
}

Status Extender::health() const {
  const JournalStats s = journal_->stats();
  if (s.failed)
    return Error{fmt::format("journal failed, changes refused until restart: {}", s.failure)};
  return Status::Ok();
}

}  // namespace greensched::serve
