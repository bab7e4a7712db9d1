#include "greensched/report/chart_facts.hpp"

#include <cctype>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace greensched::report {
namespace {

using nlohmann::json;

// Three significant figures, no trailing zeros (0.9512 -> "0.951", 1234.5 -> "1235").
std::string figure(double v) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

double rounded(double v) {
  return std::isfinite(v) ? std::stod(figure(v)) : 0.0;
}

}  // namespace

json chart_facts(const svg::LineChart& chart) {
  json series = json::array();
  std::vector<std::string> sentences;
  for (const svg::Series& s : chart.series) {
    const svg::Point* first = nullptr;
    const svg::Point* last = nullptr;
    const svg::Point* low = nullptr;
    const svg::Point* high = nullptr;
    for (const svg::Point& p : s.points) {
      if (!std::isfinite(p.y) || !std::isfinite(p.x)) continue;
      if (first == nullptr) first = &p;
      last = &p;
      if (low == nullptr || p.y < low->y) low = &p;
      if (high == nullptr || p.y > high->y) high = &p;
    }
    if (first == nullptr || s.name.empty()) continue;
    series.push_back({{"name", s.name},
                      {"first", rounded(first->y)},
                      {"first_x", rounded(first->x)},
                      {"last", rounded(last->y)},
                      {"last_x", rounded(last->x)},
                      {"lowest", rounded(low->y)},
                      {"lowest_x", rounded(low->x)},
                      {"highest", rounded(high->y)},
                      {"highest_x", rounded(high->x)}});
    sentences.push_back(fmt::format("{}: {} at {} to {} at {}; lowest {} at {}, highest {} at {}.",
                                    s.name, figure(first->y), figure(first->x), figure(last->y),
                                    figure(last->x), figure(low->y), figure(low->x),
                                    figure(high->y), figure(high->x)));
  }
  return {{"chart", chart.title},
          {"x_axis", chart.x_label},
          {"y_axis", chart.y_label},
          {"series", std::move(series)},
          {"sentences", std::move(sentences)}};
}

json chart_facts(const svg::BarChart& chart) {
  json bars = json::array();
  std::vector<std::string> sentences;
  for (const svg::Bar& b : chart.bars) {
    if (!std::isfinite(b.value)) continue;
    bars.push_back({{"name", b.label}, {"value", rounded(b.value)}});
    sentences.push_back(fmt::format("{}: {}.", b.label, figure(b.value)));
  }
  return {{"chart", chart.title},
          {"value_axis", chart.value_label},
          {"bars", std::move(bars)},
          {"sentences", std::move(sentences)}};
}

std::string html_text(std::string_view html) {
  std::string out;
  bool in_tag = false;
  for (std::size_t i = 0; i < html.size(); ++i) {
    const char c = html[i];
    if (in_tag) {
      in_tag = c != '>';
      continue;
    }
    if (c == '<') {
      in_tag = true;
      continue;
    }
    if (c == '&') {
      static constexpr std::pair<std::string_view, char> kEntities[] = {
          {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
      bool decoded = false;
      for (const auto& [entity, ch] : kEntities) {
        if (html.substr(i, entity.size()) == entity) {
          out += ch;
          i += entity.size() - 1;
          decoded = true;
          break;
        }
      }
      if (decoded) continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace greensched::report
