#include "greensched/monitor/profile_report.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace greensched::monitor {
namespace {

using nlohmann::json;

json distribution_json(const trace::Distribution& d) {
  if (d.n == 0) return json{{"n", 0}};
  return {{"n", d.n},     {"mean", d.mean}, {"min", d.min}, {"p10", d.p10}, {"p25", d.p25},
          {"p50", d.p50}, {"p75", d.p75},   {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

std::string distribution_csv(const std::vector<DistributionRow>& rows) {
  std::string out = "group,n,mean,min,p10,p25,p50,p75,p90,p99,max\n";
  for (const DistributionRow& r : rows) {
    const trace::Distribution& d = r.d;
    if (d.n == 0) {
      out += fmt::format("{},0,,,,,,,,,\n", r.group);
      continue;
    }
    out +=
        fmt::format("{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n",
                    r.group, d.n, d.mean, d.min, d.p10, d.p25, d.p50, d.p75, d.p90, d.p99, d.max);
  }
  return out;
}

std::string distribution_lines(const std::vector<DistributionRow>& rows, const char* unit) {
  std::string out = fmt::format("  {:<11} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}   ({})\n",
                                "group", "n", "mean", "p10", "p50", "p90", "p99", "max", unit);
  for (const DistributionRow& r : rows) {
    if (r.d.n == 0) {
      out += fmt::format("  {:<11} {:>6}\n", r.group, 0);
      continue;
    }
    out += fmt::format("  {:<11} {:>6} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>9.2f}\n",
                       r.group, r.d.n, r.d.mean, r.d.p10, r.d.p50, r.d.p90, r.d.p99, r.d.max);
  }
  return out;
}

}  // namespace

std::string profile_table(const WorkloadProfile& p, const GpuModelRegistry& models) {
  std::string out =
      fmt::format("workload: {}\npods: {}   GPU pods: {}   requested GPUs: {:.1f}\n\n", p.source,
                  p.pods, p.gpu_pods, p.requested_gpus);
  out +=
      fmt::format("{:<12} {:>7} {:>8} {:>10} {:>8}\n", "kind", "pods", "% pods", "GPUs", "% GPUs");
  for (const KindRow& k : p.kinds) {
    out += fmt::format("{:<12} {:>7} {:>8.1f} {:>10.1f} {:>8.1f}\n", k.kind, k.pods,
                       100 * k.pod_share, k.gpus, 100 * k.gpu_share);
  }
  out += "\nGPU share per GPU (gpu_milli) of GPU pods:\n";
  for (const GpuMilliBin& b : p.gpu_milli) {
    out += fmt::format("  {:>4}-{:<4} {:>6} {:>6.1f} %\n", b.lo, b.hi, b.pods, 100 * b.pod_share);
  }
  out += "\nvCPU per requested GPU:\n" + distribution_lines(p.cpu_per_gpu, "vCPU/GPU");
  out += "\nmemory per requested GPU:\n" + distribution_lines(p.memory_per_gpu, "GiB/GPU");
  out += fmt::format("\nGPU model constraints: {} of {} GPU pods name models\n", p.constrained_pods,
                     p.gpu_pods);
  for (const ModelRow& m : p.gpu_models) {
    out += fmt::format("  {:<10} {:>6} {:>6.1f} %\n", m.model, m.pods, 100 * m.share);
  }
  out += "\nQoS:\n";
  for (const QosRow& q : p.qos) {
    out += fmt::format("  {:<10} {:>6} pods {:>6.1f} %   {:>8.1f} GPUs {:>6.1f} %\n", q.qos, q.pods,
                       100 * q.pod_share, q.gpus, 100 * q.gpu_share);
  }
  if (p.timed_pods > 0) {
    out += fmt::format("\nlifetime (deletion - creation) of {} pods:\n", p.timed_pods);
    out += distribution_lines(p.lifetime_hours, "hours");
    out += "\narrivals by hour of day (trace time 0 = 00:00):\n ";
    for (int h = 0; h < 24; ++h) out += fmt::format(" {:02}:{}", h, p.arrivals_by_hour[h]);
    out += fmt::format("\n  over {} days\n", p.arrivals_by_day.size());
  } else {
    out += "\nno creation/deletion times: no lifetimes or arrivals\n";
  }
  out += fmt::format(
      "\nFGD target workload: {} of {} distinct shapes cover {} of {} pods ({:.1f} %); top 5:\n",
      p.target.shapes.size(), p.target.distinct_shapes, p.target.covered_pods, p.target.trace_pods,
      p.target.trace_pods > 0 ? 100.0 * static_cast<double>(p.target.covered_pods) /
                                    static_cast<double>(p.target.trace_pods)
                              : 0.0);
  for (std::size_t i = 0; i < p.target.shapes.size() && i < 5; ++i) {
    const auto& s = p.target.shapes[i];
    out +=
        fmt::format("  cpu {:>6} milli, {} GPU x {:>4} milli, models {:<8} {:>5} pods {:>5.1f} %\n",
                    s.cpu_milli, s.num_gpu, s.gpu_milli, models.describe(s.gpu_spec), s.count,
                    100 * p.target.popularity(i));
  }
  return out;
}

json profile_json(const WorkloadProfile& p, const GpuModelRegistry& models) {
  json j;
  j["source"] = p.source;
  j["pods"] = p.pods;
  j["gpu_pods"] = p.gpu_pods;
  j["requested_gpus"] = p.requested_gpus;
  j["share_cpu_only"] = p.kinds[0].pod_share;
  j["share_shared_gpu"] = p.kinds[1].pod_share;
  j["share_one_gpu"] = p.kinds[2].pod_share;
  j["share_multi_gpu"] = p.kinds[3].pod_share;
  json kinds = json::array();
  for (const KindRow& k : p.kinds) {
    kinds.push_back({{"kind", k.kind},
                     {"pods", k.pods},
                     {"pod_share", k.pod_share},
                     {"gpus", k.gpus},
                     {"gpu_share", k.gpu_share}});
  }
  j["kinds"] = kinds;
  json bins = json::array();
  for (const GpuMilliBin& b : p.gpu_milli) {
    bins.push_back({{"lo", b.lo},
                    {"hi", b.hi},
                    {"pods", b.pods},
                    {"pod_share", b.pod_share},
                    {"gpus", b.gpus}});
  }
  j["gpu_milli_histogram"] = bins;
  json cpu = json::object(), mem = json::object(), life = json::object();
  for (const auto& r : p.cpu_per_gpu) cpu[r.group] = distribution_json(r.d);
  for (const auto& r : p.memory_per_gpu) mem[r.group] = distribution_json(r.d);
  for (const auto& r : p.lifetime_hours) life[r.group] = distribution_json(r.d);
  j["vcpu_per_gpu"] = cpu;
  j["memory_gib_per_gpu"] = mem;
  j["constrained_gpu_pods"] = p.constrained_pods;
  json gm = json::array();
  for (const ModelRow& m : p.gpu_models) {
    gm.push_back({{"model", m.model}, {"pods", m.pods}, {"share", m.share}});
  }
  j["gpu_models"] = gm;
  json qos = json::array();
  for (const QosRow& q : p.qos) {
    qos.push_back({{"qos", q.qos},
                   {"pods", q.pods},
                   {"pod_share", q.pod_share},
                   {"gpus", q.gpus},
                   {"gpu_share", q.gpu_share}});
  }
  j["qos"] = qos;
  j["timed_pods"] = p.timed_pods;
  j["lifetime_hours"] = life;
  j["arrivals_by_hour"] = p.arrivals_by_hour;
  j["arrivals_by_day"] = p.arrivals_by_day;
  json shapes = json::array();
  for (std::size_t i = 0; i < p.target.shapes.size(); ++i) {
    const auto& s = p.target.shapes[i];
    shapes.push_back({{"cpu_milli", s.cpu_milli},
                      {"num_gpu", s.num_gpu},
                      {"gpu_milli", s.gpu_milli},
                      {"gpu_spec", models.describe(s.gpu_spec)},
                      {"count", s.count},
                      {"popularity", p.target.popularity(i)}});
  }
  j["target_workload"] = {{"shapes", shapes},
                          {"distinct_shapes", p.target.distinct_shapes},
                          {"covered_pods", p.target.covered_pods},
                          {"trace_pods", p.target.trace_pods}};
  return j;
}

std::vector<std::pair<std::string, std::string>> profile_csvs(const WorkloadProfile& p,
                                                              const GpuModelRegistry& models) {
  std::vector<std::pair<std::string, std::string>> files;
  std::string kinds = "kind,pods,pod_share,gpus,gpu_share\n";
  for (const KindRow& k : p.kinds) {
    kinds += fmt::format("{},{},{:.6f},{:.3f},{:.6f}\n", k.kind, k.pods, k.pod_share, k.gpus,
                         k.gpu_share);
  }
  files.emplace_back("profile_kinds.csv", kinds);
  std::string bins = "gpu_milli_lo,gpu_milli_hi,pods,pod_share,gpus\n";
  for (const GpuMilliBin& b : p.gpu_milli) {
    bins += fmt::format("{},{},{},{:.6f},{:.3f}\n", b.lo, b.hi, b.pods, b.pod_share, b.gpus);
  }
  files.emplace_back("profile_gpu_milli.csv", bins);
  files.emplace_back("profile_vcpu_per_gpu.csv", distribution_csv(p.cpu_per_gpu));
  files.emplace_back("profile_memory_per_gpu.csv", distribution_csv(p.memory_per_gpu));
  std::string gm = "model,pods,share\n";
  for (const ModelRow& m : p.gpu_models) {
    gm += fmt::format("{},{},{:.6f}\n", m.model, m.pods, m.share);
  }
  files.emplace_back("profile_gpu_models.csv", gm);
  std::string qos = "qos,pods,pod_share,gpus,gpu_share\n";
  for (const QosRow& q : p.qos) {
    qos += fmt::format("{},{},{:.6f},{:.3f},{:.6f}\n", q.qos, q.pods, q.pod_share, q.gpus,
                       q.gpu_share);
  }
  files.emplace_back("profile_qos.csv", qos);
  files.emplace_back("profile_lifetime_hours.csv", distribution_csv(p.lifetime_hours));
  std::string hours = "hour,pods\n";
  for (int h = 0; h < 24; ++h) hours += fmt::format("{},{}\n", h, p.arrivals_by_hour[h]);
  files.emplace_back("profile_arrivals_by_hour.csv", hours);
  std::string days = "day,pods\n";
  for (std::size_t d = 0; d < p.arrivals_by_day.size(); ++d) {
    days += fmt::format("{},{}\n", d, p.arrivals_by_day[d]);
  }
  files.emplace_back("profile_arrivals_by_day.csv", days);
  std::string target = "rank,cpu_milli,num_gpu,gpu_milli,gpu_spec,count,popularity,cumulative\n";
  double cumulative = 0;
  for (std::size_t i = 0; i < p.target.shapes.size(); ++i) {
    const auto& s = p.target.shapes[i];
    cumulative += p.target.popularity(i);
    target +=
        fmt::format("{},{},{},{},{},{},{:.6f},{:.6f}\n", i + 1, s.cpu_milli, s.num_gpu, s.gpu_milli,
                    models.describe(s.gpu_spec), s.count, p.target.popularity(i), cumulative);
  }
  files.emplace_back("profile_target_workload.csv", target);
  return files;
}

}  // namespace greensched::monitor
