#include "greensched/report/energy_section.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "greensched/report/section.hpp"

namespace greensched::report {
namespace {

// The named text and number columns of a CSV file, every one required.
Result<Table> read_columns(const std::string& path, const std::vector<std::string>& texts,
                           const std::vector<std::string>& nums) {
  std::vector<Column> columns;
  for (const std::string& c : texts) columns.push_back(text_col(c));
  for (const std::string& c : nums) columns.push_back(num_col(c));
  return read_table(path, columns);
}

// Which agent and controller the per-site charts show: the first agent, with mpc if it ran,
// else the last controller of that agent.
std::pair<std::string, std::string> shown_run(const Table& tl) {
  const auto& agent = tl.text("agent");
  const auto& ctrl = tl.text("controller");
  std::string a = tl.rows > 0 ? agent[0] : "", c;
  for (std::size_t r = 0; r < tl.rows; ++r) {
    if (agent[r] != a) continue;
    if (c != "mpc") c = ctrl[r];
  }
  return {a, c};
}

EnergyFigure sources_chart(const Table& tl, const std::string& site, const std::string& agent,
                           const std::string& ctrl, std::size_t k) {
  static const char* kSources[][2] = {{"pv_kwh", "Solar"},
                                      {"wind_kwh", "Wind"},
                                      {"discharge_kwh", "Battery discharge"},
                                      {"grid_import_kwh", "Grid import"}};
  static const char* kColors[] = {"#e6a700", "#3b8bc2", "#7a4fa3", "#7f7f7f"};
  svg::LineChart chart;
  chart.id = fmt::format("chart-energy-sources-{}-svg", k);
  chart.title = fmt::format("Energy sources at {} ({}, {} controller)", site, agent, ctrl);
  chart.x_label = "Time (days from the first measured hour)";
  chart.y_label = "Energy (kWh per hour)";
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < tl.rows; ++r) {
    if (tl.text("site")[r] == site && tl.text("agent")[r] == agent &&
        tl.text("controller")[r] == ctrl) {
      rows.push_back(r);
    }
  }
  std::vector<double> below(rows.size(), 0.0);
  for (std::size_t s = 0; s < 4; ++s) {
    svg::Series band;
    band.name = kSources[s][1];
    band.color = kColors[s];
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double x = static_cast<double>(i) / 24.0;
      const double top = below[i] + tl.num(kSources[s][0])[rows[i]];
      band.band_lo.push_back(svg::Point{x, below[i]});
      band.band_hi.push_back(svg::Point{x, top});
      band.points.push_back(svg::Point{x, top});
      below[i] = top;
    }
    chart.series.push_back(std::move(band));
  }
  svg::Series demand;
  demand.name = "Demand (IT x PUE)";
  demand.color = "#000000";
  demand.dashed = true;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    demand.points.push_back(
        svg::Point{static_cast<double>(i) / 24.0, tl.num("demand_kwh")[rows[i]]});
  }
  chart.series.push_back(std::move(demand));
  return EnergyFigure{
      fmt::format("chart-energy-sources-{}", k), svg::render_line_chart(chart),
      fmt::format("Where {}'s energy came from each hour, stacked: on-site solar, wind, the "
                  "battery, then the grid. The dashed line is the site's demand; sources above "
                  "it went into the battery, out as export or were curtailed. Agent {}, "
                  "controller {}; UTC hours of the measured window.",
                  svg::escape(site), svg::escape(agent), svg::escape(ctrl))};
}

EnergyFigure soc_chart(const Table& tl, const std::vector<std::string>& sites,
                       const std::string& agent, const std::string& ctrl, svg::ColorMap& colors) {
  svg::LineChart chart;
  chart.id = "chart-energy-soc-svg";
  chart.title = fmt::format("Battery state of charge ({}, {} controller)", agent, ctrl);
  chart.x_label = "Time (days from the first measured hour)";
  chart.y_label = "State of charge (%)";
  chart.y_min = 0;
  chart.y_max = 100;
  for (const std::string& site : sites) {
    svg::Series line;
    line.name = site;
    line.color = colors.color("site " + site);
    std::size_t i = 0;
    for (std::size_t r = 0; r < tl.rows; ++r) {
      if (tl.text("site")[r] != site || tl.text("agent")[r] != agent ||
          tl.text("controller")[r] != ctrl) {
        continue;
      }
      line.points.push_back(svg::Point{static_cast<double>(i++) / 24.0, 100.0 * tl.num("soc")[r]});
    }
    chart.series.push_back(std::move(line));
  }
  return EnergyFigure{"chart-energy-soc", svg::render_line_chart(chart),
                      "Each site's battery state of charge at the end of every hour under the "
                      "same agent and controller as the charts above; it stays inside the "
                      "battery's window (soc_min..soc_max)."};
}

