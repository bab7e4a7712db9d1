// libFuzzer target for the file readers: GREENSCHED_FUZZ_TARGET picks one (openb_nodes,
// openb_pods, fleet, power_model, learned_model, decision_record, node_events, series, prices,
// weather, holidays, kubectl, sacct) and the
// input is the file's text. Built with clang by tests/fuzz.cmake (script mode), not by the GCC
// build. Checks that no reader crashes or throws, and that whatever one accepts obeys the
// invariants its callers rely on.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "greensched/convert/convert_kubectl.hpp"
#include "greensched/convert/convert_sacct.hpp"
#include "greensched/core/resources.hpp"
#include "greensched/energy/price_series.hpp"
#include "greensched/energy/weather.hpp"
#include "greensched/explain/explanation.hpp"
#include "greensched/forecast/holidays.hpp"
#include "greensched/learn/linear_model.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/series_readers.hpp"
#include "greensched/multi/time_series.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/openb_reader.hpp"

namespace {

using namespace greensched;

void check(bool ok) {
  if (!ok) std::abort();
}

// An error must say what was wrong and where: it starts with the input's name.
template <typename R>
void check_error(const R& r) {
  if (!r.ok()) check(std::string_view(r.error()).starts_with("fuzz"));
}

void fuzz_nodes(std::string_view text) {
  GpuModelRegistry models;
  auto nodes = trace::parse_openb_nodes(text, "fuzz", models);
  check_error(nodes);
  if (!nodes.ok()) return;
  for (const NodeSpec& n : nodes.value()) {
    check(!n.name.empty() && n.cpu_milli >= 0 && n.memory_mib >= 0);
    check(n.gpu_count >= 0 && n.gpu_count <= kMaxGpusPerNode);
  }
}

void fuzz_pods(std::string_view text) {
  GpuModelRegistry models;
  for (const char* m : {"T4", "A10", "V100M16", "P100", "G2"}) check(models.intern(m).has_value());
  auto pods = trace::parse_openb_pods(text, "fuzz", models);
  check_error(pods);
  if (!pods.ok()) return;
  for (const PodSpec& p : pods.value()) {
    check(!p.name.empty() && p.cpu_milli >= 0 && p.memory_mib >= 0);
    check(p.num_gpu >= 0 && p.num_gpu <= kMaxGpusPerNode);
    check(p.gpu_milli >= 0 && p.gpu_milli <= kGpuMilli);
    check(p.num_gpu <= 1 || p.gpu_milli == kGpuMilli);
  }
}

void fuzz_fleet(std::string_view text) {
  // Relative series paths resolve under a directory that does not exist: the fleet reader's
  // own checks are what is fuzzed here, the series readers have a target of their own.
  auto fleet = multi::parse_fleet(text, "fuzz", "/nonexistent-fuzz-data");
  check_error(fleet);
  if (fleet.ok()) check(!fleet.value().sites.empty());
}

void fuzz_power_model(std::string_view text) {
  auto model = power::PowerModel::parse(text, "fuzz");
  check_error(model);
}

void fuzz_learned_model(std::string_view text) {
  auto model = learn::parse_linear_model(text, "fuzz");
  check_error(model);
  if (model.ok()) check(model.value().resolution > 0);
}

void fuzz_decision_record(std::string_view text) {
  auto record = explain::parse_decision_record(text, "fuzz:1");
  check_error(record);
  if (!record.ok()) return;
  check(!explain::explain_text(record.value()).empty());
  check(explain::explain_facts(record.value()).is_object());
}

void fuzz_node_events(std::string_view text) {
  std::vector<NodeSpec> nodes(2);
  nodes[0].name = "n0";
  nodes[1].name = "n1";
  auto events = sim::parse_node_events(text, "fuzz", nodes);
  check_error(events);
  if (!events.ok()) return;
  for (const sim::NodeEvent& e : events.value()) check(e.time >= 0 && !e.node.empty());
}

// The first byte picks the format; the rest is the file.
void fuzz_series(std::string_view text) {
  if (text.empty()) return;
  const char* formats[] = {"emaps", "lwa", "plain"};
  const std::string format = formats[static_cast<unsigned char>(text[0]) % 3];
  const std::string column = format == "emaps" && (text[0] & 4) ? "lca" : "";
  auto series = multi::parse_series_text(text.substr(1), "fuzz", format, column);
  check_error(series);
  if (!series.ok()) return;
  const multi::TimeSeries& s = series.value();
  check(s.step_s() > 0);
  for (double v : s.values()) check(std::isfinite(v) && v >= 0);
}

void fuzz_prices(std::string_view text) {
  auto prices = energy::parse_price_series(text, "fuzz");
  check_error(prices);
  if (!prices.ok()) return;
  for (double v : prices.value().usd_per_kwh.values) check(std::isfinite(v));
}

void fuzz_weather(std::string_view text) {
  auto weather = energy::parse_weather(text, "fuzz");
  check_error(weather);
  if (!weather.ok()) return;
  const energy::Weather& w = weather.value();
  check(w.temperature_c.size() == w.cloud_cover_pct.size());
  check(w.wind_speed_10m_ms.size() == w.temperature_c.size());
  for (double v : w.cloud_cover_pct) check(v >= 0 && v <= 100);
}

// An accepted holiday table: each zone's days sorted and unique, inside its years.
void fuzz_holidays(std::string_view text) {
  auto calendar = forecast::parse_holidays(text, "fuzz");
  check_error(calendar);
  if (!calendar.ok()) return;
  const forecast::HolidayCalendar& c = calendar.value();
  check(c.first_year <= c.last_year && !c.zones.empty());
  for (const auto& [zone, days] : c.zones) {
    check(!zone.empty() && !days.empty());
    for (std::size_t i = 1; i < days.size(); ++i) check(days[i - 1] < days[i]);
    forecast::Series s;
    check(forecast::attach_holidays(c, zone, s));
    check(s.holidays_from_day <= days.front() && days.back() < s.holidays_to_day);
  }
}

// A converted dump is an openb node and pod list that the openb readers accept.
void check_converted(const Result<convert::ConvertOutput>& out) {
  check_error(out);
  if (!out.ok()) return;
  GpuModelRegistry models;
  if (!out.value().nodes_csv.empty()) {
    check(trace::parse_openb_nodes(out.value().nodes_csv, "fuzz-nodes", models).ok());
  }
  if (!out.value().pods_csv.empty()) {
    check(trace::parse_openb_pods(out.value().pods_csv, "fuzz-pods", models).ok());
  }
}

// The input is a NodeList; the same text is also read as the PodList.
void fuzz_kubectl(std::string_view text) {
  const convert::SourceText source{"fuzz", std::string(text)};
  check_converted(convert::convert_kubectl(source, source));
}

// The input is sacct output; the same text is also read as scontrol's node list.
void fuzz_sacct(std::string_view text) {
  const convert::SourceText source{"fuzz", std::string(text)};
  check_converted(convert::convert_sacct(source, std::nullopt));
  check_converted(convert::convert_sacct(source, source));
}

using Target = void (*)(std::string_view);

Target pick_target() {
  const char* name = std::getenv("GREENSCHED_FUZZ_TARGET");
  const std::string_view n = name == nullptr ? "" : name;
  if (n == "openb_nodes") return fuzz_nodes;
  if (n == "openb_pods") return fuzz_pods;
  if (n == "fleet") return fuzz_fleet;
  if (n == "power_model") return fuzz_power_model;
  if (n == "learned_model") return fuzz_learned_model;
  if (n == "decision_record") return fuzz_decision_record;
  if (n == "node_events") return fuzz_node_events;
  if (n == "series") return fuzz_series;
  if (n == "prices") return fuzz_prices;
  if (n == "weather") return fuzz_weather;
  if (n == "holidays") return fuzz_holidays;
  if (n == "kubectl") return fuzz_kubectl;
  if (n == "sacct") return fuzz_sacct;
  std::abort();  // the test script always names a target
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Target target = pick_target();
  target(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
