// GPU occupancy maps: one row of cells per node, shaded by each GPU's used share, nodes in
// labelled groups flowed into as many columns as fit the width.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "greensched/report/svg_chart.hpp"
#include "greensched/report/svg_draw.hpp"

namespace greensched::report::svg {
namespace {

constexpr double kCellW = 7;    // 6 px of colour + 1 px line
constexpr double kRowH = 4;     // 3 px of colour + 1 px line
constexpr double kLabelH = 14;  // group label above a group's rows
constexpr double kGroupGap = 6;
constexpr double kStrip = 3;  // group colour strip left of the rows
constexpr double kGutter = 16;
constexpr double kMargin = 12;

using Groups = std::vector<std::pair<std::string, std::size_t>>;  // in order, with node counts

// Legend: the shades, then the groups with their node counts. Returns the svg and the y where
// the grid starts.
std::pair<std::string, double> map_legend(const Groups& groups, double width,
                                          ColorMap& group_colors) {
  std::map<std::string, std::size_t> group_nodes;
  for (const auto& [g, count] : groups) group_nodes[g] += count;
  std::string legend;
  double lx = kMargin;
  double ly = 44;
  legend +=
      fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-weight=\"600\">GPU in use:</text>",
                  coord(lx), coord(ly));
  lx += text_width("GPU in use:", kTextPx) * 1.2 + 14;
  static const char* const kShadeLabels[] = {"free",    "1–25 %",  "26–50 %",
                                             "51–75 %", "76–99 %", "full"};
  for (int level = 0; level < 6; ++level) {
    legend += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\" stroke=\"#999\" "
        "stroke-width=\"0.8\"/><text x=\"{}\" y=\"{}\" dy=\"0.35em\">{}</text>",
        coord(lx), coord(ly - 5), occupancy_shades()[static_cast<std::size_t>(level)],
        coord(lx + 19), coord(ly), kShadeLabels[level]);
    lx += 19 + text_width(kShadeLabels[level], kTextPx) + 16;
  }
  ly += kLegendRowPx;
  lx = kMargin;
  const std::string groups_title = "Node groups (GPU model, nodes):";
  legend += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-weight=\"600\">{}</text>",
                        coord(lx), coord(ly), escape(groups_title));
  lx += text_width(groups_title, kTextPx) * 1.2 + 14;
  std::vector<std::string> seen;
  for (const auto& [g, count] : groups) {
    if (std::find(seen.begin(), seen.end(), g) != seen.end()) continue;
    seen.push_back(g);
    const std::string label = fmt::format("{} ({})", g.empty() ? "no model" : g, group_nodes[g]);
    const double w = 8 + text_width(label, kTextPx) + 16;
    if (lx + w > width - kMargin) {
      lx = kMargin;
      ly += kLegendRowPx;
    }
    legend += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"4\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "dy=\"0.35em\">{}</text>",
        coord(lx), coord(ly - 6), group_colors.color(g), coord(lx + 8), coord(ly), escape(label));
    lx += w;
  }
  return {legend, ly + kLegendRowPx};
}

struct Placed {
  std::size_t node;
  std::size_t col;
  double y;
};
struct Label {
  std::string text;
  std::size_t col;
  double y;
};

// Nodes and group labels placed in columns no taller than a limit.
struct Flow {
  std::vector<Placed> placed;
  std::vector<Label> labels;
  std::vector<double> col_w;  // a column is as wide as its widest node (or group label)
  double height_used = 0;
};

Flow flow_into_columns(const OccupancyMap& map, const Groups& groups, double limit) {
  const auto node_w = [&](std::size_t gpus) {
    return kStrip + 2 + static_cast<double>(std::max<std::size_t>(gpus, 1)) * kCellW;
  };
  Flow f;
  f.col_w.assign(1, 0);
  std::size_t col = 0;
  double y = 0;
  std::size_t next = 0;
  for (const auto& [g, count] : groups) {
    const std::string label = g.empty() ? "no model" : g;
    for (std::size_t k = 0; k < count; ++k, ++next) {
      const bool first = k == 0;
      if (first && y > 0) y += kGroupGap;
      const double need = first ? kLabelH + kRowH : kRowH;
      const bool tail = !first && count - k <= 3;  // a group's last rows stay with it
      if (y + need > limit && y > 0 && !tail) {
        ++col;
        f.col_w.push_back(0);
        y = 0;
      }
      if (first || y == 0) {
        f.labels.push_back(Label{label, col, y});
        f.col_w[col] = std::max(f.col_w[col], text_width(label, 10) + 2);
        y += kLabelH;
      }
      f.placed.push_back(Placed{next, col, y});
      f.col_w[col] = std::max(f.col_w[col], node_w(map.nodes[next].used_milli.size()));
      y += kRowH;
      f.height_used = std::max(f.height_used, y);
    }
  }
  return f;
}

