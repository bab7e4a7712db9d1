#include "greensched/report/results_writer.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "greensched/core/text_file.hpp"
#include "greensched/report/column_key.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::report {
namespace {

std::string cell(const std::optional<sim::CurvePoint>& p, double sim::CurvePoint::*field) {
  return p ? fmt::format("{:.4f}", (*p).*field) : std::string();
}

}  // namespace

void write_curves_csv(std::ostream& out, std::span<const sim::RunResult> results) {
  fmt::print(out,
             "policy,seed,arrived_gpu_pct,alloc_gpu_pct,frag_gpu_milli,events,power_watts,"
             "placed_pods,migrated_pods\n");
  for (const sim::RunResult& r : results) {
    for (const sim::CurvePoint& p : r.curve) {
      if (p.events == 0) {
        fmt::print(out, "{},{},{},,,0,,,\n", r.spec.policy, r.spec.seed, p.arrived_pct);
      } else {
        fmt::print(out, "{},{},{},{:.4f},{:.4f},{},{:.1f},{},{}\n", r.spec.policy, r.spec.seed,
                   p.arrived_pct, p.alloc_gpu_pct, p.frag_gpu_milli, p.events, p.power_watts,
                   p.placed_pods, p.migrated_pods);
      }
    }
  }
}

void write_summary_csv(std::ostream& out, std::span<const sim::RunResult> results) {
  fmt::print(
      out,
      "policy,seed,pods_arrived,pods_scheduled,pods_failed,alloc_gpu_pct_at_100,"
      "alloc_gpu_pct_at_90,alloc_gpu_pct_at_130,frag_gpu_milli_at_100,final_alloc_gpu_pct,"
      "power_watts_at_100,tune,migrate_budget_pct,pods_migrated,pods_rescued,placed_pods_at_100,"
      "migrated_pods_at_100,wall_seconds\n");
  for (const sim::RunResult& r : results) {
    const double final_pct = r.cluster_gpu_milli > 0
                                 ? 100.0 * static_cast<double>(r.allocated_gpu_milli) /
                                       static_cast<double>(r.cluster_gpu_milli)
                                 : 0.0;
    const auto at100 = sim::point_at(r.curve, 100);
    const std::string power_at_100 = at100 ? fmt::format("{:.1f}", at100->power_watts) : "";
    fmt::print(out, "{},{},{},{},{},{},{},{},{},{:.4f},{},{},{},{},{},{},{},{:.3f}\n",
               r.spec.policy, r.spec.seed, r.pods_arrived, r.pods_scheduled, r.pods_failed,
               cell(at100, &sim::CurvePoint::alloc_gpu_pct),
               cell(sim::point_at(r.curve, 90), &sim::CurvePoint::alloc_gpu_pct),
               cell(sim::point_at(r.curve, 130), &sim::CurvePoint::alloc_gpu_pct),
               cell(at100, &sim::CurvePoint::frag_gpu_milli), final_pct, power_at_100, r.spec.tune,
               r.spec.migrate_budget_pct, r.pods_migrated, r.pods_rescued,
               at100 ? std::to_string(at100->placed_pods) : std::string(),
               at100 ? std::to_string(at100->migrated_pods) : std::string(), r.wall_seconds);
  }
}

void write_occupancy_csv(std::ostream& out, const trace::Workload& workload,
                         std::span<const sim::RunResult> results) {
  fmt::print(out, "policy,seed,arrived_gpu_pct,node,model,gpu,used_milli\n");
  for (const sim::RunResult& r : results) {
    for (std::size_t n = 0; n < r.snapshot_used_milli.size() && n < workload.nodes.size(); ++n) {
      const NodeSpec& node = workload.nodes[n];
      const std::string model =
          node.model == kNoGpuModel ? std::string() : workload.models.name(node.model);
      for (std::size_t g = 0; g < r.snapshot_used_milli[n].size(); ++g) {
        fmt::print(out, "{},{},{},{},{},{},{}\n", r.spec.policy, r.spec.seed, r.snapshot_at_pct,
                   node.name, model, g, r.snapshot_used_milli[n][g]);
      }
    }
  }
}

Status write_results(const std::string& dir, std::span<const sim::RunResult> results,
                     const trace::Workload* workload) {
  std::vector<std::pair<std::string, std::string>> files;
  const auto add = [&](const char* name, auto writer) {
    std::ostringstream out;
    writer(out, results);
    files.emplace_back(name, std::move(out).str());
  };
  add("curves.csv", write_curves_csv);
  add("summary.csv", write_summary_csv);
  const bool snapshots = std::any_of(results.begin(), results.end(), [](const sim::RunResult& r) {
    return !r.snapshot_used_milli.empty();
  });
  if (workload != nullptr && snapshots) {
    add("occupancy.csv", [&](std::ostream& out, std::span<const sim::RunResult> rs) {
      write_occupancy_csv(out, *workload, rs);
    });
  }
  return write_text_files(dir, files);
}

