// simulate: occupancy.csv, snapshots of every GPU's used share; one drawn as a map per policy.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "greensched/report/section.hpp"

namespace greensched::report {
namespace {

using svg::escape;
using svg::format_number;

struct Snapshot {
  std::string policy, seed;
  double arrived;
};

// Snapshots in order of first appearance, and the snapshot of each row.
struct Snapshots {
  std::vector<Snapshot> snaps;
  std::vector<std::size_t> of_row;
};

Snapshots find_snapshots(const Table& occ) {
  const auto& policy = occ.text("policy");
  const auto& seed = occ.text("seed");
  const auto& arrived = occ.num("arrived_gpu_pct");
  Keys keys;
  Snapshots s;
  s.of_row.resize(occ.rows);
  for (std::size_t r = 0; r < occ.rows; ++r) {
    const std::size_t k =
        keys.add(fmt::format("{}\x1f{}\x1f{}", policy[r], seed[r], format_number(arrived[r], 6)));
    if (k == s.snaps.size()) s.snaps.push_back(Snapshot{policy[r], seed[r], arrived[r]});
    s.of_row[r] = k;
  }
  return s;
}

// One snapshot per policy (its first, the first seed's), in file order: every policy run is
// pictured, none hidden behind another's.
std::vector<std::size_t> choose_snapshots(const std::vector<Snapshot>& snaps) {
  std::vector<std::size_t> chosen;
  std::set<std::string> chosen_policies;
  for (std::size_t k = 0; k < snaps.size(); ++k) {
    if (chosen_policies.insert(snaps[k].policy).second) chosen.push_back(k);
  }
  return chosen;
}

// The nodes of snapshot k with their GPUs' used shares, grouped by GPU model.
std::vector<svg::MapNode> map_nodes_of(const Table& occ, const Snapshots& s, std::size_t k) {
  const auto& node = occ.text("node");
  const auto& model = occ.text("model");
  const auto& gpu = occ.num("gpu");
  const auto& used = occ.num("used_milli");
  Keys nodes;
  std::vector<svg::MapNode> map_nodes;
  for (std::size_t r = 0; r < occ.rows; ++r) {
    if (s.of_row[r] != k) continue;
    const std::size_t n = nodes.add(node[r]);
    if (n == map_nodes.size()) map_nodes.push_back(svg::MapNode{model[r], {}});
    auto& cells = map_nodes[n].used_milli;
    const auto g = static_cast<std::size_t>(gpu[r]);
    if (cells.size() <= g) cells.resize(g + 1, 0);
    cells[g] = static_cast<int>(std::lround(used[r]));
  }
  std::stable_sort(map_nodes.begin(), map_nodes.end(),
                   [](const svg::MapNode& a, const svg::MapNode& b) { return a.group < b.group; });
  return map_nodes;
}

struct GpuCounts {
  std::size_t gpus = 0, full = 0, partial = 0, free = 0;
};

GpuCounts count_gpus(const std::vector<svg::MapNode>& map_nodes) {
  GpuCounts c;
  for (const svg::MapNode& n : map_nodes) {
    for (int u : n.used_milli) {
      ++c.gpus;
      if (u >= 1000) {
        ++c.full;
      } else if (u > 0) {
        ++c.partial;
      } else {
        ++c.free;
      }
    }
  }
  return c;
}

// The trace's own codes among the models drawn (G1, G2, G3), said on the page: Alibaba did not
// disclose which GPUs they are, and the built-in power model gives them stand-ins' figures.
std::string undisclosed_models(const std::vector<svg::MapNode>& nodes) {
  std::set<std::string> codes;
  for (const svg::MapNode& n : nodes) {
    if (n.group.size() == 2 && n.group[0] == 'G' &&
        std::isdigit(static_cast<unsigned char>(n.group[1])) != 0) {
      codes.insert(n.group);
    }
  }
  if (codes.empty()) return "";
  std::string list;
  for (const std::string& c : codes) list += (list.empty() ? "" : ", ") + c;
  return fmt::format(
      " {} {} the openb trace's {} for GPU models Alibaba did not disclose (the built-in power "
      "model gives G2 an A10's figures and G3 an A100's).",
      list, codes.size() == 1 ? "is" : "are", codes.size() == 1 ? "code" : "codes");
}

void add_occupancy_map(Page& page, const Snapshot& s, std::vector<svg::MapNode> map_nodes,
                       std::size_t number, const std::string& more) {
  const GpuCounts n = count_gpus(map_nodes);
  svg::OccupancyMap map;
  const std::string id = fmt::format("chart-occupancy-{}", number);
  map.id = id + "-svg";
  map.title = fmt::format(
      "GPU occupancy: {}, seed {}, when arrived GPU requests reached {} % of "
      "capacity",
      s.policy, s.seed, format_number(s.arrived, s.arrived == std::floor(s.arrived) ? 0 : 1));
  map.nodes = std::move(map_nodes);
  page.chart(
      id, svg::render_occupancy_map(map),
      fmt::format(
          "A picture of every GPU in the cluster at one moment of the run of policy "
          "<b>{}</b> (seed {}): each thin row is one node ({} nodes), each small cell in a row "
          "one of the node's GPUs ({} GPUs). A cell's shade is the share of that GPU allocated "
          "to pods, from white (free) to dark blue (fully used). Nodes are grouped by GPU "
          "model, named above each group and marked by the coloured strip on the left; read "
          "each column top to bottom, then the next column. Here {} GPUs are fully used, {} "
          "partly used and {} free. Partly used GPUs next to free ones are the fragments: "
          "capacity that is free but may be too small for the next pod.{}{}",
          escape(s.policy), escape(s.seed), map.nodes.size(), n.gpus, n.full, n.partial, n.free,
          undisclosed_models(map.nodes), more));
}

}  // namespace

std::vector<Column> occupancy_columns() {
  return {text_col("policy"),
          text_col("seed"),
          num_col("arrived_gpu_pct"),
          text_col("node"),
          text_col("model"),
          bounded_col("gpu", 0, 1023, true),
          bounded_col("used_milli", 0, 1000, false)};
}

void add_occupancy_section(Page& page, const Table& occupancy) {
  page.section("sec-occupancy", "GPU occupancy maps",
               "Snapshots of every GPU of the cluster at one moment of a run, from "
               "occupancy.csv.");
  const Snapshots s = find_snapshots(occupancy);
  const std::vector<std::size_t> chosen = choose_snapshots(s.snaps);
  const std::string more =
      s.snaps.size() > chosen.size()
          ? fmt::format(" (One snapshot per policy is shown; occupancy.csv holds {}.)",
                        s.snaps.size())
          : std::string();
  for (std::size_t c = 0; c < chosen.size(); ++c) {
    add_occupancy_map(page, s.snaps[chosen[c]], map_nodes_of(occupancy, s, chosen[c]), c + 1, more);
  }
}

}  // namespace greensched::report