// The lowest column height whose columns fit the width.
Flow fit_columns(const OccupancyMap& map, const Groups& groups, double width) {
  double limit = kLabelH + kRowH * std::min<double>(static_cast<double>(map.nodes.size()), 40);
  Flow f;
  for (int attempt = 0; attempt < 100000; ++attempt) {
    f = flow_into_columns(map, groups, limit);
    double total_w = 0;
    for (double w : f.col_w) total_w += w + kGutter;
    if (total_w - kGutter <= width - 2 * kMargin || f.col_w.size() == 1) break;
    limit += kRowH;
  }
  return f;
}

// Runs of consecutive placed nodes in one column with the same group and GPU count.
struct Run {
  std::size_t begin, end;  // into placed
};

std::vector<Run> node_runs(const OccupancyMap& map, const std::vector<Placed>& placed) {
  std::vector<Run> runs;
  for (std::size_t i = 0; i < placed.size(); ++i) {
    const MapNode& n = map.nodes[placed[i].node];
    if (!runs.empty()) {
      const Placed& prev = placed[i - 1];
      const MapNode& pn = map.nodes[prev.node];
      if (prev.col == placed[i].col && placed[i].y == prev.y + kRowH && pn.group == n.group &&
          pn.used_milli.size() == n.used_milli.size()) {
        runs.back().end = i + 1;
        continue;
      }
    }
    runs.push_back(Run{i, i + 1});
  }
  return runs;
}

// A rectangle of cells of one shade: GPUs [a, b) over rows y0..y1.
struct Open {
  std::size_t a, b;
  int level;
  double y0, y1;
};

// The shaded cells of one node row, equal neighbours merged.
std::vector<Open> row_cells(const MapNode& n, double y) {
  std::vector<Open> row;
  for (std::size_t g = 0; g < n.used_milli.size();) {
    const int level = occupancy_level(n.used_milli[g]);
    std::size_t h = g + 1;
    while (h < n.used_milli.size() && occupancy_level(n.used_milli[h]) == level) ++h;
    if (level > 0) row.push_back(Open{g, h, level, y, y + kRowH});
    g = h;
  }
  return row;
}

// Cell fills of one run by shade, merged across equal neighbouring cells (right and down).
void run_fills(const OccupancyMap& map, const std::vector<Placed>& placed, const Run& r, double x0,
               double grid_top, std::vector<std::string>& fills) {
  std::vector<Open> open;
  const auto flush = [&](const Open& o) {
    fills[static_cast<std::size_t>(o.level)] +=
        fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                    coord(x0 + static_cast<double>(o.a) * kCellW + 1), coord(grid_top + o.y0 + 1),
                    coord(static_cast<double>(o.b - o.a) * kCellW - 1), coord(o.y1 - o.y0 - 1));
  };
  for (std::size_t i = r.begin; i < r.end; ++i) {
    std::vector<Open> next_open;
    for (Open& cell : row_cells(map.nodes[placed[i].node], placed[i].y)) {
      auto it = std::find_if(open.begin(), open.end(), [&](const Open& o) {
        return o.a == cell.a && o.b == cell.b && o.level == cell.level;
      });
      if (it != open.end()) {
        it->y1 = cell.y1;
        next_open.push_back(*it);
        it->level = -1;  // taken
      } else {
        next_open.push_back(cell);
      }
    }
    for (const Open& o : open) {
      if (o.level >= 0) flush(o);
    }
    open = std::move(next_open);
  }
  for (const Open& o : open) flush(o);
}

