#include "greensched/multi/fleet.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/json_fields.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/forecast/holidays.hpp"
#include "greensched/multi/series_readers.hpp"
#include "greensched/multi/synthetic_carbon.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/openb_reader.hpp"

namespace greensched::multi {
namespace {

using nlohmann::json;

// A site holds at most this many copies of its node list (about 121,000 openb nodes).
constexpr double kMaxSiteScale = 100;

Result<double> number(const json& obj, const char* key, const std::string& where, double fallback,
                      double min_value) {
  auto member = number_member(obj, key, where, fallback);
  if (!member.ok()) return member;
  const double v = member.value();
  if (!(v >= min_value) || !std::isfinite(v)) {
    return Error{fmt::format("{}.{}: must be a number >= {}", where, key, min_value)};
  }
  return v;
}

Result<TimeSeries> read_signal(const json& j, const std::string& where,
                               const std::string& data_dir) {
  if (!j.is_object()) return Error{fmt::format("{}: expected an object", where)};
  if (!j.contains("path") || !j["path"].is_string()) {
    return Error{fmt::format("{}.path: missing or not a string", where)};
  }
  auto format = string_member(j, "format", where, "plain");
  if (!format.ok()) return format.status().error();
  auto column = string_member(j, "column", where, "");
  if (!column.ok()) return column.status().error();
  auto series = read_series(resolve_data_path(j["path"].get<std::string>(), data_dir),
                            format.value(), column.value());
  if (!series.ok()) return Error{fmt::format("{}: {}", where, series.error())};
  return series;
}

}  // namespace

std::vector<NodeSpec> scale_nodes(const std::vector<NodeSpec>& nodes, double scale,
                                  const std::string& prefix) {
  using Type = std::tuple<GpuModelId, int, int64_t, int64_t>;
  std::map<Type, int> count;
  for (const NodeSpec& n : nodes) ++count[{n.model, n.gpu_count, n.cpu_milli, n.memory_mib}];
  std::map<Type, int> keep;
  for (const auto& [type, c] : count) keep[type] = static_cast<int>(std::lround(c * scale));
  std::vector<NodeSpec> out;
  const int copies = scale > 1.0 ? static_cast<int>(std::ceil(scale)) : 1;
  for (int copy = 0; copy < copies; ++copy) {
    for (const NodeSpec& n : nodes) {
      int& left = keep[{n.model, n.gpu_count, n.cpu_milli, n.memory_mib}];
      if (left <= 0) continue;
      --left;
      NodeSpec s = n;
      s.name = copy == 0 ? fmt::format("{}/{}", prefix, n.name)
                         : fmt::format("{}/{}#{}", prefix, n.name, copy);
      out.push_back(std::move(s));
    }
  }
  return out;
}

Result<Fleet> parse_fleet(std::string_view json_text, const std::string& source,
                          const std::string& data_dir) {
  auto parsed = parse_json_text(json_text, source);
  if (!parsed.ok()) return parsed.status().error();
  const json& root = parsed.value();
  if (!root.is_object()) return Error{fmt::format("{}: expected a JSON object", source)};
  Fleet fleet;
  fleet.source = source;
  if (root.contains("start")) {
    if (!root["start"].is_string())
      return Error{fmt::format("{}: start: expected a string", source)};
    auto t = parse_utc_time(root["start"].get<std::string>());
    if (!t.ok()) return Error{fmt::format("{}: start: {}", source, t.error())};
    fleet.start_s = t.value();
  }
  if (!root.contains("sites") || !root["sites"].is_array() || root["sites"].empty()) {
    return Error{fmt::format("{}: sites: missing, not an array, or empty", source)};
  }
  std::map<std::string, std::vector<NodeSpec>> node_lists;  // by resolved path
  for (std::size_t i = 0; i < root["sites"].size(); ++i) {
    const json& j = root["sites"][i];
    const std::string where = fmt::format("{}: sites[{}]", source, i);
    if (!j.is_object()) return Error{fmt::format("{}: expected an object", where)};
    for (const auto& [key, value] : j.items()) {
      static const char* kKnown[] = {"name",    "nodes",  "scale", "carbon", "price",   "pue",
                                     "network", "policy", "queue", "energy", "holidays"};
      bool known = false;
      for (const char* k : kKnown) known = known || key == k;
      if (!known) return Error{fmt::format("{}.{}: unknown key", where, key)};
    }
    SiteSpec site;
    if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty()) {
      return Error{fmt::format("{}.name: missing or not a string", where)};
    }
    site.name = j["name"].get<std::string>();
    if (j.contains("holidays")) {
      const auto& calendar = forecast::builtin_holidays();
      if (!j["holidays"].is_string() ||
          !calendar.zones.contains(j["holidays"].get<std::string>())) {
        std::string names;
        for (const auto& [zone, days] : calendar.zones) names += (names.empty() ? "" : ", ") + zone;
        return Error{
            fmt::format("{}.holidays: {} is not a zone of the built-in holiday calendar ({})",
                        where, j["holidays"].dump(), names)};
      }
      site.holidays = j["holidays"].get<std::string>();
    }
    for (const SiteSpec& other : fleet.sites) {
      if (other.name == site.name)
        return Error{fmt::format("{}.name: '{}' used twice", where, site.name)};
    }
    auto nodes_member = string_member(j, "nodes", where, "builtin");
    if (!nodes_member.ok()) return nodes_member.status().error();
    const std::string& nodes = nodes_member.value();
    auto scale = number(j, "scale", where, 1.0, 0.0);
    if (!scale.ok()) return Error{scale.error()};
    if (scale.value() > kMaxSiteScale) {
      return Error{fmt::format("{}.scale: at most {} (copies of the node list), not {}", where,
                               kMaxSiteScale, scale.value())};
    }
    std::vector<NodeSpec> base;
    if (nodes == "builtin") {
      trace::Workload w = trace::builtin_openb_workload();
      for (NodeSpec n : w.nodes) {
        n.model =
            n.model == kNoGpuModel ? kNoGpuModel : *fleet.models.intern(w.models.name(n.model));
        base.push_back(std::move(n));
      }
    } else {
      const std::string path = resolve_data_path(nodes, data_dir);
      auto read = trace::read_openb_nodes(path, fleet.models);
      if (!read.ok()) return Error{fmt::format("{}.nodes: {}", where, read.error())};
      base = std::move(read.value());
    }
    site.nodes = scale_nodes(base, scale.value(), site.name);
    if (site.nodes.empty()) return Error{fmt::format("{}: no nodes left after scaling", where)};
    if (!j.contains("carbon")) return Error{fmt::format("{}.carbon: missing", where)};
    auto carbon = read_signal(j["carbon"], where + ".carbon", data_dir);
    if (!carbon.ok()) return Error{carbon.error()};
    site.carbon = std::move(carbon.value());
    site.carbon_source = j["carbon"].value("path", "");
    if (j.contains("price")) {
      auto price = read_signal(j["price"], where + ".price", data_dir);
      if (!price.ok()) return Error{price.error()};
      site.price = std::move(price.value());
    }
    if (j.contains("energy")) {
      auto energy = parse_site_energy(j["energy"], where + ".energy", data_dir, site.price);
      if (!energy.ok()) return Error{energy.error()};
      site.energy = std::move(energy.value());
    }
    auto pue = number(j, "pue", where, 1.0, 1.0);
    if (!pue.ok()) return Error{pue.error()};
    site.pue = pue.value();
    if (j.contains("network")) {
      const json& n = j["network"];
      const std::string nw = where + ".network";
      if (!n.is_object()) return Error{fmt::format("{}: expected an object", nw)};
      auto bw = number(n, "bandwidth_gbps", nw, site.network.bandwidth_gbps, 1e-6);
      auto e = number(n, "energy_kwh_per_gb", nw, site.network.energy_kwh_per_gb, 0.0);
      auto l = number(n, "latency_s", nw, site.network.latency_s, 0.0);
      for (const auto* r : {&bw, &e, &l}) {
        if (!r->ok()) return Error{r->error()};
      }
      site.network = NetworkCost{bw.value(), e.value(), l.value()};
    }
    if (j.contains("policy")) {
      if (!j["policy"].is_string())
        return Error{fmt::format("{}.policy: expected a string", where)};
      site.policy = j["policy"].get<std::string>();
    }
    if (j.contains("queue")) {
      auto q = j["queue"].is_string() ? sim::parse_queue_discipline(j["queue"].get<std::string>())
                                      : Result<sim::QueueDiscipline>(Error{"expected a string"});
      if (!q.ok()) return Error{fmt::format("{}.queue: {}", where, q.error())};
      site.queue = q.value();
    }
    fleet.sites.push_back(std::move(site));
  }
  return fleet;
}

