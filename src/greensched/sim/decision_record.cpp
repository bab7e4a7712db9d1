#include "greensched/sim/decision_record.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "greensched/core/rng.hpp"

namespace greensched::sim {
namespace {

using nlohmann::json;

// The used GPU milli of each GPU of `node`, by GPU index, as the decision saw it.
json gpus_used(const Cluster& c, NodeIndex node) {
  json out = json::array();
  const NodeState& s = c.state(node);
  for (int g = 0; g < c.spec(node).gpu_count; ++g) out.push_back(kGpuMilli - s.gpu_free_milli[g]);
  return out;
}

// A node's GPU model by name ("no GPU" for a node without one).
std::string gpu_type(const NodeSpec& spec, const GpuModelRegistry& models) {
  if (spec.gpu_count == 0 || spec.model == kNoGpuModel) return "no GPU";
  if (spec.model >= models.size()) return fmt::format("GPU model {}", int{spec.model});
  return models.name(spec.model);
}

// Fragmentation (GPU milli) and power (watts) change of placing `pod` on `gpus` of `node`.
std::pair<std::optional<double>, std::optional<double>> deltas(const RecordInputs& in,
                                                               const PodSpec& pod, NodeIndex node,
                                                               GpuMask gpus) {
  const NodeSpec& spec = in.cluster->spec(node);
  const NodeState& s = in.cluster->state(node);
  auto after = s.gpu_free_milli;
  for (int g = 0; g < spec.gpu_count; ++g) {
    if ((gpus >> g) & 1U) after[g] -= pod.gpu_milli;
  }
  const int64_t cpu_after = s.cpu_free_milli - pod.cpu_milli;
  std::optional<double> frag, power;
  if (in.frag != nullptr && in.frag->covered_pods() > 0) {
    const int64_t before =
        in.frag->scaled_frag(spec.model, spec.gpu_count, s.cpu_free_milli, s.gpu_free_milli.data());
    const int64_t now = in.frag->scaled_frag(spec.model, spec.gpu_count, cpu_after, after.data());
    frag = in.frag->to_gpu_milli(now - before);
  }
  if (in.power != nullptr) {
    const power::NodePower& fig = (*in.power)[node];
    power = power::node_power_watts(spec, fig, cpu_after, after.data()) -
            power::node_power_watts(spec, fig, s.cpu_free_milli, s.gpu_free_milli.data());
  }
  return {frag, power};
}

json optional_number(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

// The smallest cut of one request dimension that would let the pod fit on some node.
json shrink_counterfactual(const RecordInputs& in, const PodSpec& pod) {
  const Cluster& c = *in.cluster;
  struct Option {
    std::string dimension;
    int64_t from = 0, to = 0;
    NodeIndex node = -1;
    double cut() const {
      return from > 0 ? static_cast<double>(from - to) / static_cast<double>(from) : 1.0;
    }
  };
  std::vector<Option> options;
  const auto consider = [&](const std::string& dim, int64_t from, auto fits_without, auto room) {
    Option best{dim, from, 0, -1};
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
      if (!fits_without(n)) continue;
      const int64_t r = room(n);
      if (r > best.to && r < from) {
        best.to = r;
        best.node = n;
      }
    }
    if (best.node >= 0 && best.to > 0) options.push_back(best);
  };
  // Everything but the dimension in question fits: test with that dimension made unlimited.
  const auto passes = [&](NodeIndex n, auto relax) {
    NodeState s = c.state(n);
    PodSpec p = pod;
    relax(s, p);
    return policy::filter_node(c.spec(n), s, p) == policy::FilterReason::kFits;
  };
  if (pod.needs_gpu() && pod.num_gpu == 1) {
    consider(
        "gpu_milli", pod.gpu_milli,
        [&](NodeIndex n) {
          return passes(n, [](NodeState&, PodSpec& p) { p.gpu_milli = 1; }) &&
                 c.spec(n).gpu_count > 0;
        },
        [&](NodeIndex n) { return int64_t{c.state(n).max_gpu_free_milli}; });
  }
  if (pod.needs_gpu() && pod.num_gpu > 1) {
    consider(
        "num_gpu", pod.num_gpu,
        [&](NodeIndex n) {
          return passes(n, [](NodeState&, PodSpec& p) {
            p.num_gpu = 1;
            p.gpu_milli = 1;
          });
        },
        [&](NodeIndex n) { return int64_t{c.state(n).whole_free_gpus}; });
  }
  consider(
      "cpu_milli", pod.cpu_milli,
      [&](NodeIndex n) {
        return passes(n, [](NodeState& s, PodSpec&) {
          s.cpu_free_milli = std::numeric_limits<int64_t>::max();
        });
      },
      [&](NodeIndex n) { return c.state(n).cpu_free_milli; });
  consider(
      "memory_mib", pod.memory_mib,
      [&](NodeIndex n) {
        return passes(n, [](NodeState& s, PodSpec&) {
          s.memory_free_mib = std::numeric_limits<int64_t>::max();
        });
      },
      [&](NodeIndex n) { return c.state(n).memory_free_mib; });
  if (options.empty()) return nullptr;
  const Option& best =
      *std::min_element(options.begin(), options.end(),
                        [](const Option& a, const Option& b) { return a.cut() < b.cut(); });
  return json{{"dimension", best.dimension},
              {"from", best.from},
              {"to", best.to},
              {"cut_pct", 100.0 * best.cut()},
              {"node", c.spec(best.node).name}};
}

// The smallest placed pod whose removal from one node would let the pod fit there.
json move_counterfactual(const RecordInputs& in, const PodSpec& pod) {
  if (!in.pod_of) return nullptr;
  const Cluster& c = *in.cluster;
  json best = nullptr;
  int64_t best_gpu = 0, best_cpu = 0;
  c.for_each_allocation([&](PodId id, const Allocation& a) {
    const NodeSpec& spec = c.spec(a.node);
    NodeState s = c.state(a.node);
    if (!s.online) return;
    s.cpu_free_milli += a.cpu_milli;
    s.memory_free_mib += a.memory_mib;
    for (int g = 0; g < spec.gpu_count; ++g) {
      if ((a.gpus >> g) & 1U) s.gpu_free_milli[g] += a.gpu_milli_each;
    }
    Cluster::refresh_derived(s, spec.gpu_count);
    if (policy::filter_node(spec, s, pod) != policy::FilterReason::kFits) return;
    const int64_t gpu = int64_t{gpu_mask_count(a.gpus)} * a.gpu_milli_each;
    if (!best.is_null() && std::pair(gpu, a.cpu_milli) >= std::pair(best_gpu, best_cpu)) return;
    const PodSpec* moved = in.pod_of(id);
    best = json{{"pod", moved != nullptr ? moved->name : std::to_string(id)},
                {"node", spec.name},
                {"frees_gpu_milli", gpu},
                {"frees_cpu_milli", a.cpu_milli},
                {"frees_memory_mib", a.memory_mib}};
    best_gpu = gpu;
    best_cpu = a.cpu_milli;
  });
  return best;
}

}  // namespace

json gpu_list(GpuMask mask) {
  json out = json::array();
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if ((mask >> g) & 1U) out.push_back(g);
  }
  return out;
}

