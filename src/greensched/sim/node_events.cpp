#include <array>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "greensched/core/text_file.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::sim {

Result<std::vector<NodeEvent>> parse_node_events(std::string_view text, const std::string& source,
                                                 const std::vector<NodeSpec>& nodes) {
  trace::CsvReader csv(text, source);
  if (Status s = csv.read_header(); !s.ok()) return s.error();
  std::array<std::size_t, 3> col{};
  const std::array<const char*, 3> names{"time", "node", "event"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto c = csv.column(names[i]);
    if (!c)
      return csv.error(fmt::format("missing column '{}' (expected time,node,event)", names[i]));
    col[i] = *c;
  }
  std::unordered_set<std::string_view> by_name;
  for (const NodeSpec& n : nodes) by_name.insert(n.name);
  std::vector<NodeEvent> events;
  while (csv.next()) {
    const auto& f = csv.fields();
    if (f.size() != csv.header().size()) {
      return csv.error(fmt::format("expected {} fields as in the header, got {}",
                                   csv.header().size(), f.size()));
    }
    NodeEvent e;
    const auto time = trace::parse_int(f[col[0]]);
    if (!time) return csv.error(fmt::format("time: '{}' is not an integer", f[col[0]]));
    if (*time < 0) return csv.error(fmt::format("time: {} is negative", *time));
    e.time = *time;
    e.node = std::string(f[col[1]]);
    if (!by_name.contains(e.node)) return csv.error(fmt::format("node: unknown node '{}'", e.node));
    const std::string_view kind = f[col[2]];
    if (kind == "down") {
      e.up = false;
    } else if (kind == "up") {
      e.up = true;
    } else {
      return csv.error(fmt::format("event: unknown event '{}' (expected down or up)", kind));
    }
    events.push_back(std::move(e));
  }
  return events;
}

Result<std::vector<NodeEvent>> read_node_events(const std::string& path,
                                                const std::vector<NodeSpec>& nodes) {
  auto text = read_file(path);
  if (!text.ok()) return text.status().error();
  return parse_node_events(text.value(), path, nodes);
}

}  // namespace greensched::sim
