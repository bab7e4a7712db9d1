#include "greensched/report/page.hpp"

#include "greensched/report/chart_facts.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

namespace greensched::report {
namespace {

using svg::escape;

const char* const kStyle = R"(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f5f7; color: #1f2328;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header, main, footer { max-width: 1240px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 24px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 0 0 6px; }
h3 { font-size: 15px; margin: 14px 0 4px; }
h3 small { font-weight: normal; color: #57606a; }
p.meta { color: #57606a; margin: 0 0 8px; }
nav ul { display: flex; flex-wrap: wrap; gap: 6px 18px; list-style: none; padding: 0; margin: 8px 0; }
nav a { color: #0b5cad; text-decoration: none; }
nav a:hover { text-decoration: underline; }
section { background: #fff; border: 1px solid #dfe2e6; border-radius: 8px; padding: 18px 22px;
  margin: 18px 0; }
p.intro { margin: 0 0 8px; max-width: 92ch; }
figure { margin: 22px 0 10px; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #4b535c; font-size: 13px; max-width: 100ch; margin-top: 4px; }
figure.table figcaption { margin: 0 0 8px; }
.row { display: flex; flex-wrap: wrap; gap: 0 16px; }
.row figure { flex: 1 1 440px; min-width: 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13px; }
th, td { padding: 5px 8px; text-align: right; border-bottom: 1px solid #eceef1; white-space: nowrap; }
th { background: #f6f8fa; font-weight: 600; border-bottom: 1px solid #d0d7de;
  white-space: normal; max-width: 9em; vertical-align: bottom; line-height: 1.25; }
th:first-child, td.name, th.text, td.text { text-align: left; }
td.best { font-weight: 700; }
tbody tr:hover { background: #f6f8fa; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
  margin-right: 7px; vertical-align: -1px; }
pre { white-space: pre-wrap; background: #f6f8fa; border: 1px solid #eceef1; border-radius: 6px;
  padding: 10px 12px; font-size: 12.5px; line-height: 1.45; margin: 4px 0 12px; }
code { font-size: 12.5px; }
.failed-pod .why, .fleet-decision .why { display: flex; flex-wrap: wrap; gap: 0 16px; align-items: flex-start; }
.failed-pod .why pre, .fleet-decision .why pre { flex: 1 1 360px; min-width: 0; }
.narration { flex: 1 1 100%; font-style: italic; }
.decision-chart { flex: 0 1 460px; min-width: 0; margin: 4px 0 12px; }
.decision-chart svg { display: block; max-width: 100%; height: auto; }
footer { color: #6e7781; font-size: 12px; padding-bottom: 30px; }
dl.terms { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; font-size: 13px;
  margin: 0; }
dl.terms dt { font-weight: 600; } dl.terms dd { margin: 0; max-width: 100ch; }
)";

// Sets data-report-check="ok" on <body> when every chart drew something, and
// data-layout-check="ok" when every table, chart and header cell fits its card (else
// "overflow: " and what does not, with its width and the room it had) at the window's width
// (data-layout-width); a headless browser test reads them back from the DOM at several widths.
const char* const kScript = R"JS(
(function () {
  var figures = document.querySelectorAll("figure.chart");
  var ok = true;
  for (var i = 0; i < figures.length; i++) {
    var svg = figures[i].querySelector("svg");
    if (!svg || !svg.querySelector("path, rect")) ok = false;
  }
  document.body.setAttribute("data-report-check", ok ? "ok" : "empty-chart");
  var wide = [];
  var name = function (el) {
    var f = el.closest("figure");
    return (f && f.id ? f.id : el.closest("section").id) + ":" + el.tagName.toLowerCase();
  };
  var items = document.querySelectorAll("section table, section svg, section pre");
  for (var j = 0; j < items.length; j++) {
    var el = items[j], card = el.closest("section"), cs = getComputedStyle(card);
    var room = card.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    var w = Math.max(el.scrollWidth || 0, el.getBoundingClientRect().width);
    if (w > room + 0.5) wide.push(name(el) + "(" + Math.round(w) + ">" + Math.round(room) + ")");
  }
  var cells = document.querySelectorAll("section th");
  for (var k = 0; k < cells.length; k++) {
    if (cells[k].scrollWidth > cells[k].clientWidth + 0.5) {
      wide.push(name(cells[k]) + "[" + cells[k].textContent + "]");
    }
  }
  document.body.setAttribute("data-layout-width", String(window.innerWidth));
  document.body.setAttribute("data-layout-check", wide.length ? "overflow: " + wide.join(" ") : "ok");
})();
)JS";

std::string swatch(const std::string& color) {
  return fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>", escape(color));
}

}  // namespace

void Page::section(const std::string& id, const std::string& heading,
                   const std::string& intro_html) {
  if (!toc.empty()) body += "</section>\n";
  toc.emplace_back(id, heading);
  body += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"intro\">{}</p>\n", escape(id),
                      escape(heading), intro_html);
}

void Page::chart(const std::string& id, const std::string& svg, const std::string& caption_html,
                 const nlohmann::json& facts) {
  figures.push_back(id);
  std::string narrated;
  if (narrate_caption && facts.is_object() && facts.contains("sentences")) {
    nlohmann::json told = facts;
    told["sentences"].insert(told["sentences"].begin(), html_text(caption_html));
    narrated = narrate_caption(told);
  }
  body += fmt::format(
      "<figure class=\"chart\" id=\"{}\">\n{}\n<figcaption>{}{}</figcaption>\n"
      "</figure>\n",
      escape(id), svg, caption_html, narrated);
}

void Page::table(const std::string& id, const std::string& table_html,
                 const std::string& caption_html) {
  figures.push_back(id);
  body += fmt::format(
      "<figure class=\"table\" id=\"{}\">\n<figcaption>{}</figcaption>\n{}\n</figure>\n",
      escape(id), caption_html, table_html);
}

std::string HtmlTable::render() const {
  std::string out = "<div class=\"table-wrap\"><table>\n<thead><tr>";
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const bool text = i > 0 && i < text_columns;
    out += fmt::format("<th{}>{}</th>", text ? " class=\"text\"" : "", escape(headers[i]));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const Row& r : rows) {
    out += fmt::format("<tr><td class=\"name\">{}{}</td>",
                       r.color.empty() ? std::string() : swatch(r.color), escape(r.name));
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      const bool best = i < r.best.size() && r.best[i];
      const char* cls = i + 1 < text_columns ? " class=\"text\"" : best ? " class=\"best\"" : "";
      out += fmt::format("<td{}>{}</td>", cls, escape(r.cells[i]));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>";
  return out;
}

void HtmlTable::mark_best(std::size_t col, const std::vector<double>& values, bool higher) {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (!std::isfinite(best) || (higher ? v > best : v < best)) best = v;
  }
  const bool all_equal = std::all_of(values.begin(), values.end(),
                                     [&](double v) { return !std::isfinite(v) || v == best; });
  if (!std::isfinite(best) || values.size() < 2 || all_equal) return;
  for (std::size_t r = 0; r < rows.size() && r < values.size(); ++r) {
    if (rows[r].best.size() <= col) rows[r].best.resize(col + 1, false);
    rows[r].best[col] = values[r] == best;
  }
}

namespace {

// The abbreviations and codes a page may use, each defined where it is used: a reader of the
// page alone must not need the docs to read it (tests/browser_test.sh holds every page to it).
struct Term {
  const char* term;
  const char* definition;
};
constexpr Term kTerms[] = {
    {"LS",
     "latency-sensitive: a pod or job that must start within the LS bound (QoS LS or "
     "Guaranteed); waiting longer is a violation"},
    {"BE",
     "best-effort: a pod or job that may wait, in multi up to its slack, for a cleaner or "
     "cheaper hour"},
    {"p99", "the 99th percentile: 99 % of the values are at or below it"},
    {"PUE", "power usage effectiveness: facility power over IT power"},
    {"FGD",
     "Fragmentation Gradient Descent (Weng et al., 2023): places a pod where the cluster's "
     "expected fragmentation grows least"},
    {"PWR",
     "the power-aware policy (2025): places a pod where the cluster's power grows "
     "least"},
    {"SLO", "service-level objective: here, a latency-sensitive job starting within its bound"},
    {"MPC",
     "model predictive control: the site energy controller that plans the battery each "
     "hour over a rolling horizon of forecasts"},
    {"G1", "a GPU model code of the openb trace that Alibaba did not disclose"},
    {"G2",
     "a GPU model code of the openb trace that Alibaba did not disclose (the built-in "
     "power model gives it an A10's figures)"},
    {"G3",
     "a GPU model code of the openb trace that Alibaba did not disclose (the built-in "
     "power model gives it an A100's figures)"},
    {"milli", "thousandths of a GPU: 1000 milli is one whole GPU"},
    {"LP", "linear program, solved with COIN-OR CLP (CBC for integer programs)"},
};

// The text of a page body without its tags (the body holds no script or style).
std::string visible_text(const std::string& html) {
  std::string out;
  bool in_tag = false;
  for (char c : html) {
    if (c == '<') {
      in_tag = true;
      out += ' ';
    } else if (c == '>') {
      in_tag = false;
    } else if (!in_tag) {
      out += c;
    }
  }
  return out;
}

bool has_word(const std::string& text, std::string_view word) {
  const auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_word(text[at - 1]);
    const bool ends = at + word.size() >= text.size() || !is_word(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// "Terms used on this page": the definitions of the terms the page uses, or "" for none.
std::string terms_section(const std::string& body) {
  const std::string text = visible_text(body);
  std::string items;
  for (const Term& t : kTerms) {
    if (!has_word(text, t.term)) continue;
    items += fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape(t.term), escape(t.definition));
  }
  if (items.empty()) return "";
  return "<section id=\"sec-terms\">\n<h2>Terms used on this page</h2>\n<dl class=\"terms\">\n" +
         items + "</dl>\n</section>\n";
}

}  // namespace

std::string render_document(const Page& page, const std::string& title, const std::string& in_dir,
                            const std::vector<std::string>& inputs, const std::string& generator) {
  std::string input_list;
  for (const std::string& p : inputs) {
    input_list +=
        (input_list.empty() ? "" : ", ") +
        fmt::format("<code>{}</code>", escape(std::filesystem::path(p).filename().string()));
  }
  std::string toc;
  for (const auto& [id, heading] : page.toc) {
    toc += fmt::format("<li><a href=\"#{}\">{}</a></li>", escape(id), escape(heading));
  }
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // Nothing may be fetched: the page is complete as it is.
  html +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n";
  html += fmt::format("<meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n",
                      escape(generator), escape(title));
  html += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  html += fmt::format(
      "<header>\n<h1>{}</h1>\n<p class=\"meta\">Made by <code>{}</code> from "
      "<code>{}</code>: {}.</p>\n<nav><ul>{}</ul></nav>\n</header>\n<main>\n",
      escape(title), escape(generator), escape(in_dir), input_list, toc);
  html += page.body;
  if (!page.toc.empty()) html += "</section>\n";
  html += terms_section(page.body);
  html +=
      "</main>\n<footer>greensched — charts are inline SVG; the page loads nothing from the "
      "network.</footer>\n";
  html += fmt::format("<script>{}</script>\n</body>\n</html>\n", kScript);
  return html;
}

std::string format_value(double v, int decimals) {
  if (decimals < 0) decimals = std::isfinite(v) && v == std::floor(v) ? 0 : 1;
  return svg::format_number(v, decimals);
}

}  // namespace greensched::report
