// A small SVG chart builder for the HTML report: line charts (with optional shaded min..max
// bands and gaps), horizontal bar charts, "nice" axis ticks, a fixed colour palette and
// downsampling of long series. Output is plain SVG text with every label escaped; the same
// input always gives the same bytes (fixed number formatting, no clocks, no randomness).
// One file per chart kind (svg_line_chart, svg_bar_chart, svg_occupancy_map) over shared
// text, axis and colour helpers (svg_format, svg_axis, svg_color).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace greensched::report::svg {

// Escapes &, <, >, " and ' so that the text is safe in HTML/SVG text and attribute values.
std::string escape(std::string_view text);

// A coordinate with one decimal ("12.3", "-4", "0"): small and deterministic.
std::string coord(double v);

struct Point {
  double x = 0;
  double y = 0;  // NaN: no value here (the line breaks)
};

// Axis ticks at a "nice" step (1, 2, 2.5 or 5 times a power of ten) covering [lo, hi].
struct Ticks {
  double lo = 0;     // first tick (<= the data's low end when extended)
  double hi = 1;     // last tick
  double step = 1;   // distance between ticks
  int decimals = 0;  // decimals that tell the tick labels apart
  std::vector<double> values;
};
// With `extend`, lo/hi are widened to whole steps; otherwise ticks lie inside [lo, hi].
Ticks nice_ticks(double lo, double hi, int target = 6, bool extend = true);
std::string format_number(double v, int decimals);  // fixed decimals, thousands separators

// At most `max_points` points (>= 4): the x range is cut into max_points/2 equal buckets and
// each bucket keeps its lowest and highest point, in x order, so peaks and dips survive. A
// bucket that holds a gap (NaN y) keeps the gap. Points must be sorted by x.
std::vector<Point> downsample_minmax(const std::vector<Point>& points, std::size_t max_points);

// Stable colours by name: well-known policy and agent names get fixed palette entries, other
// names take the next free entry in order of first request. One map per page keeps a name's
// colour the same in every chart.
class ColorMap {
 public:
  const std::string& color(const std::string& name);

 private:
  std::map<std::string, std::string> assigned_;
  std::vector<bool> used_;
};
// The palette behind ColorMap (colour-blind-aware, dark enough for thin lines on white).
const std::vector<std::string>& palette();

struct Series {
  std::string name;
  std::string color;
  std::vector<Point> points;
  // Optional shaded band between two curves (e.g. min and max over seeds).
  std::vector<Point> band_lo;
  std::vector<Point> band_hi;
  bool dashed = false;
  bool in_legend = true;
};

struct LegendEntry {
  std::string label;
  std::string color;
  bool dashed = false;
  bool band = false;  // drawn as a shaded box instead of a line
};

// A vertical line across the plot at x (e.g. a chosen start), labelled at the top; with `y`,
// also a dot at (x, y) on a series.
struct Marker {
  double x = 0;
  std::optional<double> y;
  std::string label;
  std::string color;
  bool dashed = false;
};

struct LineChart {
  std::string id;  // id of the <svg>
  std::string title;
  std::string x_label;  // axis titles, with units
  std::string y_label;
  int width = 940;
  int plot_height = 280;  // height of the plotting area; the svg adds title, legend and axes
  std::optional<double> x_min, x_max, y_min, y_max;  // default: from the data
  bool y_from_zero = true;                           // include 0 in the y range
  std::vector<Series> series;
  std::vector<LegendEntry> extra_legend;  // e.g. line styles, the band
  std::size_t max_points = 2000;          // per series, see downsample_minmax
  std::vector<Marker> markers;            // drawn over the data; inside the x range
};
std::string render_line_chart(const LineChart& chart);

struct Bar {
  std::string label;
  double value = 0;
  std::string color;
};

// Horizontal bars: one labelled bar per entry, the value written at its end.
struct BarChart {
  std::string id;
  std::string title;
  std::string value_label;  // x axis title, with unit
  int width = 460;
  int decimals = 0;  // of the value labels
  std::vector<Bar> bars;
};
std::string render_bar_chart(const BarChart& chart);

// A GPU occupancy map: one row of small cells per node, one cell per GPU, shaded by the
// GPU's used share (white = free .. dark = fully used). Nodes are drawn in the given order
// in labelled groups (a group starts where `group` changes), flowing into as many columns
// of node rows as fit the width, so that a thousand nodes stay readable.
struct MapNode {
  std::string group;            // e.g. the GPU model
  std::vector<int> used_milli;  // per GPU, 0..1000
};
struct OccupancyMap {
  std::string id;
  std::string title;
  int width = 940;
  std::vector<MapNode> nodes;
};
std::string render_occupancy_map(const OccupancyMap& map);
// Shade class 0..5 of a used share: free, 1-25 %, 26-50 %, 51-75 %, 76-99 %, full.
int occupancy_level(int used_milli);
const std::vector<std::string>& occupancy_shades();

// Horizontal stacked bars: one labelled row per entry, its segments side by side in the order
// of `segments` (each with its colour and a legend entry), the segment's value written inside
// it where it fits and, with `show_total`, the row's total at its end.
struct Segment {
  std::string label;
  std::string color;
};
struct StackedRow {
  std::string label;
  std::vector<double> values;  // one per segment; missing or negative ones count as 0
};
struct StackedBarChart {
  std::string id;
  std::string title;
  std::string value_label;  // x axis title, with unit
  int width = 460;
  int decimals = 0;  // of the value labels
  bool show_total = false;
  std::optional<double> max;  // axis end (default: the largest row total)
  std::vector<Segment> segments;
  std::vector<StackedRow> rows;
};
std::string render_stacked_bar_chart(const StackedBarChart& chart);

// Charts (each made by this builder) one under the other in a single standalone <svg> with
// the SVG namespace, as an image file needs; `title` is its accessible title.
std::string stack_charts(std::string_view id, std::string_view title,
                         const std::vector<std::string>& charts);

// Approximate width in px of `text` at `font_px` in a sans-serif font (for layout only).
double text_width(std::string_view text, double font_px);

}  // namespace greensched::report::svg
