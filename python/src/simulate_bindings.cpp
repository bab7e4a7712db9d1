// simulate and replay for Python: the command line's `simulate` and `simulate --mode replay`
// over the same library calls (sim::run_experiments, sim::run_replay_each), returning tables
// of numpy arrays and, with `out`, writing the same files as the command line.
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "greensched/core/parallel_for.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/report/results_writer.hpp"
#include "greensched/report/timeline_writer.hpp"
#include "greensched/sim/decision_record.hpp"
#include "greensched/sim/experiment.hpp"
#include "greensched/sim/queue_discipline.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/csv.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "python_policy.hpp"

namespace greensched::python {

trace::Workload load_workload(const std::string& nodes, const std::string& pods, bool replay) {
  if (nodes.empty() != pods.empty()) {
    throw BindingError("give both nodes and pods, or neither for the built-in workload");
  }
  if (!nodes.empty()) return unwrap(trace::load_openb_workload(nodes, pods));
  trace::Workload workload = trace::builtin_openb_workload();
  if (replay) {
    trace::assign_synthetic_times(workload.pods, 20230101, 28);
    workload.pods_source += " (durations and arrivals from the openb statistics)";
  }
  return workload;
}

power::PowerModel load_power_model(const std::string& path, double pue) {
  power::PowerModel model = power::PowerModel::builtin();
  if (!path.empty()) model = unwrap(power::PowerModel::load(path));
  if (pue != 0) {
    if (!(pue >= 1.0)) throw BindingError("pue must be >= 1.0");
    model.set_pue(pue);
  }
  return model;
}

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::vector<std::string> policy_list(const std::vector<std::string>& policies) {
  std::string joined;
  for (const std::string& p : policies) joined += (joined.empty() ? "" : ",") + p;
  return unwrap(sim::parse_policy_list(joined));
}

// The worker threads: one where a Python policy runs (it holds the GIL for every pod).
int worker_count(const std::vector<std::string>& policies, int jobs) {
  for (const std::string& p : policies) {
    if (uses_python_policy(p)) return 1;
  }
  return jobs;
}

// Runs `fn` without the GIL, then raises what a Python policy raised meanwhile.
template <typename Fn>
auto run_released(Fn&& fn) {
  clear_policy_error();
  std::optional<decltype(fn())> out;
  {
    py::gil_scoped_release release;
    out.emplace(fn());
  }
  rethrow_policy_error();
  return std::move(*out);
}

py::dict inflation_tables(const trace::Workload& workload,
                          const std::vector<sim::RunResult>& results) {
  std::vector<std::string> policy, c_policy, o_policy, o_node, o_model;
  std::vector<int64_t> seed, arrived, scheduled, failed, arrived_milli, allocated_milli,
      cluster_milli;
  std::vector<double> tune, at90, at100, at130, frag100, final_pct, power100, wall;
  std::vector<int64_t> c_seed, c_pct, c_events, o_seed, o_pct, o_gpu, o_used;
  std::vector<double> c_alloc, c_frag, c_power;
  for (const sim::RunResult& r : results) {
    policy.push_back(r.spec.policy);
    seed.push_back(static_cast<int64_t>(r.spec.seed));
    tune.push_back(r.spec.tune);
    arrived.push_back(r.pods_arrived);
    scheduled.push_back(r.pods_scheduled);
    failed.push_back(r.pods_failed);
    const auto alloc_at = [&](int pct) {
      auto p = sim::point_at(r.curve, pct);
      return p ? p->alloc_gpu_pct : kNan;
    };
    at90.push_back(alloc_at(90));
    at100.push_back(alloc_at(100));
    at130.push_back(alloc_at(130));
    const auto p100 = sim::point_at(r.curve, 100);
    frag100.push_back(p100 ? p100->frag_gpu_milli : kNan);
    power100.push_back(p100 ? p100->power_watts : kNan);
    final_pct.push_back(r.cluster_gpu_milli > 0
                            ? 100.0 * static_cast<double>(r.allocated_gpu_milli) /
                                  static_cast<double>(r.cluster_gpu_milli)
                            : 0.0);
    arrived_milli.push_back(r.arrived_gpu_milli);
    allocated_milli.push_back(r.allocated_gpu_milli);
    cluster_milli.push_back(r.cluster_gpu_milli);
    wall.push_back(r.wall_seconds);
    for (const sim::CurvePoint& p : r.curve) {
      c_policy.push_back(r.spec.policy);
      c_seed.push_back(static_cast<int64_t>(r.spec.seed));
      c_pct.push_back(p.arrived_pct);
      c_events.push_back(p.events);
      c_alloc.push_back(p.events ? p.alloc_gpu_pct : kNan);
      c_frag.push_back(p.events ? p.frag_gpu_milli : kNan);
      c_power.push_back(p.events ? p.power_watts : kNan);
    }
    for (std::size_t n = 0; n < r.snapshot_used_milli.size() && n < workload.nodes.size(); ++n) {
      const NodeSpec& node = workload.nodes[n];
      for (std::size_t g = 0; g < r.snapshot_used_milli[n].size(); ++g) {
        o_policy.push_back(r.spec.policy);
        o_seed.push_back(static_cast<int64_t>(r.spec.seed));
        o_pct.push_back(r.snapshot_at_pct);
        o_node.push_back(node.name);
        o_model.push_back(node.model == kNoGpuModel ? std::string()
                                                    : workload.models.name(node.model));
        o_gpu.push_back(static_cast<int64_t>(g));
        o_used.push_back(r.snapshot_used_milli[n][g]);
      }
    }
  }
  TableBuilder summary;
  summary.add("policy", policy);
  summary.add("seed", seed);
  summary.add("pods_arrived", arrived);
  summary.add("pods_scheduled", scheduled);
  summary.add("pods_failed", failed);
  summary.add("alloc_gpu_pct_at_100", at100);
  summary.add("alloc_gpu_pct_at_90", at90);
  summary.add("alloc_gpu_pct_at_130", at130);
  summary.add("frag_gpu_milli_at_100", frag100);
  summary.add("final_alloc_gpu_pct", final_pct);
  summary.add("power_watts_at_100", power100);
  summary.add("tune", tune);
  summary.add("wall_seconds", wall);
  summary.add("arrived_gpu_milli", arrived_milli);
  summary.add("allocated_gpu_milli", allocated_milli);
  summary.add("cluster_gpu_milli", cluster_milli);
  TableBuilder curves;
  curves.add("policy", c_policy);
  curves.add("seed", c_seed);
  curves.add("arrived_gpu_pct", c_pct);
  curves.add("alloc_gpu_pct", c_alloc);
  curves.add("frag_gpu_milli", c_frag);
  curves.add("events", c_events);
  curves.add("power_watts", c_power);
  py::dict out;
  out["summary"] = summary.release();
  out["curves"] = curves.release();
  if (!o_policy.empty()) {
    TableBuilder occupancy;
    occupancy.add("policy", o_policy);
    occupancy.add("seed", o_seed);
    occupancy.add("arrived_gpu_pct", o_pct);
    occupancy.add("node", o_node);
    occupancy.add("model", o_model);
    occupancy.add("gpu", o_gpu);
    occupancy.add("used_milli", o_used);
    out["occupancy"] = occupancy.release();
  }
  return out;
}

py::dict simulate(const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds,
                  double tune, const std::string& nodes, const std::string& pods,
                  const std::string& power_model_path, double pue, const std::string& gpu_power,
                  const std::string& gpu_select, bool record, int snapshot_at, int jobs,
                  const std::string& out) {
  if (seeds.empty()) throw BindingError("seeds: give at least one seed");
  if (!(tune > 0 && tune <= 10)) {
    throw BindingError(fmt::format("tune must be in (0, 10], got {}", tune));
  }
  sim::ExperimentPlan plan;
  plan.policies = policy_list(policies);
  plan.seeds = seeds;
  plan.tune = tune;
  plan.jobs = worker_count(plan.policies, jobs);
  plan.power_model = load_power_model(power_model_path, pue);
  if (!gpu_power.empty()) {
    auto rule = power::parse_gpu_power_rule(gpu_power);
    if (!rule.ok()) throw BindingError(fmt::format("gpu_power: {}", rule.error()));
    plan.power_model.set_gpu_rule(rule.value());
  }
  plan.gpu_select = gpu_select;
  plan.record = record;
  plan.snapshot_pct = snapshot_at;
  const trace::Workload workload = load_workload(nodes, pods, false);
  check(power::check_gpu_models(plan.power_model, workload.nodes, workload.models, "power_model"));
  auto results = run_released([&] { return sim::run_experiments(workload, plan); });
  const std::vector<sim::RunResult> runs = unwrap(std::move(results));
  py::dict tables = inflation_tables(workload, runs);
  std::string records;
  for (const auto& r : runs)
    records += sim::tag_run_records(r.records, "policy", r.spec.policy, r.spec.seed);
  if (record) tables["records"] = py::str(records);
  if (!out.empty()) check(report::write_results(out, runs, &workload));
  tables["workload"] =
      py::dict(py::arg("nodes") = workload.nodes.size(), py::arg("pods") = workload.pods.size(),
               py::arg("nodes_source") = workload.nodes_source,
               py::arg("pods_source") = workload.pods_source);
  return tables;
}

// ----- replay -----

struct ReplayArgs {
  std::vector<std::string> policies;
  std::vector<uint64_t> seeds;
  std::vector<double> loads;  // 0: the trace at its own rate
  double days = 14;
  double warmup_days = 1;
  std::vector<int64_t> power_downs;  // -1: off
  std::vector<power::GpuPowerRule> rules;
  int64_t timeline_step_s = -1;
  int jobs = 0;
};

// One load and seed: its workload (drawn from the trace until the load is met, or the trace
// itself) and the config its runs share.
struct ReplayGroup {
  std::optional<trace::Workload> generated;
  sim::ReplayConfig config;
};

ReplayGroup prepare_group(const ReplayArgs& a, const trace::Workload& workload,
                          const sim::ReplayConfig& base, double load, uint64_t seed) {
  ReplayGroup g{std::nullopt, base};
  g.config.seed = seed;
  if (!(load > 0)) {
    if (a.timeline_step_s > 0) g.config.timeline_step_s = a.timeline_step_s;
    return g;
  }
  int64_t capacity = 0;
  for (const NodeSpec& n : workload.nodes) capacity += int64_t{n.gpu_count} * kGpuMilli;
  trace::LoadSpec spec;
  spec.load_pct = load;
  spec.days = a.days;
  spec.warmup_days = a.warmup_days;
  spec.seed = seed;
  auto generated = trace::generate_load(workload.pods, capacity, spec);
  if (!generated.ok()) throw BindingError(fmt::format("load {}: {}", load, generated.error()));
  trace::Workload& w = g.generated.emplace();
  w.models = workload.models;
  w.nodes = workload.nodes;
  w.shape_count = workload.shape_count;
  w.nodes_source = workload.nodes_source;
  w.pods_source = fmt::format("{} at {} % load", workload.pods_source, load);
  w.pods = std::move(generated.value().pods);
  g.config.measure_from_s = generated.value().window.start_s;
  g.config.measure_to_s = generated.value().window.end_s;
  g.config.target_load_pct = load;
  g.config.timeline_step_s = a.timeline_step_s < 0 ? 3600 : a.timeline_step_s;
  return g;
}

// Every load x seed x policy x GPU rule x power-down run, in the command line's order.
Result<std::vector<sim::ReplayResult>> run_replays(const ReplayArgs& a,
                                                   const trace::Workload& workload,
                                                   const sim::ReplayConfig& base,
                                                   const power::PowerModel& model) {
  std::vector<std::vector<power::NodePower>> figures;
  for (power::GpuPowerRule rule : a.rules) {
    power::PowerModel m = model;
    m.set_gpu_rule(rule);
    auto f = m.resolve(workload.nodes, workload.models);
    if (!f.ok()) return f.status().error();
    figures.push_back(std::move(f.value()));
  }
  const frag::TargetWorkload target = frag::build_target_workload(workload.pods);
  const std::size_t rule_count = a.rules.size();
  const std::size_t down_count = a.power_downs.size();
  const std::size_t variants = a.policies.size() * rule_count * down_count;
  std::vector<ReplayGroup> groups;
  for (double load : a.loads) {
    for (uint64_t seed : a.seeds) {
      try {
        groups.push_back(prepare_group(a, workload, base, load, seed));
      } catch (const BindingError& e) {
        return Error{e.what()};
      }
    }
  }
  std::vector<sim::ReplayResult> results(groups.size() * variants);
  const std::size_t tasks = groups.size() * a.policies.size() * down_count;
  Status s = parallel_for(tasks, a.jobs, [&](std::size_t i) -> Status {
    const std::size_t g = i / (a.policies.size() * down_count);
    const std::size_t p = i / down_count % a.policies.size();
    const std::size_t d = i % down_count;
    const trace::Workload& w = groups[g].generated ? *groups[g].generated : workload;
    sim::ReplayConfig c = groups[g].config;
    c.policy = a.policies[p];
    c.power_down_idle_s = a.power_downs[d];
    auto r = sim::run_replay_each(w, target, figures, model.pue(), c);
    if (!r.ok()) return Error{r.error()};
    for (std::size_t k = 0; k < rule_count; ++k) {
      results[g * variants + (p * rule_count + k) * down_count + d] = std::move(r.value()[k]);
    }
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  return results;
}

py::dict replay_tables(const std::vector<sim::ReplayResult>& results) {
  TableBuilder summary;
  TableBuilder timeline;
  std::vector<std::string> policy, rule, t_policy, t_rule;
  std::vector<int64_t> seed, down, total, started, never, queued_end, requeued, wakeups, ls_pods,
      be_pods, t_seed, t_down, t_running, t_queued, t_awake;
  std::vector<double> load, offered, window, mean_delay, p99_delay, ls_mean, ls_p99, be_mean,
      be_p99, energy, floor, alloc, gpu_hours, kwh_gpu_h, awake, makespan, wall, t_load, t_time,
      t_gpus, t_power, t_energy;
  for (const sim::ReplayResult& r : results) {
    const std::string rule_name(power::gpu_power_rule_name(r.gpu_rule));
    policy.push_back(r.config.policy);
    seed.push_back(static_cast<int64_t>(r.config.seed));
    load.push_back(r.config.target_load_pct > 0 ? r.config.target_load_pct : kNan);
    rule.push_back(rule_name);
    down.push_back(r.config.power_down_idle_s);
    total.push_back(r.pods_total);
    started.push_back(r.pods_started);
    never.push_back(r.pods_never_started);
    queued_end.push_back(r.pods_queued_at_end);
    requeued.push_back(r.pods_requeued);
    mean_delay.push_back(r.mean_queue_delay_s);
    p99_delay.push_back(r.p99_queue_delay_s);
    ls_pods.push_back(r.delay_ls.pods);
    ls_mean.push_back(r.delay_ls.mean_s);
    ls_p99.push_back(r.delay_ls.p99_s);
    be_pods.push_back(r.delay_be.pods);
    be_mean.push_back(r.delay_be.mean_s);
    be_p99.push_back(r.delay_be.p99_s);
    window.push_back(r.window_s);
    offered.push_back(r.offered_load_pct);
    energy.push_back(r.energy_kwh);
    floor.push_back(r.energy_floor_kwh);
    alloc.push_back(r.gpu_alloc_pct);
    gpu_hours.push_back(r.gpu_hours);
    kwh_gpu_h.push_back(r.kwh_per_gpu_hour);
    awake.push_back(r.mean_nodes_awake);
    wakeups.push_back(r.wakeups);
    makespan.push_back(r.makespan_s);
    wall.push_back(r.wall_seconds);
    for (const sim::TimelinePoint& p : r.timeline) {
      t_policy.push_back(r.config.policy);
      t_seed.push_back(static_cast<int64_t>(r.config.seed));
      t_load.push_back(load.back());
      t_rule.push_back(rule_name);
      t_down.push_back(r.config.power_down_idle_s);
      t_time.push_back(p.time_s);
      t_running.push_back(p.running_pods);
      t_queued.push_back(p.queued_pods);
      t_gpus.push_back(p.allocated_gpus);
      t_power.push_back(p.power_watts);
      t_energy.push_back(p.energy_joules);
      t_awake.push_back(p.nodes_awake);
    }
  }
  summary.add("policy", policy);
  summary.add("seed", seed);
  summary.add("load_pct", load);
  summary.add("gpu_power", rule);
  summary.add("power_down_idle_s", down);
  summary.add("offered_load_pct", offered);
  summary.add("window_s", window);
  summary.add("pods_total", total);
  summary.add("pods_started", started);
  summary.add("pods_never_started", never);
  summary.add("pods_queued_at_end", queued_end);
  summary.add("pods_requeued", requeued);
  summary.add("mean_queue_delay_s", mean_delay);
  summary.add("p99_queue_delay_s", p99_delay);
  summary.add("ls_pods", ls_pods);
  summary.add("ls_mean_delay_s", ls_mean);
  summary.add("ls_p99_delay_s", ls_p99);
  summary.add("be_pods", be_pods);
  summary.add("be_mean_delay_s", be_mean);
  summary.add("be_p99_delay_s", be_p99);
  summary.add("energy_kwh", energy);
  summary.add("energy_floor_kwh", floor);
  summary.add("gpu_alloc_pct", alloc);
  summary.add("gpu_hours", gpu_hours);
  summary.add("kwh_per_gpu_hour", kwh_gpu_h);
  summary.add("mean_nodes_awake", awake);
  summary.add("wakeups", wakeups);
  summary.add("makespan_s", makespan);
  summary.add("wall_seconds", wall);
  timeline.add("policy", t_policy);
  timeline.add("seed", t_seed);
  timeline.add("load_pct", t_load);
  timeline.add("gpu_power", t_rule);
  timeline.add("power_down_idle_s", t_down);
  timeline.add("time_s", t_time);
  timeline.add("running_pods", t_running);
  timeline.add("queued_pods", t_queued);
  timeline.add("allocated_gpus", t_gpus);
  timeline.add("power_watts", t_power);
  timeline.add("energy_joules", t_energy);
  timeline.add("nodes_awake", t_awake);
  py::dict out;
  out["summary"] = summary.release();
  out["timeline"] = timeline.release();
  return out;
}

py::dict replay(const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds,
                const std::string& nodes, const std::string& pods, const std::vector<double>& loads,
                double days, double warmup_days, const std::string& queue, double time_scale,
                const std::string& node_events, const std::vector<int64_t>& power_downs,
                int64_t wake_delay_s, const std::vector<std::string>& gpu_power,
                int64_t timeline_step_s, bool record, const std::string& power_model_path,
                double pue, int jobs, const std::string& out) {
  if (seeds.empty()) throw BindingError("seeds: give at least one seed");
  if (!(time_scale > 0)) throw BindingError("time_scale must be > 0");
  if (!(days > 0 && days <= 366)) throw BindingError("days must be in (0, 366]");
  if (!(warmup_days >= 0 && warmup_days <= 366)) {
    throw BindingError("warmup_days must be in [0, 366]");
  }
  if (wake_delay_s < 0) throw BindingError("wake_delay must be >= 0");
  for (double l : loads) {
    if (!(l > 0 && l <= 1000)) throw BindingError(fmt::format("load: {} is not in (0, 1000]", l));
  }
  for (int64_t d : power_downs) {
    if (d < -1) throw BindingError(fmt::format("power_down_idle: {} is not None or >= 0", d));
  }
  if (nodes.empty() && loads.empty()) {
    throw BindingError(
        "replay needs pods with creation and deletion times: give nodes and pods, or load, "
        "which gives the built-in pods the openb trace's durations and arrival profile");
  }
  ReplayArgs a;
  a.policies = policy_list(policies);
  a.seeds = seeds;
  a.loads = loads.empty() ? std::vector<double>{0} : loads;
  a.days = days;
  a.warmup_days = warmup_days;
  a.power_downs = power_downs.empty() ? std::vector<int64_t>{-1} : power_downs;
  a.timeline_step_s = timeline_step_s;
  a.jobs = worker_count(a.policies, jobs);
  const power::PowerModel model = load_power_model(power_model_path, pue);
  if (gpu_power.empty()) {
    a.rules.push_back(model.gpu_rule());
  } else {
    for (const std::string& r : gpu_power) {
      auto rule = power::parse_gpu_power_rule(r);
      if (!rule.ok()) throw BindingError(fmt::format("gpu_power: {}", rule.error()));
      a.rules.push_back(rule.value());
    }
  }
  const trace::Workload workload = load_workload(nodes, pods, true);
  check(power::check_gpu_models(model, workload.nodes, workload.models, "power_model"));
  sim::ReplayConfig base;
  auto q = sim::parse_queue_discipline(queue);
  if (!q.ok()) throw BindingError(fmt::format("queue: {}", q.error()));
  base.queue = q.value();
  base.time_scale = time_scale;
  base.record = record;
  base.wake_delay_s = wake_delay_s;
  if (!node_events.empty()) {
    base.node_events = unwrap(sim::read_node_events(node_events, workload.nodes));
  }
  auto results = run_released([&] { return run_replays(a, workload, base, model); });
  const std::vector<sim::ReplayResult> runs = unwrap(std::move(results));
  py::dict tables = replay_tables(runs);
  if (record) {
    std::string records;
    for (const auto& r : runs) {
      records += sim::tag_run_records(r.records, "policy", r.config.policy, r.config.seed);
    }
    tables["records"] = py::str(records);
  }
  if (!out.empty()) {
    std::ostringstream summary;
    report::write_replay_summary_csv(summary, runs);
    check(write_text_files(out, {{"timeline.csv", report::replay_timeline_csv(runs)},
                                 {"summary.csv", summary.str()}}));
  }
  return tables;
}

}  // namespace

void bind_simulate(py::module_& m) {
  m.def("_simulate", &simulate, py::arg("policies"), py::arg("seeds"), py::arg("tune"),
        py::arg("nodes"), py::arg("pods"), py::arg("power_model"), py::arg("pue"),
        py::arg("gpu_power"), py::arg("gpu_select"), py::arg("record"), py::arg("snapshot_at"),
        py::arg("jobs"), py::arg("out"));
  m.def("_replay", &replay, py::arg("policies"), py::arg("seeds"), py::arg("nodes"),
        py::arg("pods"), py::arg("loads"), py::arg("days"), py::arg("warmup_days"),
        py::arg("queue"), py::arg("time_scale"), py::arg("node_events"), py::arg("power_down_idle"),
        py::arg("wake_delay"), py::arg("gpu_power"), py::arg("timeline_step"), py::arg("record"),
        py::arg("power_model"), py::arg("pue"), py::arg("jobs"), py::arg("out"));
}

}  // namespace greensched::python
