#include "greensched/report/section.hpp"

#include "greensched/report/stat.hpp"

namespace greensched::report {

void add_means(HtmlTable::Row& row, const Table& t, const std::vector<MeanColumn>& cols,
               const std::vector<std::size_t>& rows, std::vector<std::vector<double>>& means) {
  for (std::size_t c = 0; c < cols.size(); ++c) {
    std::vector<double> values;
    for (std::size_t r : rows) values.push_back(t.num(cols[c].column)[r]);
    const double mean = stat_of(values).mean * cols[c].scale;
    means[c].push_back(mean);
    row.cells.push_back(format_value(mean, cols[c].decimals));
  }
}

void mark_best_means(HtmlTable& table, const std::vector<MeanColumn>& cols,
                     const std::vector<std::vector<double>>& means, std::size_t first) {
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (cols[c].better != 0) table.mark_best(c + first, means[c], cols[c].better > 0);
  }
}

}  // namespace greensched::report
