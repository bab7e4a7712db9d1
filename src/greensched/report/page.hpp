// The HTML page of the report: sections with their charts and tables, the table markup, and
// the whole document around them (inline CSS and script, no external resources).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/words.hpp"
#include "greensched/report/svg_chart.hpp"

namespace greensched::report {

struct Page {
  svg::ColorMap colors;  // one colour per name on the whole page
  std::vector<std::string> figures;
  std::vector<std::pair<std::string, std::string>> toc;  // section id, heading
  std::string body;
  // Set where a narrator is given: a chart's facts (chart_facts.hpp, its caption's text first
  // among their sentences) to the HTML of a checked caption, or "" (refused, or no reply).
  std::function<std::string(const nlohmann::json& facts)> narrate_caption;

  // Closes the previous section, if any, and opens a new one.
  void section(const std::string& id, const std::string& heading, const std::string& intro_html);
  // `facts`: the chart's, for a narrated caption under the written one (none: no narration).
  void chart(const std::string& id, const std::string& svg, const std::string& caption_html,
             const nlohmann::json& facts = nullptr);
  void table(const std::string& id, const std::string& table_html, const std::string& caption_html);
};

// A table of rows of already formatted cells; the first column is a name with a colour swatch.
struct HtmlTable {
  std::vector<std::string> headers;
  struct Row {
    std::string name;
    std::string color;  // "" for no swatch
    std::vector<std::string> cells;
    std::vector<bool> best;
  };
  std::vector<Row> rows;
  std::size_t text_columns = 1;  // leading columns of text, aligned left (the name is one)

  std::string render() const;
  // Marks the best value of column `col` (higher or lower is better) among finite values.
  void mark_best(std::size_t col, const std::vector<double>& values, bool higher);
};

// The whole document: head, a header naming the inputs, the table of contents, the sections.
// `generator` names the command that made it.
std::string render_document(const Page& page, const std::string& title, const std::string& in_dir,
                            const std::vector<std::string>& inputs,
                            const std::string& generator = "greensched report");

// Names in order of first appearance.
class Keys {
 public:
  std::size_t add(const std::string& key) {
    const auto [it, inserted] = index_.emplace(key, names_.size());
    if (inserted) names_.push_back(key);
    return it->second;
  }
  const std::vector<std::string>& names() const { return names_; }
  std::size_t size() const { return names_.size(); }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<std::string> names_;
};

// Fixed decimals; decimals < 0: a count, whole when it is whole (a mean over seeds may not be).
std::string format_value(double v, int decimals);

}  // namespace greensched::report
