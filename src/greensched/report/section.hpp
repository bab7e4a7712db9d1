// The report's sections, one file each (section_*.cpp). A section names the columns it reads
// and renders its charts and tables onto the page from those tables.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/explain/checked_narration.hpp"
#include "greensched/explain/narrator.hpp"
#include "greensched/report/csv_table.hpp"
#include "greensched/report/page.hpp"

namespace greensched::report {

inline constexpr double kDay = 86400.0;

// A table column of means over runs (seeds): the CSV column, its header, a scale, decimals
// (see format_value), and whether higher (+1) or lower (-1) is better (0: neither).
struct MeanColumn {
  std::string column, header;
  double scale;
  int decimals;
  int better;
};

// Appends to `row` the mean of each column over `rows` of `t`, and each mean to means[c].
void add_means(HtmlTable::Row& row, const Table& t, const std::vector<MeanColumn>& cols,
               const std::vector<std::size_t>& rows, std::vector<std::vector<double>>& means);

// Marks the best mean of each column that has a better direction; `first` is the table
// column of cols[0].
void mark_best_means(HtmlTable& table, const std::vector<MeanColumn>& cols,
                     const std::vector<std::vector<double>>& means, std::size_t first);

// simulate, inflation mode: curves.csv and summary.csv (section_inflation.cpp).
std::vector<Column> inflation_curve_columns();
std::vector<Column> inflation_summary_columns();
void add_inflation_section(Page& page, const Table* curves, const Table* summary);

// simulate: occupancy.csv (section_occupancy.cpp).
std::vector<Column> occupancy_columns();
void add_occupancy_section(Page& page, const Table& occupancy);

// simulate, replay mode: timeline.csv and summary.csv (section_replay.cpp).
std::vector<Column> replay_timeline_columns();
std::vector<Column> replay_summary_columns();
void add_replay_section(Page& page, const Table* timeline, const Table* summary);

// greensched multi: summary.csv and timeline.csv (section_multi.cpp).
std::vector<Column> multi_timeline_columns();
std::vector<Column> multi_summary_columns();
void add_multi_section(Page& page, const Table* summary, const Table* timeline);

// greensched multi's headline: bound.csv beside summary.csv, each agent's share of the bound
// and its LS violations against local's (section_multi_headline.cpp). Without bound.csv, says
// how to get it.
std::vector<Column> multi_bound_columns();
void add_multi_headline(Page& page, const Table* summary, const Table* bound);

// Site energy: energy_timeline.csv, and the multi summary.csv if any (energy_section.cpp).
Status add_energy_section(Page& page, const std::string& timeline_path,
                          const std::string& summary_path);

// Called after each decision a narrator worded: how many of the section's `total`, and what
// they are ("failed pods"); for a progress bar on long narrated reports.
using NarrationProgress =
    std::function<void(std::size_t done, std::size_t total, std::string_view what)>;

// Decision records: the first `limit` failed pods, explained (section_failed_pods.cpp); with a
// narrator (config.url not empty), each with its checked narration, the narrator's notes
// appended to `notes`.
Status add_failed_pods_section(Page& page, const std::string& path, int limit,
                               const explain::NarratorConfig& narrator = {},
                               const explain::NarratorInfo& narrator_info = {},
                               std::vector<std::string>* notes = nullptr,
                               const NarrationProgress& progress = {});

// Decision records of fleet dispatch: the first `limit` that moved or deferred a job, told,
// with their charts and checked narrations (section_fleet_decisions.cpp); nothing when the
// file holds no dispatch record.
Status add_fleet_decisions_section(Page& page, const std::string& path, int limit,
                                   const explain::NarratorConfig& narrator = {},
                                   const explain::NarratorInfo& narrator_info = {},
                                   std::vector<std::string>* notes = nullptr,
                                   const NarrationProgress& progress = {});

// One told decision as the report shows it: `text` (the record's sentences, as `name`'s
// section words them) beside the record's chart, with its narration of `facts` once the guard
// accepts it (a narrator's notes go to `notes`, each after `name`) (section_failed_pods.cpp).
std::string told_decision_html(std::string_view css_class, const std::string& name,
                               const std::string& origin, const std::string& text,
                               const nlohmann::json& record, const nlohmann::json& facts,
                               const explain::NarratorConfig& narrator,
                               const explain::NarratorInfo& narrator_info,
                               std::vector<std::string>* notes);

// An accepted narration as the report shows it, with the model and the facts it was checked
// against (section_failed_pods.cpp).
std::string narration_html(const explain::CheckedNarration& told,
                           const explain::NarratorInfo& info);

}  // namespace greensched::report
