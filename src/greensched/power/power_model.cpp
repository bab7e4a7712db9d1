#include "greensched/power/power_model.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/json_fields.hpp"

#include "greensched/core/text_file.hpp"

namespace greensched::power {

extern const char kBuiltinPowerModelJson[];

namespace {

using nlohmann::json;

// More cores per socket than any CPU has; keeps the socket arithmetic in range.
constexpr int64_t kMaxCoresPerSocket = 4096;

// Reads key `name` of `obj` as a number; `path` names it in errors.
Result<double> number(const json& obj, const char* name, const std::string& path) {
  auto it = obj.find(name);
  if (it == obj.end()) return Error{fmt::format("{}.{}: missing", path, name)};
  if (!it->is_number()) return Error{fmt::format("{}.{}: expected a number", path, name)};
  const double v = it->get<double>();
  if (!(v >= 0) || !std::isfinite(v)) {
    return Error{fmt::format("{}.{}: must be a non-negative number", path, name)};
  }
  return v;
}

Result<NodeTypeOverride> parse_override(const json& j, const std::string& path) {
  if (!j.is_object()) return Error{fmt::format("{}: expected an object", path)};
  NodeTypeOverride o;
  for (const auto& [key, value] : j.items()) {
    const std::string where = fmt::format("{}.{}", path, key);
    if (key == "gpu_model" || key == "cpu" || key == "gpu") {
      if (!value.is_string()) return Error{fmt::format("{}: expected a string", where)};
      const std::string text = value.get<std::string>();
      // GPU names in the one spelling nodes are read in (core/gpu_model.hpp).
      (key == "gpu_model" ? o.gpu_model
       : key == "cpu"     ? o.cpu
                          : o.gpu) = key == "cpu" ? text : canonical_gpu_model(text);
    } else if (key == "gpu_count") {
      auto count = integer_member(j, key, path, 0, kMaxGpusPerNode);
      if (!count.ok()) return Error{count.error()};
      o.gpu_count = static_cast<int>(count.value());
    } else if (key == "cpu_milli") {
      auto milli = integer_member(j, key, path, 0, std::numeric_limits<int64_t>::max());
      if (!milli.ok()) return Error{milli.error()};
      o.cpu_milli = milli.value();
    } else {
      return Error{fmt::format(
          "{}: unknown key (expected gpu_model, gpu_count, cpu_milli, cpu, gpu)", where)};
    }
  }
  return o;
}

Status parse_into(const json& root, const std::string& src, std::map<std::string, GpuPower>& gpus,
                  std::map<std::string, CpuPower>& cpus, std::string& default_cpu,
                  std::vector<NodeTypeOverride>& types,
                  std::map<std::string, NodeTypeOverride>& nodes, double& pue,
                  GpuPowerRule& gpu_rule, bool extending) {
  if (!root.is_object()) return Error{fmt::format("{}: expected a JSON object", src)};
  for (const auto& [key, value] : root.items()) {
    static const char* kKnown[] = {"_comment",   "gpus",  "cpus", "default_cpu",
                                   "node_types", "nodes", "pue",  "gpu_power"};
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    if (!known) return Error{fmt::format("{}: {}: unknown key", src, key)};
  }
  // On top of the built-in model every section is optional; present, it has its type.
  const auto section = [&](const char* key) -> Result<bool> {
    if (!root.contains(key)) {
      if (extending) return false;
      return Error{fmt::format("{}: {}: missing or not an object", src, key)};
    }
    if (!root[key].is_object()) {
      return Error{fmt::format("{}: {}: missing or not an object", src, key)};
    }
    return true;
  };
  auto has_gpus = section("gpus");
  if (!has_gpus.ok()) return Error{has_gpus.error()};
  auto has_cpus = section("cpus");
  if (!has_cpus.ok()) return Error{has_cpus.error()};
  static const json kNone = json::object();
  const json& gpu_entries = has_gpus.value() ? root["gpus"] : kNone;
  const json& cpu_entries = has_cpus.value() ? root["cpus"] : kNone;
  // Keys in the spelling nodes are read in: "NVIDIA-H100-80GB-HBM3" and "H100" are one model,
  // so a file may not give both.
  std::map<std::string, std::string> spelled;  // canonical -> the key that gave it
  for (const auto& [name, entry] : gpu_entries.items()) {
    const std::string path = fmt::format("{}: gpus.{}", src, name);
    if (!entry.is_object()) return Error{fmt::format("{}: expected an object", path)};
    if (entry.contains("source") && !entry["source"].is_string()) {
      return Error{fmt::format("{}.source: expected a string", path)};
    }
    const auto [it, fresh] = spelled.emplace(canonical_gpu_model(name), name);
    if (!fresh) {
      return Error{
          fmt::format("{}: names the same GPU model as gpus.{} ({})", path, it->second, it->first)};
    }
  }
  // Plain entries first, then same_as references.
  for (const auto& [name_as_given, entry] : gpu_entries.items()) {
    const std::string name = canonical_gpu_model(name_as_given);
    const std::string path = fmt::format("{}: gpus.{}", src, name_as_given);
    if (entry.contains("same_as")) continue;
    auto idle = number(entry, "idle_watts", path);
    if (!idle.ok()) return Error{idle.error()};
    auto max = number(entry, "max_watts", path);
    if (!max.ok()) return Error{max.error()};
    if (max.value() < idle.value()) {
      return Error{
          fmt::format("{}: max_watts {} is below idle_watts {}", path, max.value(), idle.value())};
    }
    gpus[name] = GpuPower{idle.value(), max.value()};
  }
  for (const auto& [name_as_given, entry] : gpu_entries.items()) {
    if (!entry.contains("same_as")) continue;
    const std::string name = canonical_gpu_model(name_as_given);
    const std::string path = fmt::format("{}: gpus.{}.same_as", src, name_as_given);
    if (!entry["same_as"].is_string()) return Error{fmt::format("{}: expected a string", path)};
    auto it = gpus.find(canonical_gpu_model(entry["same_as"].get<std::string>()));
    if (it == gpus.end()) {
      std::vector<std::string> known;
      for (const auto& [g, power] : gpus) known.push_back(g);
      return Error{
          fmt::format("{}: '{}' is not a GPU with figures (known: {}; or give this one "
                      "\"idle_watts\" and \"max_watts\")",
                      path, entry["same_as"].get<std::string>(), fmt::join(known, ", "))};
    }
    gpus[name] = it->second;
  }
  for (const auto& [name, entry] : cpu_entries.items()) {
    const std::string path = fmt::format("{}: cpus.{}", src, name);
    if (!entry.is_object()) return Error{fmt::format("{}: expected an object", path)};
    auto idle = number(entry, "idle_watts", path);
    if (!idle.ok()) return Error{idle.error()};
    auto max = number(entry, "max_watts", path);
    if (!max.ok()) return Error{max.error()};
    auto cps = integer_member(entry, "cores_per_socket", path, 1, kMaxCoresPerSocket);
    if (!cps.ok()) return Error{cps.error()};
    cpus[name] = CpuPower{name, idle.value(), max.value(), static_cast<int>(cps.value())};
  }
  if (root.contains("default_cpu") || !extending) {
    if (!root.contains("default_cpu") || !root["default_cpu"].is_string()) {
      return Error{fmt::format("{}: default_cpu: missing or not a string", src)};
    }
    default_cpu = root["default_cpu"].get<std::string>();
  }
  if (!cpus.count(default_cpu)) {
    return Error{fmt::format("{}: default_cpu: '{}' is not in cpus", src, default_cpu)};
  }
  const auto check_refs = [&](const NodeTypeOverride& o, const std::string& path) -> Status {
    if (o.cpu && !cpus.count(*o.cpu)) {
      return Error{fmt::format("{}.cpu: '{}' is not in cpus", path, *o.cpu)};
    }
    if (o.gpu && !gpus.count(*o.gpu)) {
      return Error{fmt::format("{}.gpu: '{}' is not in gpus", path, *o.gpu)};
    }
    return Status::Ok();
  };
  if (root.contains("node_types")) {
    if (!root["node_types"].is_array()) {
      return Error{fmt::format("{}: node_types: expected an array", src)};
    }
    for (std::size_t i = 0; i < root["node_types"].size(); ++i) {
      const std::string path = fmt::format("{}: node_types[{}]", src, i);
      auto o = parse_override(root["node_types"][i], path);
      if (!o.ok()) return Error{o.error()};
      if (Status s = check_refs(o.value(), path); !s.ok()) return s;
      types.push_back(o.value());
    }
  }
  if (root.contains("nodes")) {
    if (!root["nodes"].is_object()) return Error{fmt::format("{}: nodes: expected an object", src)};
    for (const auto& [name, entry] : root["nodes"].items()) {
      const std::string path = fmt::format("{}: nodes.{}", src, name);
      auto o = parse_override(entry, path);
      if (!o.ok()) return Error{o.error()};
      if (Status s = check_refs(o.value(), path); !s.ok()) return s;
      nodes[name] = o.value();
    }
  }
  if (root.contains("pue")) {
    auto p = number(root, "pue", src + ": pue");
    if (!p.ok() || p.value() < 1.0) {
      return Error{fmt::format("{}: pue: must be a number >= 1.0", src)};
    }
    pue = p.value();
  }
  if (root.contains("gpu_power")) {
    const json& rule = root["gpu_power"];
    if (!rule.is_string()) {
      return Error{fmt::format("{}: gpu_power: expected \"pwr\" or \"proportional\"", src)};
    }
    auto parsed = parse_gpu_power_rule(rule.get<std::string>());
    if (!parsed.ok()) return Error{fmt::format("{}: gpu_power: {}", src, parsed.error())};
    gpu_rule = parsed.value();
  }
  return Status::Ok();
}

// The message of check_gpu_models and resolve.
std::string unknown_model_message(const std::string& where, const std::string& name,
                                  const std::string& source, const std::vector<std::string>& known,
                                  std::string_view how_to_add) {
  return fmt::format(
      "{}{}unknown GPU model \"{}\" (no figures in the {}); known: {}; add it with {} (an "
      "entry in \"gpus\" with idle_watts and max_watts, or \"same_as\" a known model)",
      where, where.empty() ? "" : ": ", name, source, fmt::join(known, ", "), how_to_add);
}

bool matches(const NodeTypeOverride& o, const NodeSpec& n, const GpuModelRegistry& models) {
  if (o.gpu_model && (n.model == kNoGpuModel || models.name(n.model) != *o.gpu_model)) return false;
  if (o.gpu_count && n.gpu_count != *o.gpu_count) return false;
  if (o.cpu_milli && n.cpu_milli != *o.cpu_milli) return false;
  return true;
}

}  // namespace

std::string_view gpu_power_rule_name(GpuPowerRule rule) {
  return rule == GpuPowerRule::kPwr ? "pwr" : "proportional";
}

Result<GpuPowerRule> parse_gpu_power_rule(std::string_view text) {
  if (text == "pwr") return GpuPowerRule::kPwr;
  if (text == "proportional") return GpuPowerRule::kProportional;
  return Error{fmt::format(
      "unknown GPU power rule '{}' (expected pwr: any allocation draws max, or proportional: "
      "idle + (max - idle) x allocated share)",
      text)};
}

PowerModel PowerModel::builtin() {
  auto model = parse(kBuiltinPowerModelJson, "built-in power model");
  model.value().source_ = "built-in power model";  // the shipped file is checked by the tests
  return std::move(model.value());
}

Result<PowerModel> PowerModel::parse(std::string_view json_text, const std::string& source) {
  auto parsed = parse_json_text(json_text, source);
  if (!parsed.ok()) return parsed.status().error();
  const json& root = parsed.value();
  PowerModel m;
  m.source_ = "power model " + source;
  if (Status s = parse_into(root, source, m.gpus_, m.cpus_, m.default_cpu_, m.node_types_, m.nodes_,
                            m.pue_, m.gpu_rule_, false);
      !s.ok()) {
    return Error{s.message()};
  }
  return m;
}

Result<PowerModel> PowerModel::extend(std::string_view json_text, const std::string& source) {
  auto parsed = parse_json_text(json_text, source);
  if (!parsed.ok()) return parsed.status().error();
  PowerModel m = builtin();
  m.source_ = "power model " + source + " (on the built-in one)";
  if (Status s = parse_into(parsed.value(), source, m.gpus_, m.cpus_, m.default_cpu_, m.node_types_,
                            m.nodes_, m.pue_, m.gpu_rule_, true);
      !s.ok()) {
    return Error{s.message()};
  }
  return m;
}

Result<PowerModel> PowerModel::load(const std::string& path) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  return extend(text.value(), path);
}

