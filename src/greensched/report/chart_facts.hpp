// The facts of a chart, for a narrator's caption: what it plots (title, axes) and, per series
// or bar, the values a reader would name (first and last, lowest and highest, with where they
// lie), with one sentence each in the form the guard checks numbers against. Also the text of
// a caption written in HTML. Used only where a narrator is given: the page itself never shows
// these sentences.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "greensched/report/svg_chart.hpp"

namespace greensched::report {

nlohmann::json chart_facts(const svg::LineChart& chart);
nlohmann::json chart_facts(const svg::BarChart& chart);

// The text of an HTML fragment: tags dropped, the five entities HTML escaping writes decoded,
// runs of white space made one space.
std::string html_text(std::string_view html);

}  // namespace greensched::report