json request_json(const PodSpec& pod, const GpuModelRegistry& models) {
  json spec = json::array();
  for (std::size_t i = 0; i < models.size(); ++i) {
    if ((pod.gpu_spec >> i) & 1U) spec.push_back(models.name(static_cast<GpuModelId>(i)));
  }
  return json{{"cpu_milli", pod.cpu_milli},
              {"memory_mib", pod.memory_mib},
              {"num_gpu", pod.needs_gpu() ? pod.num_gpu : 0},
              {"gpu_milli", pod.needs_gpu() ? pod.gpu_milli : 0},
              {"gpu_spec", spec}};
}

json make_record(const RecordInputs& in, const PodSpec& pod, const policy::Decision& decision,
                 int64_t step, std::optional<double> time_s) {
  const Cluster& c = *in.cluster;
  policy::Scheduler& scheduler = *in.scheduler;
  policy::Policy& pol = scheduler.policy();
  json r;
  r["pod"] = pod.name;
  r["step"] = step;
  r["time_s"] = optional_number(time_s);
  r["policy"] = std::string(pol.name());
  r["request"] = request_json(pod, *in.models);
  r["nodes_total"] = c.size();
  r["feasible_nodes"] = decision.feasible_nodes;
  json reasons = json::object();
  if (in.counts != nullptr) {
    for (int i = 0; i < policy::kFilterReasonCount; ++i) {
      const auto reason = static_cast<policy::FilterReason>(i);
      if (reason == policy::FilterReason::kFits || in.counts->by_reason[i] == 0) continue;
      reasons[std::string(policy::describe(reason))] = in.counts->by_reason[i];
    }
  }
  r["reason_counts"] = reasons;

  // The best candidates, as the scheduler ranks them.
  const std::vector<policy::Candidate>& cands = scheduler.last_candidates();
  std::vector<std::size_t> order(cands.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto& rank = scheduler.tie_rank();
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (cands[a].score != cands[b].score) return cands[a].score > cands[b].score;
    return rank[cands[a].node] < rank[cands[b].node];
  });
  Rng scratch(step);
  json top = json::array();
  for (std::size_t k = 0; k < order.size() && k < static_cast<std::size_t>(std::max(in.top_k, 2));
       ++k) {
    const policy::Candidate& cand = cands[order[k]];
    const GpuMask gpus =
        cand.node == decision.node ? decision.gpus : pol.select_gpus(c, cand.node, pod, scratch);
    const auto [frag, power] = deltas(in, pod, cand.node, gpus);
    json terms = json::array();
    for (const policy::TermScore& t : pol.terms(cands, order[k])) {
      terms.push_back(
          json{{"policy", t.name}, {"weight", t.weight}, {"raw", t.raw}, {"score", t.score}});
    }
    top.push_back(json{{"node", c.spec(cand.node).name},
                       {"tie_rank", rank[cand.node]},
                       {"score", cand.score},
                       {"terms", terms},
                       {"gpus", gpu_list(gpus)},
                       {"frag_delta_milli", optional_number(frag)},
                       {"power_delta_watts", optional_number(power)}});
  }
  r["candidates"] = top;

  if (decision.node >= 0) {
    r["chosen_node"] = c.spec(decision.node).name;
    r["chosen_gpus"] = gpu_list(decision.gpus);
    r["chosen_gpus_before"] = gpus_used(c, decision.node);
    r["score"] = decision.score;
    const auto [frag, power] = deltas(in, pod, decision.node, decision.gpus);
    r["frag_delta_milli"] = optional_number(frag);
    r["power_delta_watts"] = optional_number(power);
    if (order.size() > 1) {
      const policy::Candidate& second = cands[order[1]];
      r["runner_up"] = c.spec(second.node).name;
      r["runner_up_score"] = second.score;
      r["margin"] = decision.score - second.score;
      r["tie_broken"] = decision.score == second.score;
    } else {
      r["runner_up"] = nullptr;
      r["runner_up_score"] = nullptr;
      r["margin"] = nullptr;
      r["tie_broken"] = false;
    }
    return r;
  }

  r["chosen_node"] = nullptr;
  r["chosen_gpus"] = json::array();
  int64_t split = 0;
  json examples = json::array();
  json by_type = json::object();
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
    const policy::FilterReason reason = policy::filter_node(c.spec(n), c.state(n), pod);
    if (reason != policy::FilterReason::kFits) {
      json& count = by_type[gpu_type(c.spec(n), *in.models)][std::string(policy::describe(reason))];
      count = count.is_null() ? 1 : count.get<int64_t>() + 1;
    }
    if ((reason == policy::FilterReason::kInsufficientGpuShare ||
         reason == policy::FilterReason::kInsufficientWholeGpus) &&
        c.state(n).gpu_free_total_milli >= pod.total_gpu_milli()) {
      ++split;
      if (examples.size() < 3) examples.push_back(c.spec(n).name);
    }
  }
  r["reason_counts_by_type"] = by_type;
  r["diagnosis"] = json{{"split_gpu_nodes", split},
                        {"split_gpu_examples", examples},
                        {"shrink", shrink_counterfactual(in, pod)},
                        {"move", move_counterfactual(in, pod)}};
  return r;
}

