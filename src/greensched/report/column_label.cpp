#include "greensched/report/column_label.hpp"

#include <map>

namespace greensched::report {

std::string column_label(const std::string& column) {
  static const std::map<std::string, std::string> kLabels = {
      // keys and settings
      {"policy", "Policy"},
      {"agent", "Agent"},
      {"seed", "Seed"},
      {"queue", "Queue"},
      {"controller", "Site controller"},
      {"gpu_power", "GPU power rule"},
      {"power_down_idle_s", "Idle nodes sleep after (s)"},
      {"wake_delay_s", "Wake-up delay (s)"},
      {"target_load_pct", "Load (%)"},
      {"slack_h", "Slack (h)"},
      {"tune", "Tune"},
      {"window_s", "Window (s)"},
      {"wall_seconds", "Run time (s)"},
      // simulate
      {"pods_arrived", "Pods arrived"},
      {"pods_scheduled", "Pods scheduled"},
      {"pods_failed", "Failed pods"},
      {"alloc_gpu_pct_at_90", "GPU alloc % at 90 %"},
      {"alloc_gpu_pct_at_100", "GPU alloc % at 100 %"},
      {"alloc_gpu_pct_at_130", "GPU alloc % at 130 %"},
      {"frag_gpu_milli_at_100", "Fragmented GPU milli at 100 %"},
      {"final_alloc_gpu_pct", "Final GPU alloc (%)"},
      {"power_watts_at_100", "Power at 100 % (W)"},
      // simulate --mode replay
      {"pods_total", "Pods"},
      {"pods_started", "Started"},
      {"pods_never_started", "Never started"},
      {"pods_requeued", "Re-queued"},
      {"mean_queue_delay_s", "Mean wait (s)"},
      {"p99_queue_delay_s", "p99 wait (s)"},
      {"energy_kwh", "Energy (kWh)"},
      {"makespan_s", "Makespan (s)"},
      {"offered_load_pct", "Offered load (%)"},
      {"energy_floor_kwh", "Energy floor (kWh)"},
      {"energy_over_floor", "Energy / own floor"},
      {"kwh_per_gpu_hour", "kWh per GPU-hour"},
      {"gpu_alloc_pct", "GPU alloc (%)"},
      {"mean_nodes_awake", "Nodes awake"},
      {"wakeups", "Wake-ups"},
      {"ls_pods", "LS pods"},
      {"ls_mean_delay_s", "LS wait, mean (s)"},
      {"ls_p99_delay_s", "LS wait, p99 (s)"},
      {"be_pods", "BE pods"},
      {"be_mean_delay_s", "BE wait, mean (s)"},
      {"be_p99_delay_s", "BE wait, p99 (s)"},
      // multi
      {"carbon_kg", "Carbon (kg CO₂)"},
      {"mean_delay_s_ls", "LS wait, mean (s)"},
      {"mean_delay_s_be", "BE wait, mean (s)"},
      {"p99_delay_s_ls", "LS wait, p99 (s)"},
      {"p99_delay_s_be", "BE wait, p99 (s)"},
      {"ls_slo_violations", "LS SLO violations"},
      {"jobs_moved", "Jobs moved"},
      {"gb_moved", "GB moved"},
      {"jobs_never_started", "Never started"},
      {"jobs", "Jobs"},
      {"jobs_deferred", "Deferred"},
      {"transfer_kwh", "Transfer (kWh)"},
      {"cost_usd", "Grid cost (USD)"},
      {"grid_import_kwh", "Grid import (kWh)"},
      {"onsite_kwh_used", "On-site energy used (kWh)"},
      {"self_consumption_pct", "Self-consumption (%)"},
      {"battery_cycles", "Battery cycles"},
      {"export_kwh", "Exported (kWh)"},
      {"curtailed_kwh", "Curtailed (kWh)"},
      {"generation_kwh", "On-site generation (kWh)"},
      {"be_preemptions", "BE preemptions"},
  };
  const auto it = kLabels.find(column);
  return it == kLabels.end() ? column : it->second;
}

}  // namespace greensched::report
