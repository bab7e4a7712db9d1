// A reader per input format (docs/FORMATS.md, "Inputs"), each the library's own: the same
// checks as the command line, the same "file:line: what" errors (raised as greensched.Error),
// results as tables of numpy arrays or plain dicts.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/energy/weather.hpp"
#include "greensched/explain/explanation.hpp"
#include "greensched/learn/linear_model.hpp"
#include "greensched/monitor/sample_json.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/series_readers.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/queue_discipline.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/openb_reader.hpp"

namespace greensched::python {
namespace {

std::string model_name(const GpuModelRegistry& models, GpuModelId id) {
  return id == kNoGpuModel ? std::string() : models.name(id);
}

py::dict node_table(const std::vector<NodeSpec>& nodes, const GpuModelRegistry& models) {
  TableBuilder t;
  t.add("name", nodes, &NodeSpec::name);
  t.add("cpu_milli", nodes, &NodeSpec::cpu_milli);
  t.add("memory_mib", nodes, &NodeSpec::memory_mib);
  t.add("gpu", nodes, &NodeSpec::gpu_count);
  t.add("model", nodes, [&](const NodeSpec& n) { return model_name(models, n.model); });
  return t.release();
}

py::dict pod_table(const std::vector<PodSpec>& pods, const GpuModelRegistry& models) {
  TableBuilder t;
  t.add("name", pods, &PodSpec::name);
  t.add("cpu_milli", pods, &PodSpec::cpu_milli);
  t.add("memory_mib", pods, &PodSpec::memory_mib);
  t.add("num_gpu", pods, &PodSpec::num_gpu);
  t.add("gpu_milli", pods, &PodSpec::gpu_milli);
  t.add("gpu_spec", pods, [&](const PodSpec& p) {
    return p.gpu_spec == 0 ? std::string() : models.describe(p.gpu_spec);
  });
  t.add("qos", pods, [](const PodSpec& p) {
    return p.qos == Qos::kUnknown ? "" : qos_name(p.qos);  // as the file wrote it
  });
  t.add("creation_time", pods, &PodSpec::creation_time);
  t.add("deletion_time", pods, &PodSpec::deletion_time);
  t.add("scheduled_time", pods, &PodSpec::scheduled_time);
  t.add("shape", pods, &PodSpec::shape);
  return t.release();
}

py::dict workload_dict(const trace::Workload& w) {
  py::dict d;
  d["nodes"] = node_table(w.nodes, w.models);
  d["pods"] = pod_table(w.pods, w.models);
  d["nodes_source"] = w.nodes_source;
  d["pods_source"] = w.pods_source;
  return d;
}

py::dict series_dict(const multi::TimeSeries& s) {
  const std::size_t n = s.values().size();
  std::vector<int64_t> time(n);
  for (std::size_t i = 0; i < n; ++i) time[i] = s.start_s() + static_cast<int64_t>(i) * s.step_s();
  TableBuilder t;  // the columns, then the series' start and step
  t.add("time_s", time);
  t.add("value", s.values());
  py::dict d = t.release();
  d["start_s"] = s.start_s();
  d["step_s"] = s.step_s();
  return d;
}

py::dict read_workload(const std::string& nodes, const std::string& pods) {
  if (nodes.empty() && pods.empty()) return workload_dict(trace::builtin_openb_workload());
  return workload_dict(unwrap(trace::load_openb_workload(nodes, pods)));
}

py::dict read_nodes(const std::string& path) {
  GpuModelRegistry models;
  const auto nodes = unwrap(trace::read_openb_nodes(path, models));
  return node_table(nodes, models);
}

py::dict read_pods(const std::string& path, const std::string& nodes_path) {
  GpuModelRegistry models;
  if (!nodes_path.empty()) (void)unwrap(trace::read_openb_nodes(nodes_path, models));
  return pod_table(unwrap(trace::read_openb_pods(path, models)), models);
}

py::dict read_node_events(const std::string& path, const std::string& nodes_path) {
  GpuModelRegistry models;
  const auto nodes = unwrap(trace::read_openb_nodes(nodes_path, models));
  const auto events = unwrap(sim::read_node_events(path, nodes));
  TableBuilder t;
  t.add("time", events, &sim::NodeEvent::time);
  t.add("node", events, &sim::NodeEvent::node);
  t.add("event", events, [](const sim::NodeEvent& e) { return e.up ? "up" : "down"; });
  return t.release();
}

py::dict read_series(const std::string& path, const std::string& format, const std::string& column,
                     int64_t step_s) {
  return series_dict(unwrap(multi::read_series(path, format, column, step_s)));
}

py::dict fleet_dict(const multi::Fleet& f) {
  py::list sites;
  for (const multi::SiteSpec& s : f.sites) {
    py::dict site;
    site["name"] = s.name;
    site["nodes"] = node_table(s.nodes, f.models);
    site["carbon"] = series_dict(s.carbon);
    site["carbon_source"] = s.carbon_source;
    site["price"] = s.price ? py::object(series_dict(*s.price)) : py::none();
    site["pue"] = s.pue;
    site["policy"] = s.policy;
    site["queue"] = std::string(sim::queue_name(s.queue));
    site["has_energy"] = s.energy.has_value();
    site["network"] = py::dict(py::arg("bandwidth_gbps") = s.network.bandwidth_gbps,
                               py::arg("energy_kwh_per_gb") = s.network.energy_kwh_per_gb,
                               py::arg("latency_s") = s.network.latency_s);
    sites.append(site);
  }
  py::dict d;
  d["sites"] = sites;
  d["start_s"] = f.start_s;
  d["source"] = f.source;
  return d;
}

py::dict read_weather(const std::string& path) {
  const energy::Weather w = unwrap(energy::read_weather(path));
  std::vector<int64_t> time(w.hours());
  for (std::size_t i = 0; i < w.hours(); ++i) time[i] = w.time_of(i);
  py::dict d;
  d["latitude_deg"] = w.latitude_deg;
  d["longitude_deg"] = w.longitude_deg;
  d["elevation_m"] = w.elevation_m;
  d["utc_offset_seconds"] = w.utc_offset_seconds;
  TableBuilder t;
  t.add("time_s", time);
  t.add("temperature_c", w.temperature_c);
  t.add("relative_humidity_pct", w.relative_humidity_pct);
  t.add("cloud_cover_pct", w.cloud_cover_pct);
  t.add("wind_speed_10m_ms", w.wind_speed_10m_ms);
  d["hourly"] = t.release();
  return d;
}

py::dict power_model_dict(const power::PowerModel& m) {
  const std::vector<std::string> names = m.gpu_names();
  TableBuilder gpus;
  gpus.add("name", names);
  gpus.add("idle_watts", names, [&](const std::string& g) {
    const auto p = m.gpu(g);
    return p ? p->idle_watts : 0.0;
  });
  gpus.add("max_watts", names, [&](const std::string& g) {
    const auto p = m.gpu(g);
    return p ? p->max_watts : 0.0;
  });
  py::dict d;
  d["source"] = m.source();
  d["pue"] = m.pue();
  d["gpu_rule"] = std::string(power::gpu_power_rule_name(m.gpu_rule()));
  d["gpus"] = gpus.release();
  return d;
}

py::list read_monitor_samples(const std::string& path) {
  const std::string text = unwrap(read_file(path));
  py::list out;
  for (const monitor::NodeSample& s : unwrap(monitor::read_samples_jsonl(text, path))) {
    out.append(to_python(monitor::sample_to_json(s)));
  }
  return out;
}

py::list read_records(const std::string& path) {
  const std::string text = unwrap(read_file(path));
  py::list out;
  std::size_t line_no = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    const std::string_view line(text.data() + at, end - at);
    at = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    out.append(to_python(
        unwrap(explain::parse_decision_record(line, fmt::format("{}:{}", path, line_no)))));
  }
  return out;
}

}  // namespace

