#include "greensched/monitor/sample_json.hpp"

#include <limits>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"

namespace greensched::monitor {
namespace {

using nlohmann::json;

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
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

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Sets `out` when `key` is present (a number); absent or null leaves it empty.
Status optional_number(const json& j, std::string_view key, std::string_view where,
                       std::optional<double>& out) {
  if (json_member(j, key) == nullptr) return Status::Ok();
  auto v = number_member(j, key, where);
  if (!v.ok()) return v.status();
  out = v.value();
  return Status::Ok();
}

Status optional_bytes(const json& j, std::string_view key, std::string_view where,
                      std::optional<uint64_t>& out) {
  if (json_member(j, key) == nullptr) return Status::Ok();
  auto v = integer_member(j, key, where, 0, kInt64Max);
  if (!v.ok()) return v.status();
  out = static_cast<uint64_t>(v.value());
  return Status::Ok();
}

// The elements of array member `key` (absent: none), each checked to be an object.
Result<std::vector<const json*>> objects(const json& j, std::string_view key,
                                         std::string_view where) {
  if (Status s = check_elements(j, key, JsonKind::kObject, where); !s.ok()) return s.error();
  std::vector<const json*> out;
  if (const json* a = json_member(j, key)) {
    for (const json& e : *a) out.push_back(&e);
  }
  return out;
}

Status read_cpu(const json& cpu, const std::string& where, NodeSample& s) {
  s.has_cpu = true;
  auto u = number_member(cpu, "utilization", where);
  if (!u.ok()) return u.status();
  s.cpu_utilization = u.value();
  auto cores = objects(cpu, "cores", where);
  if (!cores.ok()) return cores.status();
  for (std::size_t i = 0; i < cores.value().size(); ++i) {
    const json& c = *cores.value()[i];
    const std::string at = fmt::format("{}.cores[{}]", where, i);
    auto id = integer_member(c, "cpu", at, 0, kIntMax);
    auto package = integer_member(c, "package", at, 0, kIntMax, 0);
    auto utilization = number_member(c, "utilization", at);
    auto busy = number_member(c, "busy_s", at, 0.0);
    auto idle = number_member(c, "idle_s", at, 0.0);
    for (const Status& st :
         {id.status(), package.status(), utilization.status(), busy.status(), idle.status()}) {
      if (!st.ok()) return st;
    }
    s.cores.push_back(CoreUsage{static_cast<int>(id.value()), static_cast<int>(package.value()),
                                utilization.value(), busy.value(), idle.value()});
  }
  return Status::Ok();
}

Status read_memory(const json& m, const std::string& where, NodeSample& s) {
  s.has_memory = true;
  auto total = integer_member(m, "total_bytes", where, 0, kInt64Max);
  auto used = integer_member(m, "used_bytes", where, 0, kInt64Max);
  auto available = integer_member(m, "available_bytes", where, 0, kInt64Max, 0);
  for (const Status& st : {total.status(), used.status(), available.status()}) {
    if (!st.ok()) return st;
  }
  s.memory_total_bytes = static_cast<uint64_t>(total.value());
  s.memory_used_bytes = static_cast<uint64_t>(used.value());
  s.memory_available_bytes = static_cast<uint64_t>(available.value());
  return Status::Ok();
}

Result<PackageEnergy> read_package(const json& p, const std::string& where) {
  PackageEnergy e;
  auto package = integer_member(p, "package", where, 0, kIntMax);
  auto zone = string_member(p, "zone", where, std::string());
  auto energy = number_member(p, "energy_joules", where);
  auto power = number_member(p, "power_watts", where, 0.0);
  for (const Status& st : {package.status(), zone.status(), energy.status(), power.status()}) {
    if (!st.ok()) return st.error();
  }
  e.package = static_cast<int>(package.value());
  e.zone = zone.value();
  e.energy_joules = energy.value();
  e.power_watts = power.value();
  if (json_member(p, "utilization") != nullptr) {
    auto u = number_member(p, "utilization", where);
    if (!u.ok()) return u.status().error();
    e.has_utilization = true;
    e.utilization = u.value();
  }
  return e;
}

Result<GpuReading> read_gpu(const json& g, const std::string& where) {
  GpuReading r;
  auto index = integer_member(g, "index", where, 0, std::numeric_limits<unsigned>::max());
  auto name = string_member(g, "name", where);
  auto uuid = string_member(g, "uuid", where, std::string());
  for (const Status& st : {index.status(), name.status(), uuid.status()}) {
    if (!st.ok()) return st.error();
  }
  r.index = static_cast<unsigned>(index.value());
  r.name = name.value();
  r.uuid = uuid.value();
  for (const Status& st :
       {optional_number(g, "power_watts", where, r.power_watts),
        optional_number(g, "energy_joules", where, r.energy_joules),
        optional_number(g, "utilization", where, r.utilization),
        optional_number(g, "memory_utilization", where, r.memory_utilization),
        optional_bytes(g, "memory_used_bytes", where, r.memory_used_bytes),
        optional_bytes(g, "memory_total_bytes", where, r.memory_total_bytes),
        optional_number(g, "temperature_celsius", where, r.temperature_celsius)}) {
    if (!st.ok()) return st.error();
  }
  return r;
}

}  // namespace

Result<NodeSample> sample_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) return Error{fmt::format("{}: expected a JSON object", where)};
  NodeSample s;
  auto seq = integer_member(j, "seq", where, 0, kInt64Max, 0);
  auto time = number_member(j, "time_s", where);
  auto interval = number_member(j, "interval_s", where, 0.0);
  auto host = string_member(j, "host", where, std::string());
  auto cpu_model = string_member(j, "cpu_model", where, std::string());
  auto cores_per_socket = integer_member(j, "cores_per_socket", where, 0, kIntMax, 0);
  for (const Status& st : {seq.status(), time.status(), interval.status(), host.status(),
                           cpu_model.status(), cores_per_socket.status()}) {
    if (!st.ok()) return st.error();
  }
  s.seq = static_cast<uint64_t>(seq.value());
  s.time_s = time.value();
  s.interval_s = interval.value();
  s.host = host.value();
  s.cpu_model = cpu_model.value();
  s.cores_per_socket = static_cast<int>(cores_per_socket.value());
  for (const char* key : {"cpu", "memory"}) {
    if (Status st = check_member(j, key, JsonKind::kObject, where); !st.ok()) return st.error();
  }
  if (const json* cpu = json_member(j, "cpu")) {
    if (Status st = read_cpu(*cpu, where + ".cpu", s); !st.ok()) return st.error();
  }
  if (const json* memory = json_member(j, "memory")) {
    if (Status st = read_memory(*memory, where + ".memory", s); !st.ok()) return st.error();
  }
  auto packages = objects(j, "packages", where);
  if (!packages.ok()) return packages.status().error();
  for (std::size_t i = 0; i < packages.value().size(); ++i) {
    auto e = read_package(*packages.value()[i], fmt::format("{}.packages[{}]", where, i));
    if (!e.ok()) return e.status().error();
    s.packages.push_back(std::move(e.value()));
  }
  auto gpus = objects(j, "gpus", where);
  if (!gpus.ok()) return gpus.status().error();
  for (std::size_t i = 0; i < gpus.value().size(); ++i) {
    auto r = read_gpu(*gpus.value()[i], fmt::format("{}.gpus[{}]", where, i));
    if (!r.ok()) return r.status().error();
    s.gpus.push_back(std::move(r.value()));
  }
  return s;
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
    json j = parse_json_or_discarded(l);
    if (j.is_discarded()) return Error{fmt::format("{}: not valid JSON", where)};
    auto s = sample_from_json(j, where);
    if (!s.ok()) return Error{s.error()};
    out.push_back(std::move(s.value()));
  }
  return out;
}

}  // namespace greensched::monitor
