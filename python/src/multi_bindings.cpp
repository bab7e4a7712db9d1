// multi for Python: the command line's `multi` (a fleet of sites, a dispatch agent per run)
// over the same library calls (multi::run_fleet), returning tables of numpy arrays and, with
// `out`, writing summary.csv, timeline.csv, decisions.csv and energy_timeline.csv as the command
// line does. The fleet bound and oracle runs are the command line's only.
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "greensched/core/parallel_for.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/energy/controller.hpp"
#include "greensched/multi/agent.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/multi/learned_forecaster.hpp"
#include "greensched/multi/mpc_forecast.hpp"
#include "greensched/multi/site_controller.hpp"
#include "greensched/report/energy_writer.hpp"
#include "greensched/report/multi_writer.hpp"
#include "greensched/sim/decision_record.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "python_policy.hpp"

namespace greensched::python {
namespace {

struct MultiRun {
  std::size_t workload;
  double slack_h;
  std::size_t agent;
};

struct Jobs {
  std::vector<PodSpec> pods;
  double target = 0;
  int64_t from = std::numeric_limits<int64_t>::min();
  int64_t to = std::numeric_limits<int64_t>::max();
};

// A run's result and seed: a row of the summary, and the parent of the other tables' rows.
struct SeededResult {
  const multi::MultiResult& result;
  int64_t seed;
};

// The agent, seed and slack of each row's run: the first columns of the timeline and the
// decisions.
template <typename Row>
void add_multi_run_columns(TableBuilder& t, const std::vector<Row>& rows) {
  t.add("agent", rows, [](const Row& x) { return x.parent.result.agent; });
  t.add("seed", rows, [](const Row& x) { return x.parent.seed; });
  t.add("slack_h", rows, [](const Row& x) { return x.parent.result.be_slack_h; });
}

py::dict multi_tables(const multi::Fleet& fleet, const std::vector<multi::MultiResult>& results,
                      const std::vector<uint64_t>& run_seeds) {
  std::vector<SeededResult> runs;
  for (std::size_t i = 0; i < results.size(); ++i) {
    runs.push_back({results[i], static_cast<int64_t>(run_seeds[i])});
  }
  const auto site_name = [&](int s) {
    return s < 0 ? std::string("fleet") : fleet.sites[static_cast<std::size_t>(s)].name;
  };
  // The result's member `field` of each run.
  const auto of_result = [](auto multi::MultiResult::*field) {
    return [field](const SeededResult& run) { return run.result.*field; };
  };
  using R = multi::MultiResult;
  TableBuilder summary;
  summary.add("agent", runs, of_result(&R::agent));
  summary.add("seed", runs, &SeededResult::seed);
  summary.add("load_pct", runs, [](const SeededResult& run) {
    return run.result.target_load_pct > 0 ? run.result.target_load_pct
                                          : std::numeric_limits<double>::quiet_NaN();
  });
  summary.add("slack_h", runs, of_result(&R::be_slack_h));
  summary.add("offered_load_pct", runs, of_result(&R::offered_load_pct));
  summary.add("window_s", runs, of_result(&R::window_s));
  summary.add("jobs", runs, of_result(&R::jobs));
  summary.add("energy_kwh", runs, of_result(&R::energy_kwh));
  summary.add("carbon_kg", runs, of_result(&R::carbon_kg));
  summary.add("mean_delay_s_ls", runs, of_result(&R::mean_delay_s_ls));
  summary.add("p99_delay_s_ls", runs, of_result(&R::p99_delay_s_ls));
  summary.add("mean_delay_s_be", runs, of_result(&R::mean_delay_s_be));
  summary.add("p99_delay_s_be", runs, of_result(&R::p99_delay_s_be));
  summary.add("ls_slo_violations", runs, of_result(&R::ls_slo_violations));
  summary.add("jobs_moved", runs, of_result(&R::jobs_moved));
  summary.add("gb_moved", runs, of_result(&R::gb_moved));
  summary.add("transfer_kwh", runs, of_result(&R::transfer_kwh));
  summary.add("jobs_deferred", runs, of_result(&R::jobs_deferred));
  summary.add("gpu_alloc_pct", runs, of_result(&R::gpu_alloc_pct));
  summary.add("jobs_never_started", runs, of_result(&R::jobs_never_started));
  summary.add("be_preemptions", runs, of_result(&R::be_preemptions));
  summary.add("wall_seconds", runs, of_result(&R::wall_seconds));

  using Sample = Nested<SeededResult, multi::FleetSample>;
  const std::vector<Sample> samples = nested_rows(
      runs, [](const SeededResult& run) -> const auto& { return run.result.timeline; });
  TableBuilder timeline;
  add_multi_run_columns(timeline, samples);
  timeline.add("time_s", samples, [](const Sample& x) { return x.item.time_s; });
  timeline.add("site", samples, [&](const Sample& x) { return site_name(x.item.site); });
  timeline.add("power_watts", samples, [](const Sample& x) { return x.item.power_watts; });
  timeline.add("energy_kwh", samples, [](const Sample& x) { return x.item.energy_kwh; });
  timeline.add("carbon_kg", samples, [](const Sample& x) { return x.item.carbon_kg; });
  timeline.add("carbon_intensity", samples,
               [](const Sample& x) { return x.item.carbon_intensity; });
  timeline.add("running_jobs", samples, [](const Sample& x) { return x.item.running_jobs; });
  timeline.add("queued_jobs", samples, [](const Sample& x) { return x.item.queued_jobs; });
  timeline.add("waiting_jobs", samples, [](const Sample& x) { return x.item.waiting_jobs; });
  timeline.add("allocated_gpus", samples, [](const Sample& x) { return x.item.allocated_gpus; });
  timeline.add("gpu_alloc_pct", samples, [](const Sample& x) { return x.item.gpu_alloc_pct; });
  timeline.add("cpu_alloc_pct", samples, [](const Sample& x) { return x.item.cpu_alloc_pct; });
  timeline.add("online_nodes", samples, [](const Sample& x) { return x.item.online_nodes; });

  using Decision = Nested<SeededResult, multi::JobDecision>;
  const std::vector<Decision> made = nested_rows(
      runs, [](const SeededResult& run) -> const auto& { return run.result.decisions; });
  TableBuilder decisions;
  add_multi_run_columns(decisions, made);
  decisions.add("pod", made, [](const Decision& x) { return x.item.pod; });
  decisions.add("home_site", made, [&](const Decision& x) { return site_name(x.item.home_site); });
  decisions.add("site", made, [&](const Decision& x) { return site_name(x.item.site); });
  decisions.add("latency_sensitive", made,
                [](const Decision& x) { return x.item.latency_sensitive; });
  decisions.add("submit_s", made, [](const Decision& x) { return x.item.submit_s; });
  decisions.add("not_before_s", made, [](const Decision& x) { return x.item.not_before_s; });
  decisions.add("start_s", made, [](const Decision& x) { return x.item.start_s; });
  decisions.add("reason", made, [](const Decision& x) { return x.item.reason; });
  py::dict out;
  out["summary"] = summary.release();
  out["timeline"] = timeline.release();
  out["decisions"] = decisions.release();
  return out;
}

// OUT's summary.csv, timeline.csv, decisions.csv and energy_timeline.csv, as the command line
// writes them.
void write_multi_out(const std::string& out, const multi::Fleet& fleet,
                     const std::vector<multi::MultiResult>& results) {
  std::ostringstream summary, timeline, decisions, energy_timeline;
  report::write_multi_summary_csv(summary, results);
  report::write_multi_timeline_csv(timeline, fleet, results);
  report::write_decisions_csv(decisions, fleet, results);
  report::write_energy_timeline_csv(energy_timeline, fleet, results);
  check(write_text_files(out, {{"summary.csv", summary.str()},
                               {"timeline.csv", timeline.str()},
                               {"decisions.csv", decisions.str()},
                               {"energy_timeline.csv", energy_timeline.str()}}));
}

py::dict run_multi(const std::vector<std::string>& agents, const std::vector<uint64_t>& seeds,
                   const std::vector<double>& slacks, const std::vector<double>& loads, double days,
                   double warmup_days, const std::string& fleet_path, const std::string& data_dir,
                   const std::string& pods_path, int64_t power_down_idle_s, int64_t wake_delay_s,
                   int64_t ls_bound_s, int64_t sample_s, double data_gb, const std::string& start,
                   const std::string& power_model_path, bool preempt_be,
                   const std::vector<std::string>& controllers, bool record, int jobs,
                   const std::string& out, const std::string& forecast) {
  std::vector<energy::ControllerKind> kinds;
  for (const std::string& c : controllers) {
    auto kind = energy::parse_controller(c);
    if (!kind.ok()) throw BindingError(fmt::format("energy_controllers: {}", kind.error()));
    kinds.push_back(kind.value());
  }
  if (seeds.empty()) throw BindingError("seeds: give at least one seed");
  if (forecast != "same-hour" && forecast != "learned") {
    throw BindingError(fmt::format("forecast: '{}' is not same-hour or learned", forecast));
  }
  // forecast "learned": one training per window, for every seed, slack and agent of it.
  multi::LearnedForecastsByWindow learned;
  std::vector<std::string> agent_list;
  for (const std::string& a : agents) {
    if (a == "all") {
      for (const std::string& n : multi::agent_names()) agent_list.push_back(n);
      continue;
    }
    (void)unwrap(multi::make_agent(a));
    agent_list.push_back(a);
  }
  if (agent_list.empty()) throw BindingError("agents: give at least one agent");
  if (ls_bound_s < 0 || wake_delay_s < 0 || sample_s <= 0) {
    throw BindingError("ls_bound, wake_delay must be >= 0 and sample > 0");
  }
  if (!(days >= 0 && days <= 366) || !(warmup_days >= 0 && warmup_days <= 366)) {
    throw BindingError("days must be in (0, 366] and warmup_days in [0, 366]");
  }
  for (double s : slacks) {
    if (!(s >= 0 && s <= 24 * 366)) throw BindingError(fmt::format("slack: {} is out of range", s));
  }
  for (double l : loads) {
    if (!(l > 0 && l <= 1000)) throw BindingError(fmt::format("load: {} is not in (0, 1000]", l));
  }
  const double run_days = days > 0 ? days : loads.empty() ? 30.0 : 14.0;
  multi::Fleet fleet =
      fleet_path.empty() ? multi::builtin_fleet() : unwrap(multi::load_fleet(fleet_path, data_dir));
  if (!start.empty()) {
    auto t = parse_utc_time(start);
    if (!t.ok()) throw BindingError(fmt::format("start: {}", t.error()));
    fleet.start_s = t.value();
    if (!loads.empty()) fleet.start_s -= std::llround(warmup_days * 86400.0);
  }
  const power::PowerModel power_model = power_model_path.empty()
                                            ? power::PowerModel::builtin()
                                            : unwrap(power::PowerModel::load(power_model_path));
  for (const multi::SiteSpec& site : fleet.sites) {
    check(power::check_gpu_models(power_model, site.nodes, fleet.models, "power_model"));
  }
  std::vector<multi::MultiResult> results;
  std::vector<uint64_t> run_seeds;
  int64_t capacity = 0;
  for (const auto& site : fleet.sites) capacity += multi::site_gpu_milli(site);
  for (uint64_t seed : seeds) {
    std::vector<PodSpec> pods;
    if (!pods_path.empty()) {
      pods = unwrap(trace::read_openb_pods(pods_path, fleet.models));
    } else {
      pods = trace::builtin_openb_workload().pods;
      const int span = loads.empty() ? static_cast<int>(std::lround(run_days)) : 28;
      trace::assign_synthetic_times(pods, seed, span);
    }
    const uint32_t shapes = trace::assign_shape_ids(pods);
    std::vector<Jobs> workloads;
    if (loads.empty()) {
      workloads.push_back(Jobs{std::move(pods)});
    } else {
      for (double load : loads) {
        trace::LoadSpec spec;
        spec.load_pct = load;
        spec.days = run_days;
        spec.warmup_days = warmup_days;
        spec.seed = seed;
        auto generated = trace::generate_load(pods, capacity, spec);
        if (!generated.ok()) {
          throw BindingError(fmt::format("load {}: {}", load, generated.error()));
        }
        workloads.push_back(Jobs{std::move(generated.value().pods), load,
                                 generated.value().window.start_s, generated.value().window.end_s});
      }
    }
    std::vector<MultiRun> plan;
    for (std::size_t w = 0; w < workloads.size(); ++w) {
      for (double slack : slacks) {
        for (std::size_t a = 0; a < agent_list.size(); ++a) plan.push_back(MultiRun{w, slack, a});
      }
    }
    bool python_policy = false;
    for (const auto& site : fleet.sites) python_policy |= uses_python_policy(site.policy);
    std::vector<multi::MultiResult> runs(plan.size());
    clear_policy_error();
    Status s;
    {
      py::gil_scoped_release release;
      s = parallel_for(plan.size(), python_policy ? 1 : jobs, [&](std::size_t i) -> Status {
        const MultiRun& p = plan[i];
        const Jobs& w = workloads[p.workload];
        multi::MultiOptions o;
        o.agent = agent_list[p.agent];
        o.seed = seed;
        o.ls_bound_s = ls_bound_s;
        o.be_slack_s = static_cast<int64_t>(std::llround(p.slack_h * 3600.0));
        o.measure_from_s = w.from;
        o.measure_to_s = w.to;
        o.target_load_pct = w.target;
        o.power_down_idle_s = power_down_idle_s;
        o.wake_delay_s = wake_delay_s;
        o.sample_s = sample_s;
        o.data_gb_per_job = data_gb;
        o.power_model = power_model;
        o.record = record;
        o.preempt_be = preempt_be;
        o.generation_forecast.seed = seed;
        if (forecast == "learned" && multi::agent_reads_forecasts(o.agent)) {
          auto got = learned.get(fleet, multi::measured_hour0_s(fleet, w.pods, w.from));
          if (!got.ok()) return Error{fmt::format("forecast learned: {}", got.error())};
          o.learned_forecasts = got.value().forecasts;
        }
        auto r = multi::run_fleet(fleet, w.pods, shapes, o);
        if (!r.ok()) return Error{r.error()};
        runs[i] = std::move(r.value());
        // Each site energy controller on the sites' hourly demand, as the command line runs
        // them: they minimise what the agent minimises.
        energy::ControllerOptions controller;
        controller.forecast_days = 7;
        controller.carbon_price_usd_per_t =
            multi::controller_carbon_price_usd_per_t(o.agent, o.agent_options);
        controller.mpc_day_ahead = o.day_ahead_prices;
        for (energy::ControllerKind kind : kinds) {
          auto e =
              multi::run_site_controllers(fleet, runs[i], kind, controller, o.generation_forecast);
          if (!e.ok()) return Error{e.error()};
          runs[i].energy.push_back(std::move(e.value()));
        }
        return Status::Ok();
      });
    }
    rethrow_policy_error();
    check(s);
    // Several seeds: each seed's files in OUT/seed-N, as the command line does.
    if (!out.empty()) {
      write_multi_out(seeds.size() > 1 ? fmt::format("{}/seed-{}", out, seed) : out, fleet, runs);
    }
    for (auto& r : runs) {
      results.push_back(std::move(r));
      run_seeds.push_back(seed);
    }
  }
  py::dict tables = multi_tables(fleet, results, run_seeds);
  if (record) {
    std::string records;
    for (std::size_t i = 0; i < results.size(); ++i) {
      records += sim::tag_run_records(results[i].records, "agent", results[i].agent, run_seeds[i]);
    }
    tables["records"] = py::str(records);
  }
  return tables;
}

}  // namespace

void bind_multi(py::module_& m) {
  m.def("_multi", &run_multi, py::arg("agents"), py::arg("seeds"), py::arg("slack"),
        py::arg("loads"), py::arg("days"), py::arg("warmup_days"), py::arg("fleet"),
        py::arg("data_dir"), py::arg("pods"), py::arg("power_down_idle"), py::arg("wake_delay"),
        py::arg("ls_bound"), py::arg("sample"), py::arg("data_gb"), py::arg("start"),
        py::arg("power_model"), py::arg("preempt_be"), py::arg("energy_controllers"),
        py::arg("record"), py::arg("jobs"), py::arg("out"), py::arg("forecast") = "same-hour");
}

}  // namespace greensched::python