void bind_readers(py::module_& m) {
  m.def("read_workload", &read_workload, py::arg("nodes"), py::arg("pods"));
  m.def("read_nodes", &read_nodes, py::arg("path"));
  m.def("read_pods", &read_pods, py::arg("path"), py::arg("nodes"));
  m.def("read_node_events", &read_node_events, py::arg("path"), py::arg("nodes"));
  m.def("read_series", &read_series, py::arg("path"), py::arg("format"), py::arg("column"),
        py::arg("step_s"));
  m.def(
      "read_fleet",
      [](const std::string& path, const std::string& data_dir) {
        return fleet_dict(unwrap(multi::load_fleet(path, data_dir)));
      },
      py::arg("path"), py::arg("data_dir"));
  m.def("builtin_fleet", [] { return fleet_dict(multi::builtin_fleet()); });
  m.def("read_weather", &read_weather, py::arg("path"));
  m.def(
      "read_power_model",
      [](const std::string& path) {
        return power_model_dict(path.empty() ? power::PowerModel::builtin()
                                             : unwrap(power::PowerModel::load(path)));
      },
      py::arg("path"));
  m.def(
      "read_learned_model",
      [](const std::string& path) {
        return to_python(learn::to_json(unwrap(learn::load_linear_model(path))));
      },
      py::arg("path"));
  m.def("read_monitor_samples", &read_monitor_samples, py::arg("path"));
  m.def("read_records", &read_records, py::arg("path"));
}

}  // namespace greensched::python
