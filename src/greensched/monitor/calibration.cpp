#include "greensched/monitor/calibration.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::monitor {
namespace {

std::vector<std::string> words(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (separators.find(c) != std::string_view::npos) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool known(std::span<const std::string> keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

double round1(double v) {
  return std::round(v * 10.0) / 10.0;
}

// Fits one group's (utilisation, watts) points into `out`, or says why not in `skipped`.
void fit_group(CalibrationFit fit, const std::vector<double>& util,
               const std::vector<double>& watts, int64_t min_samples, Calibration& out) {
  const std::string what = fmt::format("{} {} ({})", fit.kind, fit.key, fit.source);
  if (static_cast<int64_t>(util.size()) < min_samples) {
    out.skipped.push_back(
        fmt::format("{}: {} readings, fewer than {}", what, util.size(), min_samples));
    return;
  }
  auto f = fit_linear(util, watts);
  if (!f.ok()) {
    out.skipped.push_back(fmt::format("{}: {}", what, f.error()));
    return;
  }
  fit.fit = f.value();
  fit.idle_watts = std::max(0.0, fit.fit.intercept);
  fit.max_watts = std::max(fit.idle_watts, fit.fit.intercept + fit.fit.slope);
  if (fit.fit.slope < 0) fit.warnings.push_back("power falls with utilisation: max set to idle");
  if (fit.fit.x_min > 0.2) {
    fit.warnings.push_back(
        fmt::format("lowest utilisation seen {:.2f}: idle is extrapolated", fit.fit.x_min));
  }
  if (fit.fit.x_max < 0.8) {
    fit.warnings.push_back(
        fmt::format("highest utilisation seen {:.2f}: max is extrapolated", fit.fit.x_max));
  }
  if (fit.fit.r2 < 0.5) {
    fit.warnings.push_back(fmt::format("R² {:.2f}: power follows utilisation poorly", fit.fit.r2));
  }
  out.fits.push_back(std::move(fit));
}

}  // namespace

std::string gpu_model_key(std::string_view nvml_name, std::span<const std::string> known_keys) {
  const std::vector<std::string> w = words(nvml_name, " -_");
  bool has16 = false, has32 = false;
  for (const std::string& t : w) {
    has16 = has16 || upper(t) == "16GB";
    has32 = has32 || upper(t) == "32GB";
  }
  for (const std::string& t : w) {
    const std::string u = upper(t);
    if (u == "V100") {
      if (has16 && known(known_keys, "V100M16")) return "V100M16";
      if (has32 && known(known_keys, "V100M32")) return "V100M32";
    }
    for (const std::string& k : known_keys) {
      if (upper(k) == u) return k;
    }
  }
  static const std::set<std::string> kVendor = {"NVIDIA", "TESLA", "GEFORCE", "QUADRO"};
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string u = upper(w[i]);
    if (kVendor.count(u)) continue;
    if ((u == "RTX" || u == "GTX" || u == "TITAN") && i + 1 < w.size()) {
      return w[i] + " " + w[i + 1];
    }
    return w[i];
  }
  return std::string(nvml_name.empty() ? "unknown GPU" : nvml_name);
}

std::string cpu_model_key(std::string_view cpu_model, std::span<const std::string> known_keys) {
  std::string s(cpu_model);
  if (const std::size_t at = s.find('@'); at != std::string::npos) s.erase(at);
  for (const char* mark : {"(R)", "(r)", "(TM)", "(tm)"}) {
    for (std::size_t p = s.find(mark); p != std::string::npos; p = s.find(mark)) {
      s.erase(p, std::string_view(mark).size());
    }
  }
  std::string key;
  for (const std::string& t : words(s, " \t")) {
    const std::string u = upper(t);
    if (u == "INTEL" || u == "CPU" || u == "PROCESSOR" ||
        (u.size() > 5 && u.substr(u.size() - 5) == "-CORE")) {
      continue;
    }
    key += key.empty() ? t : " " + t;
  }
  for (const std::string& k : known_keys) {
    if (upper(k) == upper(key)) return k;
  }
  return key;
}

Calibration calibrate(std::span<const NodeSample> samples,
                      std::span<const std::string> known_gpu_keys,
                      std::span<const std::string> known_cpu_keys,
                      const CalibrationOptions& options) {
  Calibration out;
  out.samples = static_cast<int64_t>(samples.size());

  // GPUs: every reading with power and utilisation.
  struct Points {
    std::set<std::string> sources;
    std::vector<double> util, watts;
    std::map<int, int64_t> cores_per_socket;  // value -> readings
  };
  std::map<std::string, Points> gpus;
  for (const NodeSample& s : samples) {
    for (const GpuReading& g : s.gpus) {
      if (!g.power_watts || !g.utilization) continue;
      auto mapped = options.gpu_keys.find(g.name);
      const std::string key =
          mapped != options.gpu_keys.end() ? mapped->second : gpu_model_key(g.name, known_gpu_keys);
      Points& p = gpus[key];
      p.sources.insert(g.name);
      p.util.push_back(*g.utilization);
      p.watts.push_back(*g.power_watts);
    }
  }
  for (const auto& [key, p] : gpus) {
    CalibrationFit fit;
    fit.kind = "gpu";
    fit.key = key;
    std::string names;
    for (const std::string& n : p.sources) names += names.empty() ? n : ", " + n;
    fit.source = names;
    fit_group(std::move(fit), p.util, p.watts, options.min_samples, out);
  }

  // CPUs: package power between consecutive readings of the same host.
  std::vector<const NodeSample*> order;
  for (const NodeSample& s : samples) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const NodeSample* a, const NodeSample* b) {
    return a->host != b->host ? a->host < b->host : a->time_s < b->time_s;
  });
  std::map<std::string, Points> cpus;
  for (std::size_t i = 1; i < order.size(); ++i) {
    const NodeSample& a = *order[i - 1];
    const NodeSample& b = *order[i];
    if (a.host != b.host || b.packages.empty()) continue;
    const double dt = b.time_s - a.time_s;
    if (!(dt > 0)) continue;
    // Consecutive readings of one agent run: the next sequence number, or (without sequence
    // numbers) a gap matching the later reading's interval.
    const bool consecutive = (a.seq > 0 && b.seq > 0)
                                 ? b.seq == a.seq + 1
                                 : std::abs(dt - b.interval_s) <= 0.25 * b.interval_s;
    if (!consecutive) continue;
    const std::string key = !options.cpu_key.empty() ? options.cpu_key
                            : b.cpu_model.empty()    ? std::string("unknown CPU")
                                                     : cpu_model_key(b.cpu_model, known_cpu_keys);
    Points& p = cpus[key];
    p.sources.insert(b.cpu_model.empty() ? "unknown" : b.cpu_model);
    for (const PackageEnergy& pb : b.packages) {
      if (!pb.has_utilization) continue;
      auto pa = std::find_if(a.packages.begin(), a.packages.end(),
                             [&](const PackageEnergy& x) { return x.package == pb.package; });
      if (pa == a.packages.end() || pb.energy_joules < pa->energy_joules) continue;
      p.util.push_back(pb.utilization);
      p.watts.push_back((pb.energy_joules - pa->energy_joules) / dt);
      int cps = b.cores_per_socket;
      if (cps <= 0) {
        cps =
            static_cast<int>(std::count_if(b.cores.begin(), b.cores.end(), [&](const CoreUsage& c) {
              return c.package == pb.package;
            }));
      }
      if (cps > 0) ++p.cores_per_socket[cps];
    }
  }
  for (const auto& [key, p] : cpus) {
    CalibrationFit fit;
    fit.kind = "cpu";
    fit.key = key;
    fit.source = *p.sources.begin();
    int64_t best = 0;
    for (const auto& [cps, n] : p.cores_per_socket) {
      if (n > best) {
        best = n;
        fit.cores_per_socket = cps;
      }
    }
    if (fit.cores_per_socket <= 0) fit.cores_per_socket = 1;
    fit_group(std::move(fit), p.util, p.watts, options.min_samples, out);
  }
  if (gpus.empty()) out.skipped.push_back("gpu: no reading with GPU power and utilisation");
  if (cpus.empty()) {
    out.skipped.push_back(
        "cpu: no consecutive readings with RAPL package energy (run the agent as root on a "
        "machine with intel-rapl)");
  }
  return out;
}