Result<Fleet> load_fleet(const std::string& path, const std::string& data_dir) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  return parse_fleet(text.value(), path, data_dir);
}

Fleet builtin_fleet() {
  Fleet fleet;
  fleet.source = "built-in fleet (synthetic carbon curves)";
  trace::Workload w = trace::builtin_openb_workload();
  std::vector<NodeSpec> base;
  for (NodeSpec n : w.nodes) {
    n.model = *fleet.models.intern(w.models.name(n.model));
    base.push_back(std::move(n));
  }
  struct Region {
    const char* name;
    SyntheticCarbon shape;
    NetworkCost network;
  };
  // Shapes after real 2023 grids: wind-driven (as DE-LU), low-carbon with wind (as GB), solar
  // (as California), flat and high (as Singapore).
  SyntheticCarbon wind{310, 0.10, 0.45, 1, 11};
  SyntheticCarbon low{130, 0.08, 0.55, 0, 12};
  SyntheticCarbon solar{195, 0.45, 0.15, -8, 13};
  SyntheticCarbon flat{370, 0.02, 0.03, 8, 14};
  const Region regions[] = {
      {"north-wind", wind, NetworkCost{10, 0.006, 1}},
      {"island-low", low, NetworkCost{10, 0.006, 1}},
      {"west-solar", solar, NetworkCost{10, 0.006, 1}},
      {"east-flat", flat, NetworkCost{10, 0.006, 1}},
  };
  for (const Region& r : regions) {
    SiteSpec site;
    site.name = r.name;
    site.nodes = scale_nodes(base, 0.25, site.name);
    site.carbon = synthetic_carbon(r.shape, fleet.start_s, 365);
    site.carbon_source = "synthetic";
    site.pue = 1.2;
    site.network = r.network;
    fleet.sites.push_back(std::move(site));
  }
  return fleet;
}

}  // namespace greensched::multi