namespace {

// A move as records write it (rescued_by_moves.moves and a drain's moves).
json move_json(const defrag::Move& m, const Cluster& cluster, const PodSpec* p) {
  return {{"pod", p != nullptr ? p->name : fmt::format("pod {}", m.pod)},
          {"from", cluster.spec(m.from).name},
          {"from_gpus", gpu_list(m.from_gpus)},
          {"to", cluster.spec(m.to).name},
          {"to_gpus", gpu_list(m.to_gpus)},
          {"gpu_milli", m.gpu_milli},
          {"cpu_milli", p != nullptr ? p->cpu_milli : 0}};
}

}  // namespace

json rescue_json(const defrag::FitPlan& plan, const Cluster& cluster,
                 const std::function<const PodSpec*(PodId)>& pod_of) {
  json moves = json::array();
  int64_t freed_gpu = 0;
  int64_t freed_cpu = 0;
  for (const defrag::Move& m : plan.moves) {
    const PodSpec* p = pod_of ? pod_of(m.pod) : nullptr;
    const int64_t cpu = p != nullptr ? p->cpu_milli : 0;
    moves.push_back(move_json(m, cluster, p));
    // GPU freed on the GPUs the pod took; CPU freed on its node, net of pods moved onto it.
    const int64_t each = m.gpu_milli / std::max(1, gpu_mask_count(m.from_gpus));
    if (m.from == plan.node) {
      freed_gpu += each * gpu_mask_count(m.from_gpus & plan.gpus);
      freed_cpu += cpu;
    }
    if (m.to == plan.node) {
      freed_gpu -= each * gpu_mask_count(m.to_gpus & plan.gpus);
      freed_cpu -= cpu;
    }
  }
  return {{"node", cluster.spec(plan.node).name},
          {"gpus", gpu_list(plan.gpus)},
          {"moves", std::move(moves)},
          {"freed", {{"gpu_milli", freed_gpu}, {"cpu_milli", freed_cpu}}}};
}

