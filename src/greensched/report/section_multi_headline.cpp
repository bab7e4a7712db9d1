// The fleet report's headline (section.hpp): what each agent saves against local, as a share
// of what the fleet bound says could be saved at the same load and slack (the dual, the
// feasible schedule and the tight bound: three shares), beside its
// latency-sensitive violations and local's. A green figure counts only beside its bound and
// only where service held, so this comes first.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "greensched/report/section.hpp"
#include "greensched/report/svg_chart.hpp"

namespace greensched::report {
namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// The summary.csv row of `agent` at a load and slack (no controller row), or -1.
long headline_summary_row(const Table& summary, const std::string& agent, double load,
                          double slack) {
  for (std::size_t r = 0; r < summary.rows; ++r) {
    if (summary.text("agent")[r] != agent) continue;
    if (summary.has("controller") && !summary.text("controller")[r].empty() &&
        summary.text("controller")[r] != "none") {
      continue;
    }
    const double l = summary.has("target_load_pct") ? summary.num("target_load_pct")[r] : kNoValue;
    const bool same_load = (std::isnan(l) && std::isnan(load)) || l == load;
    if (same_load && summary.num("slack_h")[r] == slack) return static_cast<long>(r);
  }
  return -1;
}

std::string headline_pct(double v, const char* f) {
  return std::isfinite(v) ? fmt::format(fmt::runtime(f), v) : "–";
}

}  // namespace

std::vector<Column> multi_bound_columns() {
  return {text_col("agent"),
          num_col("target_load_pct", true),
          num_col("slack_h"),
          num_col("carbon_vs_local_pct", true),
          num_col("bound_carbon_vs_local_pct", true),
          num_col("share_of_bound_pct", true),
          num_col("bound_saving_kg", true),
          num_col("share_of_feasible_pct", true, false),
          num_col("share_of_tight_bound_pct", true, false)};
}

void add_multi_headline(Page& page, const Table* summary, const Table* bound) {
  if (bound == nullptr || bound->rows == 0) {
    page.section("sec-multi-headline", "Headline",
                 "This run has no fleet bound (it ran with <code>--no-bound</code> or "
                 "<code>--shard</code>), so no agent's saving can be read against what could be "
                 "saved. Run <code>greensched multi</code> with the bound (its default) for the "
                 "share of the bound each agent reaches.");
    return;
  }
  HtmlTable t;
  t.text_columns = 1;
  t.headers = {"Agent",
               "Load (%)",
               "Slack (h)",
               "Carbon vs local",
               "Bound vs local",
               "Share of bound",
               "Share of feasible",
               "Share of tight bound",
               "LS violations (local)"};
  std::string lead;
  for (std::size_t r = 0; r < bound->rows; ++r) {
    const std::string& agent = bound->text("agent")[r];
    const double load = bound->num("target_load_pct")[r];
    const double slack = bound->num("slack_h")[r];
    const double vs = bound->num("carbon_vs_local_pct")[r];
    const double b = bound->num("bound_carbon_vs_local_pct")[r];
    const double share = bound->num("share_of_bound_pct")[r];
    const auto optional = [&](const char* column) {
      return bound->has(column) ? bound->num(column)[r] : kNoValue;
    };
    const double feasible = optional("share_of_feasible_pct");
    const double tight = optional("share_of_tight_bound_pct");
    std::string viol = "–";
    std::string viol_words;
    if (summary != nullptr && summary->has("ls_slo_violations")) {
      const long own = headline_summary_row(*summary, agent, load, slack);
      const long local = headline_summary_row(*summary, "local", load, slack);
      if (own >= 0) {
        const double mine = summary->num("ls_slo_violations")[static_cast<std::size_t>(own)];
        const double theirs =
            local >= 0 ? summary->num("ls_slo_violations")[static_cast<std::size_t>(local)]
                       : kNoValue;
        viol = std::isfinite(theirs) ? fmt::format("{:.0f} ({:.0f})", mine, theirs)
                                     : fmt::format("{:.0f}", mine);
        viol_words =
            std::isfinite(theirs)
                ? fmt::format(", with {:.0f} latency-sensitive violations against local's {:.0f}{}",
                              mine, theirs,
                              mine > theirs ? ": more, so this saving does not count" : "")
                : fmt::format(", with {:.0f} latency-sensitive violations", mine);
      }
    }
    HtmlTable::Row row;
    row.name = agent;
    row.color = page.colors.color(agent);
    row.cells = {std::isnan(load) ? "own rate" : fmt::format("{:.0f}", load),
                 fmt::format("{:g}", slack),
                 headline_pct(vs, "{:+.1f} %"),
                 headline_pct(b, "{:+.1f} %"),
                 headline_pct(share, "{:.0f} %"),
                 headline_pct(feasible, "{:.0f} %"),
                 headline_pct(tight, "{:.0f} %"),
                 viol};
    t.rows.push_back(std::move(row));
    if (agent == "local" || !std::isfinite(share)) continue;
    const std::string sides =
        std::isfinite(feasible) || std::isfinite(tight)
            ? fmt::format(
                  "; {} of what the bound's feasible schedule saves, {} of the tight "
                  "bound's",
                  headline_pct(feasible, "{:.0f} %"), headline_pct(tight, "{:.0f} %"))
            : std::string();
    lead += fmt::format(
        "<li><b>{}</b>{}, {:g} h slack: {} carbon against local, <b>{} of the saving the fleet "
        "bound allows</b> (the bound: {} against local){}{}.</li>\n",
        svg::escape(agent),
        std::isnan(load) ? std::string(" at the pod list's own rate")
                         : fmt::format(" at {:.0f} % load", load),
        slack, headline_pct(vs, "{:+.1f} %"), headline_pct(share, "{:.0f} %"),
        headline_pct(b, "{:+.1f} %"), sides, viol_words);
  }
  page.section("sec-multi-headline", "Headline",
               "What each agent saves against <code>local</code> (every job at home), as a "
               "share of the fleet bound's saving at the same load and slack: the least carbon "
               "any dispatcher could reach with the same jobs (<code>bound.csv</code>). A saving "
               "counts only where latency-sensitive violations are no more than local's. The "
               "bound has two sides: the dual is a lower bound on the carbon of any schedule "
               "of its fluid model, the feasible schedule (found by local search) one such "
               "schedule, and the model's optimum lies between them; the tight bound adds CPU "
               "cores, GPUs per node type and a fill at which jobs still start within the LS "
               "bound, a bound for that calibrated model." +
                   (lead.empty() ? std::string() : "<ul>\n" + lead + "</ul>"));
  page.table("table-multi-headline", t.render(),
             "From bound.csv and summary.csv. Bound vs local: the bound's saving in % of local's "
             "carbon; share of bound: the agent's saving against local over the bound's, in kg "
             "(transfer counted in both); share of feasible and of tight bound: the same over "
             "the feasible schedule's saving (above 100 %: the agent beat it) and the tight "
             "bound's; LS violations: latency-sensitive jobs that started later than the bound, "
             "local's in brackets.");
}

}  // namespace greensched::report
