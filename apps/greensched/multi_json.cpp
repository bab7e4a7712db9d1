#include "multi_json.hpp"

#include <cmath>

#include "greensched/report/multi_writer.hpp"

namespace greensched::app {
namespace {

nlohmann::json multi_run_json(const multi::MultiResult& r, uint64_t seed) {
  return {{"agent", r.agent},
          {"seed", seed},
          {"target_load_pct", r.target_load_pct},
          {"offered_load_pct", r.offered_load_pct},
          {"slack_h", r.be_slack_h},
          {"p99_delay_s_ls", r.p99_delay_s_ls},
          {"wall_seconds", r.wall_seconds},
          {"energy_kwh", r.energy_kwh},
          {"carbon_kg", r.carbon_kg},
          {"mean_delay_s_ls", r.mean_delay_s_ls},
          {"mean_delay_s_be", r.mean_delay_s_be},
          {"p99_delay_s_be", r.p99_delay_s_be},
          {"ls_slo_violations", r.ls_slo_violations},
          {"jobs_moved", r.jobs_moved},
          {"gb_moved", r.gb_moved},
          {"gpu_alloc_pct", r.gpu_alloc_pct},
          {"jobs_never_started", r.jobs_never_started},
          {"transfer_kwh", r.transfer_kwh},
          {"be_preemptions", r.be_preemptions},
          {"jobs_redispatched", r.jobs_redispatched}};
}

// One row per site energy controller that ran on the run's hourly demand.
nlohmann::json multi_energy_json(const multi::MultiResult& r) {
  nlohmann::json energy = nlohmann::json::array();
  for (const auto& e : r.energy) {
    energy.push_back({{"controller", e.controller},
                      {"cost_usd", e.cost_usd},
                      {"carbon_kg", e.carbon_kg},
                      {"grid_import_kwh", e.grid_import_kwh},
                      {"onsite_kwh_used", e.onsite_kwh_used},
                      {"self_consumption_pct", e.self_consumption_pct},
                      {"battery_cycles", e.battery_cycles}});
  }
  return energy;
}

}  // namespace

nlohmann::json multi_results_json(const std::vector<multi::MultiResult>& results, bool show_energy,
                                  std::span<const multi::FleetBoundResult> bounds, uint64_t seed) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : results) {
    all.push_back(multi_run_json(r, seed));
    if (show_energy) all.back()["energy"] = multi_energy_json(r);
    if (const multi::FleetBoundResult* b = report::bound_of(r, bounds)) {
      const report::BoundFigures f = report::bound_figures(r, results, *b);
      const auto number = [](double x) {
        return std::isnan(x) ? nlohmann::json() : nlohmann::json(x);
      };
      nlohmann::json bound = {{"carbon_vs_local_pct", number(f.bound_vs_local_pct)},
                              {"share_pct", number(f.share_pct)},
                              {"saving_kg", b->saving_kg()},
                              {"day_lp_saving_kg", b->day_lp_saving_kg()},
                              {"cpu_only_saving_kg", b->cpu_only_saving_kg},
                              {"lp_carbon_vs_local_pct", b->carbon_vs_local_pct()},
                              {"local_carbon_kg", b->local.carbon_kg},
                              {"carbon_kg", b->carbon.carbon_kg},
                              {"transfer_kwh", b->carbon.transfer_kwh},
                              {"unserved_gpu_hours", b->unserved_gpu_hours}};
      if (b->cost) bound["cost_vs_local_pct"] = b->cost_vs_local_pct();
      bound["share_of_feasible_pct"] = number(f.feasible_share_pct);
      bound["feasible_saving_kg"] = number(b->feasible_saving_kg());
      bound["bound_feasible_gap_pct"] = number(b->feasible_gap_pct());
      bound["first_come_saving_kg"] = number(b->first_come_saving_kg());
      if (b->feasible) {
        bound["feasible_carbon_kg"] = b->feasible->carbon_kg;
        bound["feasible_unserved_gpu_hours"] = b->feasible->unserved_gpu_hours;
        bound["feasible_unplaced_jobs"] = b->feasible->unplaced_jobs;
        bound["first_come_unserved_gpu_hours"] = b->feasible->first_come_unserved_gpu_hours;
      }
      bound["share_of_tight_bound_pct"] = number(f.tight_share_pct);
      bound["tight_saving_kg"] = number(b->tight_saving_kg());
      if (b->tight) bound["tight_carbon_kg"] = b->tight->carbon_kg;
      nlohmann::json sites = nlohmann::json::array();
      for (std::size_t i = 0; i < b->site_names.size(); ++i) {
        const auto at = [i](const std::vector<double>& v) { return i < v.size() ? v[i] : 0.0; };
        sites.push_back(
            {{"name", b->site_names[i]},
             {"local_alloc_pct", at(b->local.site_alloc_pct)},
             {"alloc_pct", at(b->carbon.site_alloc_pct)},
             {"fill_pct", 100.0 * at(b->site_fill)},
             {"tight_fill_pct",
              b->tight ? nlohmann::json(100.0 * at(b->tight->site_fill)) : nlohmann::json()},
             {"gpu_hours", at(b->carbon.site_gpu_hours)},
             {"feasible_alloc_pct",
              b->feasible ? nlohmann::json(at(b->feasible->site_alloc_pct)) : nlohmann::json()},
             {"feasible_gpu_hours",
              b->feasible ? nlohmann::json(at(b->feasible->site_gpu_hours)) : nlohmann::json()}});
      }
      bound["sites"] = std::move(sites);
      all.back()["bound"] = std::move(bound);
    }
  }
  return all;
}

}  // namespace greensched::app