// The grid lines of every run's cells, as one path.
std::string cell_lines(const OccupancyMap& map, const std::vector<Placed>& placed,
                       const std::vector<Run>& runs, const std::vector<double>& col_left,
                       double grid_top) {
  std::string d;
  for (const Run& r : runs) {
    const Placed& p = placed[r.begin];
    const double x0 = col_left[p.col] + kStrip + 2 + 0.5;
    const double y0 = grid_top + p.y + 0.5;
    const std::size_t gpus = map.nodes[p.node].used_milli.size();
    const double w = static_cast<double>(gpus) * kCellW;
    const double h = static_cast<double>(r.end - r.begin) * kRowH;
    for (std::size_t k = 0; k <= r.end - r.begin; ++k) {
      d +=
          fmt::format("M{} {}h{}", coord(x0), coord(y0 + static_cast<double>(k) * kRowH), coord(w));
    }
    for (std::size_t g = 0; g <= gpus; ++g) {
      d += fmt::format("M{} {}v{}", coord(x0 + static_cast<double>(g) * kCellW), coord(y0),
                       coord(h));
    }
  }
  return d;
}

// Group labels, group strips, shaded cells and cell lines.
std::string map_grid(const OccupancyMap& map, const Flow& f, double grid_top,
                     ColorMap& group_colors) {
  std::vector<double> col_left(f.col_w.size(), kMargin);
  for (std::size_t c = 1; c < f.col_w.size(); ++c)
    col_left[c] = col_left[c - 1] + f.col_w[c - 1] + kGutter;
  std::string out = "<g class=\"group-labels\" font-size=\"10\" fill=\"#333\">";
  for (const Label& l : f.labels) {
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>", coord(col_left[l.col]),
                       coord(grid_top + l.y + kLabelH - 4), escape(l.text));
  }
  out += "</g>";
  const std::vector<Run> runs = node_runs(map, f.placed);
  out += "<g class=\"strips\">";
  for (const Run& r : runs) {
    const Placed& p = f.placed[r.begin];
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                       coord(col_left[p.col]), coord(grid_top + p.y), coord(kStrip),
                       coord(static_cast<double>(r.end - r.begin) * kRowH),
                       group_colors.color(map.nodes[p.node].group));
  }
  out += "</g>";
  std::vector<std::string> fills(6);
  for (const Run& r : runs) {
    run_fills(map, f.placed, r, col_left[f.placed[r.begin].col] + kStrip + 2, grid_top, fills);
  }
  for (std::size_t level = 1; level < fills.size(); ++level) {
    if (fills[level].empty()) continue;
    out += fmt::format("<g class=\"shade-{}\" fill=\"{}\">{}</g>", level, occupancy_shades()[level],
                       fills[level]);
  }
  out += fmt::format(
      "<path class=\"cells\" d=\"{}\" fill=\"none\" stroke=\"#b8b8b8\" stroke-width=\"1\"/>",
      cell_lines(map, f.placed, runs, col_left, grid_top));
  return out;
}

}  // namespace

int occupancy_level(int used_milli) {
  if (used_milli <= 0) return 0;
  if (used_milli >= 1000) return 5;
  if (used_milli <= 250) return 1;
  if (used_milli <= 500) return 2;
  if (used_milli <= 750) return 3;
  return 4;
}

const std::vector<std::string>& occupancy_shades() {
  static const std::vector<std::string> shades = {"#ffffff", "#d0e1f2", "#94c4df",
                                                  "#4a98c9", "#1764ab", "#08306b"};
  return shades;
}

std::string render_occupancy_map(const OccupancyMap& map) {
  const double width = map.width;
  Groups groups;
  for (const MapNode& n : map.nodes) {
    if (groups.empty() || groups.back().first != n.group) groups.emplace_back(n.group, 0);
    ++groups.back().second;
  }
  ColorMap group_colors;
  const auto [legend, grid_top] = map_legend(groups, width, group_colors);
  const Flow f = fit_columns(map, groups, width);
  const double height = grid_top + f.height_used + 14;
  std::string out;
  out += svg_open(map.id, "chart-svg occupancy", width, height, map.title);
  out += title_text(coord(kMargin), map.title);
  out += "<g class=\"legend\" fill=\"#222\">" + legend + "</g>";
  out += map_grid(map, f, grid_top, group_colors);
  out += "</svg>";
  return out;
}

}  // namespace greensched::report::svg