Result<std::string> calibrated_model_json(const Calibration& calibration,
                                          std::string_view base_json,
                                          const std::string& base_source) {
  auto base = power::PowerModel::parse(base_json, base_source);
  if (!base.ok()) return Error{base.error()};
  nlohmann::json root = parse_json_or_discarded(base_json);
  if (root.is_discarded() || !root.is_object()) {
    return Error{fmt::format("{}: not a JSON object", base_source)};
  }
  std::string note;
  for (const CalibrationFit& f : calibration.fits) {
    if (f.kind == "gpu") {
      root["gpus"][f.key] = {{"idle_watts", round1(f.idle_watts)},
                             {"max_watts", round1(f.max_watts)}};
    } else {
      root["cpus"][f.key] = {{"idle_watts", round1(f.idle_watts)},
                             {"max_watts", round1(f.max_watts)},
                             {"cores_per_socket", f.cores_per_socket}};
    }
    note += fmt::format("{}{} {} (R² {:.3f}, MAE {:.1f} W, {} readings)", note.empty() ? "" : "; ",
                        f.kind, f.key, f.fit.r2, f.fit.mae, f.fit.n);
  }
  const std::string comment = root.value("_comment", std::string());
  root["_comment"] =
      comment + (comment.empty() ? "" : " ") +
      fmt::format("Calibrated by greensched calibrate from {} readings, base {}: {}.",
                  calibration.samples, base_source, note.empty() ? "nothing fitted" : note);
  std::string text = root.dump(2) + "\n";
  auto check = power::PowerModel::parse(text, "calibrated model");
  if (!check.ok()) return Error{check.error()};
  return text;
}