nlohmann::json drain_record(std::string_view policy, NodeIndex node,
                            const std::vector<defrag::Move>& moves,
                            const std::vector<int64_t>& lost_s, const Cluster& cluster,
                            const std::function<const PodSpec*(PodId)>& pod_of,
                            const DrainEstimate& estimate, int64_t step, double time_s,
                            double busy_until_s) {
  json out = json::array();
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const defrag::Move& m = moves[i];
    json mv = move_json(m, cluster, pod_of ? pod_of(m.pod) : nullptr);
    mv["lost_s"] = i < lost_s.size() ? lost_s[i] : 0;
    out.push_back(std::move(mv));
  }
  const auto kwh = [](double j) { return j / 3.6e6; };
  return {{"kind", "drain"},
          {"step", step},
          {"time_s", time_s},
          {"policy", std::string(policy)},
          {"node", cluster.spec(node).name},
          {"busy_until_s", busy_until_s},
          {"moves", std::move(out)},
          {"estimate",
           {{"spared_kwh", kwh(estimate.spared_j)},
            {"moved_saving_kwh", kwh(estimate.moved_saving_j)},
            {"lost_kwh", kwh(estimate.lost_j)},
            {"kept_awake_kwh", kwh(estimate.kept_awake_j)},
            {"net_kwh", kwh(estimate.net_j())}}}};
}

std::string tag_run_records(std::string_view records, std::string_view key, std::string_view name,
                            uint64_t seed) {
  const std::string prefix =
      fmt::format("{{\"run\":{{\"{}\":{},\"seed\":{}}},", key,
                  nlohmann::json(std::string(name))
                      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  seed);
  std::string out;
  out.reserve(records.size() + prefix.size() * static_cast<std::size_t>(std::count(
                                                   records.begin(), records.end(), '\n')));
  while (!records.empty()) {
    const std::size_t nl = records.find('\n');
    const std::string_view line = records.substr(0, nl);
    records.remove_prefix(nl == std::string_view::npos ? records.size() : nl + 1);
    if (line.size() < 2 || line.front() != '{') continue;
    out += prefix;
    out += line.substr(1);
    out += '\n';
  }
  return out;
}

}  // namespace greensched::sim