std::string summary_table(std::span<const sim::RunResult> results, bool by_model) {
  struct Acc {
    int runs = 0;
    std::map<int, std::pair<double, int>> alloc;  // pct -> (sum, count)
    double frag_sum = 0;
    double power_sum = 0;
    int at_100 = 0;
    double failed = 0;
    double seconds = 0;
    std::map<std::string, std::pair<double, int>> by_model;  // model -> (watts sum, runs)
  };
  std::vector<std::string> order;
  std::map<std::string, Acc> by_policy;
  for (const sim::RunResult& r : results) {
    auto [it, inserted] = by_policy.try_emplace(r.spec.policy);
    if (inserted) order.push_back(r.spec.policy);
    Acc& a = it->second;
    ++a.runs;
    for (int pct : {90, 100, 130}) {
      if (auto p = sim::point_at(r.curve, pct)) {
        a.alloc[pct].first += p->alloc_gpu_pct;
        ++a.alloc[pct].second;
      }
    }
    if (auto p = sim::point_at(r.curve, 100)) {
      a.frag_sum += p->frag_gpu_milli;
      a.power_sum += p->power_watts;
      ++a.at_100;
    }
    for (const auto& [model, watts] : r.power_by_model_at_100) {
      a.by_model[model].first += watts;
      ++a.by_model[model].second;
    }
    a.failed += static_cast<double>(r.pods_failed);
    a.seconds += r.wall_seconds;
  }
  const auto mean_cell = [](const Acc& a, int pct) {
    auto it = a.alloc.find(pct);
    return it == a.alloc.end() ? std::string("-")
                               : fmt::format("{:.2f}", it->second.first / it->second.second);
  };
  std::size_t width = 11;
  for (const std::string& name : order) width = std::max(width, name.size());
  std::string out = fmt::format("{:<{}} {:>5} {:>9} {:>9} {:>9} {:>12} {:>12} {:>11} {:>9}\n",
                                "policy", width, "seeds", "alloc@90", "alloc@100", "alloc@130",
                                "frag@100 GPUs", "facility kW@100", "failed pods", "run s");
  for (const std::string& name : order) {
    const Acc& a = by_policy.at(name);
    const auto mean_at_100 = [&](double sum, double scale) {
      return a.at_100 ? fmt::format("{:.1f}", sum / a.at_100 / scale) : std::string("-");
    };
    out += fmt::format("{:<{}} {:>5} {:>9} {:>9} {:>9} {:>12} {:>12} {:>11.1f} {:>9.3f}\n", name,
                       width, a.runs, mean_cell(a, 90), mean_cell(a, 100), mean_cell(a, 130),
                       mean_at_100(a.frag_sum, 1000.0), mean_at_100(a.power_sum, 1000.0),
                       a.failed / a.runs, a.seconds / a.runs);
  }
  static constexpr ColumnKey kKey[] = {
      {"policy", "policy", "the policy (--policy)"},
      {"seeds", "seed", "how many seeds the row's means are over"},
      {"alloc@90", "alloc_gpu_pct_at_90",
       "GPU allocation, % of cluster GPUs, when arrived GPU requests are 90 % of capacity"},
      {"alloc@100", "alloc_gpu_pct_at_100", "the same at 100 % (the FGD paper's headline)"},
      {"alloc@130", "alloc_gpu_pct_at_130", "the same at 130 % (-: --tune stops before 130 %)"},
      {"frag@100 GPUs", "frag_gpu_milli_at_100",
       "GPUs lost to fragmentation at 100 % arrival (the CSV holds milli-GPUs)"},
      {"facility kW@100", "power_watts_at_100",
       "facility power at 100 % arrival, PUE included (the CSV holds W)"},
      {"failed pods", "pods_failed", "arrived pods that no node could host"},
      {"run s", "wall_seconds", "wall time of one run"},
  };
  out += "means over seeds; " + column_key("summary.csv", kKey);
  if (!by_model) return out;

  std::vector<std::string> models;
  for (const std::string& name : order) {
    for (const auto& entry : by_policy.at(name).by_model) {
      if (std::find(models.begin(), models.end(), entry.first) == models.end()) {
        models.push_back(entry.first);
      }
    }
  }
  std::sort(models.begin(), models.end());
  out += fmt::format(
      "\nfacility power at 100 % arrival by the nodes' GPU model (kW, mean over seeds)\n{:<{}}",
      "policy", width);
  for (const std::string& m : models) out += fmt::format(" {:>9}", m);
  out += "\n";
  for (const std::string& name : order) {
    out += fmt::format("{:<{}}", name, width);
    const Acc& a = by_policy.at(name);
    for (const std::string& m : models) {
      auto it = a.by_model.find(m);
      out += it == a.by_model.end()
                 ? fmt::format(" {:>9}", "-")
                 : fmt::format(" {:>9.1f}", it->second.first / it->second.second / 1000.0);
    }
    out += "\n";
  }
  return out;
}

}  // namespace greensched::report
