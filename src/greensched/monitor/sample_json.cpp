#include "greensched/monitor/sample_json.hpp"

#include <fmt/format.h>

namespace greensched::monitor {
namespace {

using nlohmann::json;

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <typename T>
void get_opt(const json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it != j.end() && it->is_number()) out = it->get<T>();
}

template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<T>();
}

}  // namespace

json sample_to_json(const NodeSample& s) {
  json j;
  j["seq"] = s.seq;
  j["time_s"] = s.time_s;
  j["interval_s"] = s.interval_s;
  j["host"] = s.host;
  j["cpu_model"] = s.cpu_model;
  j["cores_per_socket"] = s.cores_per_socket;
  if (s.has_cpu) {
    json cpu;
    cpu["utilization"] = s.cpu_utilization;
    json cores = json::array();
    for (const CoreUsage& c : s.cores) {
      cores.push_back({{"cpu", c.cpu},
                       {"package", c.package},
                       {"utilization", c.utilization},
                       {"busy_s", c.busy_seconds},
                       {"idle_s", c.idle_seconds}});
    }
    cpu["cores"] = std::move(cores);
    j["cpu"] = std::move(cpu);
  }
  if (s.has_memory) {
    j["memory"] = {{"total_bytes", s.memory_total_bytes},
                   {"used_bytes", s.memory_used_bytes},
                   {"available_bytes", s.memory_available_bytes}};
  }
  if (!s.packages.empty()) {
    json packages = json::array();
    for (const PackageEnergy& p : s.packages) {
      json pj = {{"package", p.package},
                 {"zone", p.zone},
                 {"energy_joules", p.energy_joules},
                 {"power_watts", p.power_watts}};
      if (p.has_utilization) pj["utilization"] = p.utilization;
      packages.push_back(std::move(pj));
    }
    j["packages"] = std::move(packages);
  }
  if (!s.gpus.empty()) {
    json gpus = json::array();
    for (const GpuReading& g : s.gpus) {
      json gj = {{"index", g.index}, {"name", g.name}};
      if (!g.uuid.empty()) gj["uuid"] = g.uuid;
      put(gj, "power_watts", g.power_watts);
      put(gj, "energy_joules", g.energy_joules);
      put(gj, "utilization", g.utilization);
      put(gj, "memory_utilization", g.memory_utilization);
      put(gj, "memory_used_bytes", g.memory_used_bytes);
      put(gj, "memory_total_bytes", g.memory_total_bytes);
      put(gj, "temperature_celsius", g.temperature_celsius);
      gpus.push_back(std::move(gj));
    }
    j["gpus"] = std::move(gpus);
  }
  return j;
}

Result<NodeSample> sample_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) return Error{fmt::format("{}: expected a JSON object", where)};
  try {
    NodeSample s;
    s.seq = get_or<uint64_t>(j, "seq", 0);
    if (!j.contains("time_s")) return Error{fmt::format("{}: time_s: missing", where)};
    s.time_s = j.at("time_s").get<double>();
    s.interval_s = get_or<double>(j, "interval_s", 0);
    s.host = get_or<std::string>(j, "host", "");
    s.cpu_model = get_or<std::string>(j, "cpu_model", "");
    s.cores_per_socket = get_or<int>(j, "cores_per_socket", 0);
    if (auto it = j.find("cpu"); it != j.end()) {
      s.has_cpu = true;
      s.cpu_utilization = it->at("utilization").get<double>();
      for (const json& c : it->value("cores", json::array())) {
        CoreUsage u;
        u.cpu = c.at("cpu").get<int>();
        u.package = get_or<int>(c, "package", 0);
        u.utilization = c.at("utilization").get<double>();
        u.busy_seconds = get_or<double>(c, "busy_s", 0);
        u.idle_seconds = get_or<double>(c, "idle_s", 0);
        s.cores.push_back(u);
      }
    }
    if (auto it = j.find("memory"); it != j.end()) {
      s.has_memory = true;
      s.memory_total_bytes = it->at("total_bytes").get<uint64_t>();
      s.memory_used_bytes = it->at("used_bytes").get<uint64_t>();
      s.memory_available_bytes = get_or<uint64_t>(*it, "available_bytes", 0);
    }
    for (const json& p : j.value("packages", json::array())) {
      PackageEnergy e;
      e.package = p.at("package").get<int>();
      e.zone = get_or<std::string>(p, "zone", "");
      e.energy_joules = p.at("energy_joules").get<double>();
      e.power_watts = get_or<double>(p, "power_watts", 0);
      if (p.contains("utilization")) {
        e.has_utilization = true;
        e.utilization = p.at("utilization").get<double>();
      }
      s.packages.push_back(std::move(e));
    }
    for (const json& g : j.value("gpus", json::array())) {
      GpuReading r;
      r.index = g.at("index").get<unsigned>();
      r.name = g.at("name").get<std::string>();
      r.uuid = get_or<std::string>(g, "uuid", "");
      get_opt(g, "power_watts", r.power_watts);
      get_opt(g, "energy_joules", r.energy_joules);
      get_opt(g, "utilization", r.utilization);
      get_opt(g, "memory_utilization", r.memory_utilization);
      get_opt(g, "memory_used_bytes", r.memory_used_bytes);
      get_opt(g, "memory_total_bytes", r.memory_total_bytes);
      get_opt(g, "temperature_celsius", r.temperature_celsius);
      s.gpus.push_back(std::move(r));
    }
    return s;
  } catch (const json::exception& e) {
    return Error{fmt::format("{}: {}", where, e.what())};
  }
}

Result<std::vector<NodeSample>> read_samples_jsonl(const std::string& text,
                                                   const std::string& source) {
  std::vector<NodeSample> out;
  std::size_t pos = 0, line = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line;
    const std::string_view l(text.data() + pos, end - pos);
    pos = end + 1;
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", source, line);
    json j = json::parse(l, nullptr, false);
    if (j.is_discarded()) return Error{fmt::format("{}: not valid JSON", where)};
    auto s = sample_from_json(j, where);
    if (!s.ok()) return Error{s.error()};
    out.push_back(std::move(s.value()));
  }
  return out;
}

}  // namespace greensched::monitor
