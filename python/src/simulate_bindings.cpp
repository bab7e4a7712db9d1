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

// The policy and seed of each row's run: the first columns of each table of simulate.
template <typename Row>
void add_inflation_run_columns(TableBuilder& t, const std::vector<Row>& rows) {
  t.add("policy", rows, [](const Row& x) { return parent_or_self(x).spec.policy; });
  t.add("seed", rows, [](const Row& x) { return parent_or_self(x).spec.seed; });
}

// A GPU of the occupancy snapshot: node n's GPU g.
struct GpuRow {
  const sim::RunResult& parent;
  std::size_t n;
  std::size_t g;
};

py::dict inflation_tables(const trace::Workload& workload,
                          const std::vector<sim::RunResult>& results) {
  using R = sim::RunResult;
  using P = sim::CurvePoint;
  // The curve's `field` in the bin of `pct` % arrived (NaN without that bin).
  const auto at = [](int pct, double P::*field) {
    return [pct, field](const R& r) {
      const auto p = sim::point_at(r.curve, pct);
      return p ? (*p).*field : kNan;
    };
  };
  TableBuilder summary;
  add_inflation_run_columns(summary, results);
  summary.add("pods_arrived", results, &R::pods_arrived);
  summary.add("pods_scheduled", results, &R::pods_scheduled);
  summary.add("pods_failed", results, &R::pods_failed);
  summary.add("alloc_gpu_pct_at_100", results, at(100, &P::alloc_gpu_pct));
  summary.add("alloc_gpu_pct_at_90", results, at(90, &P::alloc_gpu_pct));
  summary.add("alloc_gpu_pct_at_130", results, at(130, &P::alloc_gpu_pct));
  summary.add("frag_gpu_milli_at_100", results, at(100, &P::frag_gpu_milli));
  summary.add("final_alloc_gpu_pct", results, [](const R& r) {
    return r.cluster_gpu_milli > 0 ? 100.0 * static_cast<double>(r.allocated_gpu_milli) /
                                         static_cast<double>(r.cluster_gpu_milli)
                                   : 0.0;
  });
  summary.add("power_watts_at_100", results, at(100, &P::power_watts));
  summary.add("tune", results, [](const R& r) { return r.spec.tune; });
  summary.add("wall_seconds", results, &R::wall_seconds);
  summary.add("arrived_gpu_milli", results, &R::arrived_gpu_milli);
  summary.add("allocated_gpu_milli", results, &R::allocated_gpu_milli);
  summary.add("cluster_gpu_milli", results, &R::cluster_gpu_milli);

  using Point = Nested<R, P>;
  const std::vector<Point> points = nested_rows(results, &R::curve);
  // A bin without arrivals has no data.
  const auto if_events = [](double P::*field) {
    return [field](const Point& x) { return x.item.events ? x.item.*field : kNan; };
  };
  TableBuilder curves;
  add_inflation_run_columns(curves, points);
  curves.add("arrived_gpu_pct", points, [](const Point& x) { return x.item.arrived_pct; });
  curves.add("alloc_gpu_pct", points, if_events(&P::alloc_gpu_pct));
  curves.add("frag_gpu_milli", points, if_events(&P::frag_gpu_milli));
  curves.add("events", points, [](const Point& x) { return x.item.events; });
  curves.add("power_watts", points, if_events(&P::power_watts));
  py::dict out;
  out["summary"] = summary.release();
  out["curves"] = curves.release();

  std::vector<GpuRow> gpus;
  for (const R& r : results) {
    for (std::size_t n = 0; n < r.snapshot_used_milli.size() && n < workload.nodes.size(); ++n) {
      for (std::size_t g = 0; g < r.snapshot_used_milli[n].size(); ++g) gpus.push_back({r, n, g});
    }
  }
  if (!gpus.empty()) {
    const auto node = [&](const GpuRow& x) -> const NodeSpec& { return workload.nodes[x.n]; };
    TableBuilder occupancy;
    add_inflation_run_columns(occupancy, gpus);
    occupancy.add("arrived_gpu_pct", gpus,
                  [](const GpuRow& x) { return x.parent.snapshot_at_pct; });
    occupancy.add("node", gpus, [&](const GpuRow& x) { return node(x).name; });
    occupancy.add("model", gpus, [&](const GpuRow& x) {
      return node(x).model == kNoGpuModel ? std::string() : workload.models.name(node(x).model);
    });
    occupancy.add("gpu", gpus, &GpuRow::g);
    occupancy.add("used_milli", gpus,
                  [](const GpuRow& x) { return x.parent.snapshot_used_milli[x.n][x.g]; });
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

// The settings of each row's run: the first columns of replay's tables.
template <typename Row>
void add_replay_run_columns(TableBuilder& t, const std::vector<Row>& rows) {
  const auto run = [](const Row& x) -> const sim::ReplayResult& { return parent_or_self(x); };
  t.add("policy", rows, [&](const Row& x) { return run(x).config.policy; });
  t.add("seed", rows, [&](const Row& x) { return run(x).config.seed; });
  t.add("load_pct", rows, [&](const Row& x) {
    return run(x).config.target_load_pct > 0 ? run(x).config.target_load_pct : kNan;
  });
  t.add("gpu_power", rows,
        [&](const Row& x) { return power::gpu_power_rule_name(run(x).gpu_rule); });
  t.add("power_down_idle_s", rows, [&](const Row& x) { return run(x).config.power_down_idle_s; });
}

py::dict replay_tables(const std::vector<sim::ReplayResult>& results) {
  using R = sim::ReplayResult;
  TableBuilder summary;
  add_replay_run_columns(summary, results);
  summary.add("offered_load_pct", results, &R::offered_load_pct);
  summary.add("window_s", results, &R::window_s);
  summary.add("pods_total", results, &R::pods_total);
  summary.add("pods_started", results, &R::pods_started);
  summary.add("pods_never_started", results, &R::pods_never_started);
  summary.add("pods_queued_at_end", results, &R::pods_queued_at_end);
  summary.add("pods_requeued", results, &R::pods_requeued);
  summary.add("mean_queue_delay_s", results, &R::mean_queue_delay_s);
  summary.add("p99_queue_delay_s", results, &R::p99_queue_delay_s);
  summary.add("ls_pods", results, [](const R& r) { return r.delay_ls.pods; });
  summary.add("ls_mean_delay_s", results, [](const R& r) { return r.delay_ls.mean_s; });
  summary.add("ls_p99_delay_s", results, [](const R& r) { return r.delay_ls.p99_s; });
  summary.add("be_pods", results, [](const R& r) { return r.delay_be.pods; });
  summary.add("be_mean_delay_s", results, [](const R& r) { return r.delay_be.mean_s; });
  summary.add("be_p99_delay_s", results, [](const R& r) { return r.delay_be.p99_s; });
  summary.add("energy_kwh", results, &R::energy_kwh);
  summary.add("energy_floor_kwh", results, &R::energy_floor_kwh);
  summary.add("gpu_alloc_pct", results, &R::gpu_alloc_pct);
  summary.add("gpu_hours", results, &R::gpu_hours);
  summary.add("kwh_per_gpu_hour", results, &R::kwh_per_gpu_hour);
  summary.add("mean_nodes_awake", results, &R::mean_nodes_awake);
  summary.add("wakeups", results, &R::wakeups);
  summary.add("makespan_s", results, &R::makespan_s);
  summary.add("wall_seconds", results, &R::wall_seconds);

  using Point = Nested<R, sim::TimelinePoint>;
  const std::vector<Point> points = nested_rows(results, &R::timeline);
  TableBuilder timeline;
  add_replay_run_columns(timeline, points);
  timeline.add("time_s", points, [](const Point& x) { return x.item.time_s; });
  timeline.add("running_pods", points, [](const Point& x) { return x.item.running_pods; });
  timeline.add("queued_pods", points, [](const Point& x) { return x.item.queued_pods; });
  timeline.add("allocated_gpus", points, [](const Point& x) { return x.item.allocated_gpus; });
  timeline.add("power_watts", points, [](const Point& x) { return x.item.power_watts; });
  timeline.add("energy_joules", points, [](const Point& x) { return x.item.energy_joules; });
  timeline.add("nodes_awake", points, [](const Point& x) { return x.item.nodes_awake; });
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