Result<std::vector<NodePower>> PowerModel::resolve(std::span<const NodeSpec> nodes,
                                                   const GpuModelRegistry& models,
                                                   std::string_view how_to_add) const {
  std::vector<NodePower> out;
  out.reserve(nodes.size());
  for (const NodeSpec& n : nodes) {
    std::string cpu = default_cpu_;
    std::optional<std::string> gpu;
    if (n.model != kNoGpuModel) gpu = models.name(n.model);
    for (const NodeTypeOverride& o : node_types_) {
      if (!matches(o, n, models)) continue;
      if (o.cpu) cpu = *o.cpu;
      if (o.gpu) gpu = *o.gpu;
    }
    if (auto it = nodes_.find(n.name); it != nodes_.end()) {
      if (it->second.cpu) cpu = *it->second.cpu;
      if (it->second.gpu) gpu = *it->second.gpu;
    }
    NodePower p;
    p.gpu_rule = gpu_rule_;
    p.cpu = cpus_.at(cpu);
    if (n.gpu_count > 0 && gpu) {
      auto it = find_gpu(*gpu);
      if (it == gpus_.end()) {
        const std::string& seen = models.first_seen(n.model);
        return Error{unknown_model_message(seen.empty() ? fmt::format("node {}", n.name) : seen,
                                           *gpu, source_, gpu_names(), how_to_add)};
      }
      p.gpu = it->second;
      p.gpu_name = *gpu;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> PowerModel::gpu_names() const {
  std::vector<std::string> out;
  for (const auto& [name, figures] : gpus_) out.push_back(name);
  return out;  // a std::map's keys: sorted
}

std::optional<GpuPower> PowerModel::gpu(std::string_view name) const {
  auto it = find_gpu(name);
  if (it == gpus_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, GpuPower>::const_iterator PowerModel::find_gpu(std::string_view name) const {
  const std::string canonical = canonical_gpu_model(name);
  if (auto it = gpus_.find(canonical); it != gpus_.end()) return it;
  // A name no built-in spelling knows ("h800") matches a key ignoring case ("H800").
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string wanted = lower(canonical);
  for (auto it = gpus_.begin(); it != gpus_.end(); ++it) {
    if (lower(it->first) == wanted) return it;
  }
  return gpus_.end();
}

Status check_gpu_models(const PowerModel& model, std::span<const NodeSpec> nodes,
                        const GpuModelRegistry& models, std::string_view how_to_add) {
  auto figures = model.resolve(nodes, models, how_to_add);
  if (!figures.ok()) return Error{figures.error()};
  return Status::Ok();
}

double gpu_power_watts(const NodePower& power, int32_t free_milli) {
  if (free_milli >= kGpuMilli) return power.gpu.idle_watts;
  if (power.gpu_rule == GpuPowerRule::kPwr) return power.gpu.max_watts;
  const double used = static_cast<double>(kGpuMilli - std::max(free_milli, 0)) / kGpuMilli;
  return power.gpu.idle_watts + (power.gpu.max_watts - power.gpu.idle_watts) * used;
}

double pod_floor_watts(const NodeSpec& spec, const NodePower& power, const PodSpec& pod) {
  const double gpus = static_cast<double>(pod.total_gpu_milli()) / kGpuMilli;
  double watts = gpus * power.gpu.max_watts;
  if (spec.cpu_milli > 0) {
    const auto physical =
        static_cast<int64_t>(std::ceil(static_cast<double>(spec.cpu_milli) / 2000.0));
    const int64_t cps = power.cpu.cores_per_socket;
    const int64_t sockets = (physical + cps - 1) / cps;
    watts += static_cast<double>(pod.cpu_milli) / static_cast<double>(spec.cpu_milli) *
             static_cast<double>(sockets) * power.cpu.max_watts;
  }
  return watts;
}

PowerSplit node_power_split(const NodeSpec& spec, const NodePower& power, int64_t cpu_free_milli,
                            const int32_t* gpu_free_milli) {
  PowerSplit split;
  for (int g = 0; g < spec.gpu_count; ++g)
    split.gpu_watts += gpu_power_watts(power, gpu_free_milli[g]);
  split.cpu_watts = cpu_power_watts(spec, power.cpu, cpu_free_milli);
  return split;
}

double node_power_watts(const NodeSpec& spec, const NodePower& power, int64_t cpu_free_milli,
                        const int32_t* gpu_free_milli) {
  return node_power_split(spec, power, cpu_free_milli, gpu_free_milli).total();
}

ClusterPower::ClusterPower(std::vector<NodePower> nodes, const Cluster& cluster)
    : nodes_(std::move(nodes)), node_watts_(cluster.size(), 0.0) {
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster.size()); ++n) update(cluster, n);
}

void ClusterPower::update(const Cluster& cluster, NodeIndex node) {
  const NodeState& s = cluster.state(node);
  const double now = !s.online ? 0.0
                               : node_power_watts(cluster.spec(node), nodes_[node],
                                                  s.cpu_free_milli, s.gpu_free_milli.data());
  total_watts_ += now - node_watts_[node];
  node_watts_[node] = now;
}

}  // namespace greensched::power