std::string calibration_table(const Calibration& c) {
  std::string out = fmt::format("calibration from {} readings\n", c.samples);
  out += fmt::format("{:<4} {:<22} {:>7} {:>11} {:>8} {:>8} {:>6} {:>7}\n", "kind", "key", "points",
                     "util range", "idle W", "max W", "R²", "MAE W");
  for (const CalibrationFit& f : c.fits) {
    out += fmt::format("{:<4} {:<22} {:>7} {:>5.2f}-{:<5.2f} {:>8.1f} {:>8.1f} {:>6.3f} {:>7.2f}\n",
                       f.kind, f.key, f.fit.n, f.fit.x_min, f.fit.x_max, f.idle_watts, f.max_watts,
                       f.fit.r2, f.fit.mae);
    out += fmt::format("     from {}\n", f.source);
    for (const std::string& w : f.warnings) out += fmt::format("     warning: {}\n", w);
  }
  for (const std::string& s : c.skipped) out += fmt::format("not fitted: {}\n", s);
  return out;
}

nlohmann::json calibration_json(const Calibration& c) {
  nlohmann::json fits = nlohmann::json::array();
  for (const CalibrationFit& f : c.fits) {
    nlohmann::json j = {{"kind", f.kind},
                        {"key", f.key},
                        {"source", f.source},
                        {"points", f.fit.n},
                        {"util_min", f.fit.x_min},
                        {"util_max", f.fit.x_max},
                        {"idle_watts", f.idle_watts},
                        {"max_watts", f.max_watts},
                        {"r2", f.fit.r2},
                        {"mae_watts", f.fit.mae},
                        {"warnings", f.warnings}};
    if (f.kind == "cpu") j["cores_per_socket"] = f.cores_per_socket;
    fits.push_back(std::move(j));
  }
  return {{"samples", c.samples}, {"fits", fits}, {"skipped", c.skipped}};
}

}  // namespace greensched::monitor