Result<std::vector<EnergyFigure>> cost_carbon_bars(const std::string& summary_path,
                                                   svg::ColorMap& colors) {
  auto s = read_columns(summary_path, {"agent", "controller"}, {});
  if (!s.ok()) return Error{s.error()};
  const Table& csv = s.value();
  svg::BarChart cost, carbon;
  cost.id = "chart-energy-cost-svg";
  cost.title = "Grid cost per agent and controller";
  cost.value_label = "Cost (USD)";
  carbon.id = "chart-energy-carbon-svg";
  carbon.title = "Carbon per agent and controller";
  carbon.value_label = "Carbon (kg CO₂)";
  auto nums = read_columns(summary_path, {}, {"cost_usd", "carbon_kg"});
  if (!nums.ok()) return Error{nums.error()};
  bool priced = false;
  for (std::size_t r = 0; r < csv.rows; ++r) {
    const std::string label = csv.text("agent")[r] + " / " + csv.text("controller")[r];
    const std::string& color = colors.color(csv.text("agent")[r]);
    cost.bars.push_back(svg::Bar{label, nums.value().num("cost_usd")[r], color});
    carbon.bars.push_back(svg::Bar{label, nums.value().num("carbon_kg")[r], color});
    priced = priced || nums.value().num("cost_usd")[r] != 0;
  }
  std::vector<EnergyFigure> out;
  if (priced) {
    out.push_back({"chart-energy-cost", svg::render_bar_chart(cost),
                   "What each agent and site controller paid for grid energy over the measured "
                   "window, after on-site generation and the battery (export earnings "
                   "deducted)."});
  } else {
    out.push_back(
        {"", "", "No site of this fleet has a price series, so there is no cost to chart."});
  }
  out.push_back({"chart-energy-carbon", svg::render_bar_chart(carbon),
                 "The carbon of the grid energy each agent and controller imported."});
  return out;
}

}  // namespace

Result<std::vector<EnergyFigure>> energy_figures(const std::string& timeline_path,
                                                 const std::string& summary_path,
                                                 svg::ColorMap& colors) {
  auto read = read_columns(timeline_path, {"agent", "controller", "site"},
                           {"demand_kwh", "pv_kwh", "wind_kwh", "charge_kwh", "discharge_kwh",
                            "grid_import_kwh", "soc"});
  if (!read.ok()) return Error{read.error()};
  const Table& tl = read.value();
  std::vector<EnergyFigure> figures;
  if (tl.rows == 0) return figures;
  const auto [agent, ctrl] = shown_run(tl);
  std::vector<std::string> sites;
  for (const std::string& s : tl.text("site")) {
    if (std::find(sites.begin(), sites.end(), s) == sites.end()) sites.push_back(s);
  }
  // A site is charted only where it has something of its own: generation for the sources
  // chart, a battery (one that ever charges or discharges) for the state of charge. The rest
  // draw everything from the grid, which the cost and carbon bars show.
  std::vector<std::string> generating, storing, grid_only;
  for (const std::string& site : sites) {
    bool generates = false, stores = false;
    for (std::size_t r = 0; r < tl.rows; ++r) {
      if (tl.text("site")[r] != site) continue;
      generates = generates || tl.num("pv_kwh")[r] > 0 || tl.num("wind_kwh")[r] > 0;
      stores = stores || tl.num("charge_kwh")[r] > 0 || tl.num("discharge_kwh")[r] > 0;
    }
    if (generates || stores) generating.push_back(site);
    if (stores) storing.push_back(site);
    if (!generates && !stores) grid_only.push_back(site);
  }
  for (std::size_t k = 0; k < generating.size(); ++k) {
    figures.push_back(sources_chart(tl, generating[k], agent, ctrl, k));
  }
  if (!storing.empty()) figures.push_back(soc_chart(tl, storing, agent, ctrl, colors));
  if (!summary_path.empty()) {
    auto bars = cost_carbon_bars(summary_path, colors);
    if (!bars.ok()) return Error{bars.error()};
    for (EnergyFigure& f : bars.value()) figures.push_back(std::move(f));
  }
  if (!grid_only.empty()) {
    std::string names;
    for (const std::string& site : grid_only) names += (names.empty() ? "" : ", ") + site;
    figures.insert(figures.begin(),
                   EnergyFigure{"", "",
                                "Sites with no solar, wind or battery draw everything from the "
                                "grid and get no chart of their own: " +
                                    names + "."});
  }
  return figures;
}

Status add_energy_section(Page& page, const std::string& timeline_path,
                          const std::string& summary_path) {
  auto figures = energy_figures(timeline_path, summary_path, page.colors);
  if (!figures.ok()) return figures.status();
  if (figures.value().empty()) return Status::Ok();
  page.section("sec-energy", "Site energy",
               "Each site serves its hourly demand from on-site solar and wind, its "
               "battery and the grid; a site energy controller decides the battery, after "
               "dispatch, on the demand the replay produced.");
  for (const EnergyFigure& f : figures.value()) {
    if (f.svg.empty()) {
      page.body += "<p class=\"intro\">" + svg::escape(f.caption_html) + "</p>\n";
    } else {
      page.chart(f.id, f.svg, f.caption_html);
    }
  }
  return Status::Ok();
}

}  // namespace greensched::report
