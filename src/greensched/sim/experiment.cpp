#include "greensched/sim/experiment.hpp"

#include <algorithm>
#include <charconv>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "greensched/core/parallel_for.hpp"
#include "greensched/policy/registry.hpp"

namespace greensched::sim {

Result<std::vector<RunResult>> run_experiments(const trace::Workload& workload,
                                               const ExperimentPlan& plan,
                                               const ProgressFn& progress) {
  std::vector<RunSpec> specs;
  for (const std::string& policy : plan.policies) {
    for (std::size_t k = 0; k < plan.seeds.size(); ++k) {
      RunSpec spec(policy, plan.seeds[k], plan.tune, plan.gpu_select);
      spec.record = plan.record;
      spec.snapshot_pct = k == 0 ? plan.snapshot_pct : -1;
      spec.migrate_budget_pct = plan.migrate_budget_pct;
      spec.move_limits = plan.move_limits;
      specs.push_back(std::move(spec));
    }
  }
  if (plan.first_run > 0 || plan.end_run < specs.size()) {
    const std::size_t end = std::min(plan.end_run, specs.size());
    specs = std::vector<RunSpec>(
        specs.begin() + static_cast<std::ptrdiff_t>(std::min(plan.first_run, end)),
        specs.begin() + static_cast<std::ptrdiff_t>(end));
  }
  auto scenario = make_scenario(workload, plan.power_model);
  if (!scenario.ok()) return Error{scenario.error()};

  std::vector<RunResult> out(specs.size());
  std::mutex progress_mutex;
  std::size_t done = 0;
  Status s = parallel_for(specs.size(), plan.jobs, [&](std::size_t i) -> Status {
    auto r = run_inflation(scenario.value(), specs[i]);
    if (!r.ok()) return Error{r.error()};
    out[i] = std::move(r.value());
    std::lock_guard<std::mutex> lock(progress_mutex);
    ++done;
    if (progress) progress(done, specs.size(), out[i]);
    return Status::Ok();
  });
  if (!s.ok()) return Error{s.message()};
  return out;
}

}  // namespace greensched::sim

namespace greensched::sim {
std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t comma = text.find(',');
    parts.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return parts;
    text.remove_prefix(comma + 1);
  }
}

Result<std::vector<double>> parse_number_list(std::string_view text, std::string_view option,
                                              double min, double max, bool min_excluded) {
  std::vector<double> out;
  for (std::string_view part : split_commas(text)) {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    const bool in_range = (min_excluded ? v > min : v >= min) && v <= max;
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || !in_range) {
      return Error{fmt::format("{}: '{}' is not a number in {}{}, {}]", option, part,
                               min_excluded ? "(" : "[", min, max)};
    }
    out.push_back(v);
  }
  return out;
}

namespace {

std::optional<uint64_t> to_u64(std::string_view s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

Result<std::vector<uint64_t>> parse_seed_list(std::string_view text) {
  std::vector<uint64_t> seeds;
  for (std::string_view part : split_commas(text)) {
    const std::size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      auto v = to_u64(part);
      if (!v) return Error{fmt::format("seeds: '{}' is not a non-negative integer", part)};
      seeds.push_back(*v);
      continue;
    }
    auto lo = to_u64(part.substr(0, dash));
    auto hi = to_u64(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) {
      return Error{fmt::format("seeds: '{}' is not a range LOW-HIGH with LOW <= HIGH", part)};
    }
    if (*hi - *lo >= 100000) return Error{fmt::format("seeds: range '{}' is too long", part)};
    for (uint64_t s = *lo; s <= *hi; ++s) seeds.push_back(s);
  }
  return seeds;
}

Result<std::vector<std::string>> parse_policy_list(std::string_view text) {
  std::vector<std::string> names;
  for (std::string_view part : split_commas(text)) {
    if (part == "all") {
      for (const auto& p : policy::policy_catalog()) names.emplace_back(p.name);
      continue;
    }
    auto terms = policy::parse_policy_spec(part);
    if (!terms.ok()) return Error{fmt::format("policy: {}", terms.error())};
    names.emplace_back(part);
  }
  return names;
}

}  // namespace greensched::sim
