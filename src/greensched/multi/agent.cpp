#include "greensched/multi/agent.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "greensched/multi/agents/agents.hpp"

namespace greensched::multi {

Status DispatchAgent::restore(const nlohmann::json& state, int /*n_sites*/) {
  if (state.is_null()) return Status::Ok();
  return Error{fmt::format("agent {} keeps no state to restore", name())};
}

double transfer_seconds(const FleetView& view, const JobInfo& job, int site) {
  if (site == job.home_site) return 0.0;
  return view.fleet().sites[site].network.transfer_seconds(job.data_gb);
}

nlohmann::json alternative_json(const Alternative& a, const Fleet& fleet, int64_t now_s) {
  nlohmann::json j{{"site", fleet.sites[a.site].name},
                   {"start_offset_s", a.start_s - now_s},
                   {"forecast_ci", a.forecast_ci},
                   {"cost", a.cost}};
  if (std::isfinite(a.expected_g)) j["expected_g"] = a.expected_g;
  if (std::isfinite(a.kw)) j["kw"] = a.kw;
  return j;
}

nlohmann::json carbon_curve_json(const FleetView& view, int64_t until_s, bool actual,
                                 int64_t step_s) {
  const int64_t now = view.now_s();
  const int64_t points = std::clamp<int64_t>((until_s - now) / step_s + 1, 1, 49);
  nlohmann::json sites = nlohmann::json::object();
  for (const SiteSpec& site : view.fleet().sites) {
    nlohmann::json values = nlohmann::json::array();
    for (int64_t k = 0; k < points; ++k) {
      const int64_t t = view.epoch_s(now + k * step_s);
      const double v =
          actual ? site.carbon.at(t) : view.forecaster().at(site.carbon, view.epoch_s(now), t);
      values.push_back(std::round(v * 10.0) / 10.0);
    }
    sites[site.name] = std::move(values);
  }
  return {{"step_s", step_s}, {"from_s", now}, {"sites", std::move(sites)}};
}

bool has_room(const FleetView& view, int site, const PodSpec& pod, double headroom) {
  const int64_t capacity = view.gpu_capacity_milli(site);
  if (capacity == 0 && pod.needs_gpu()) return false;
  if (capacity > 0) {
    const double share = static_cast<double>(pod.total_gpu_milli()) / static_cast<double>(capacity);
    if (view.load(site) + share > 1.0 - headroom + 1e-12) return false;
  }
  return view.host_fill_with(site, pod, view.now_s()) <= 1.0 - headroom + 1e-12;
}

bool has_be_room(const FleetView& view, int site, const PodSpec& pod, int64_t start,
                 double max_fill) {
  const int64_t capacity = view.gpu_capacity_milli(site);
  if (capacity == 0 && pod.needs_gpu()) return false;
  if (capacity > 0) {
    const double share = static_cast<double>(pod.total_gpu_milli()) / static_cast<double>(capacity);
    if (view.load_at(site, start) + view.ls_reserve(site, start) + share > max_fill + 1e-12) {
      return false;
    }
  }
  return view.host_fill_with(site, pod, start) <= max_fill + 1e-12;
}

std::vector<int> all_sites(const FleetView& view) {
  std::vector<int> sites(view.fleet().sites.size());
  for (std::size_t i = 0; i < sites.size(); ++i) sites[i] = static_cast<int>(i);
  return sites;
}

std::vector<int> ls_feasible_sites(const FleetView& view, const JobInfo& job) {
  std::vector<int> sites;
  for (int site : all_sites(view)) {
    if (site == job.home_site) {
      sites.push_back(site);
      continue;
    }
    // A node that must wake starts waking when the job is dispatched, during the transfer; an
    // empty one is held. Only a site that can keep a node for it is an option.
    const double wait =
        std::max(transfer_seconds(view, job, site),
                 view.fits_now(site, *job.pod) ? 0.0 : static_cast<double>(view.wake_delay_s()));
    if (wait <= static_cast<double>(view.ls_bound_s()) && view.can_hold(site, *job.pod)) {
      sites.push_back(site);
    }
  }
  return sites;
}

std::vector<int64_t> start_candidates(const JobInfo& job, int64_t ready, int64_t step_s) {
  std::vector<int64_t> starts;
  start_candidates(job, ready, step_s, starts);
  return starts;
}

void start_candidates(const JobInfo& job, int64_t ready, int64_t step_s,
                      std::vector<int64_t>& starts) {
  starts.assign(1, ready);
  if (job.latency_sensitive || step_s <= 0) return;
  const int64_t latest = job.submit_s + job.slack_s;
  for (int64_t t = (ready / step_s + 1) * step_s; t <= latest; t += step_s) starts.push_back(t);
}

SignalView FleetView::expected_signal(int site, int64_t from_s, int64_t to_s, double) const {
  const SiteSpec& spec = fleet().sites[site];
  const int64_t now = epoch_s(now_s());
  SignalView v;
  v.carbon_g_per_kwh = forecaster().mean(spec.carbon, now, epoch_s(from_s), epoch_s(to_s));
  if (spec.price)
    v.price_per_kwh = forecaster().mean(*spec.price, now, epoch_s(from_s), epoch_s(to_s));
  return v;
}

double controller_carbon_price_usd_per_t(std::string_view agent, const AgentOptions& options) {
  return agent == "green-cost-carbon" ? options.carbon_price_usd_per_t : 0.0;
}

std::vector<std::string> agent_names() {
  return {"local",           "round-robin", "least-loaded", "lowest-carbon-now",
          "carbon-forecast", "green",       "green-plan"};
}

std::vector<std::string> known_agent_names() {
  std::vector<std::string> names = agent_names();
  names.insert(names.end(), {"green-cost", "green-cost-carbon"});
  return names;
}

bool agent_reads_forecasts(std::string_view name) {
  return name == "carbon-forecast" || name == "green" || name == "green-plan";
}

Result<std::unique_ptr<DispatchAgent>> make_agent(std::string_view name,
                                                  const AgentOptions& options) {
  if (name == "local") return make_local_agent();
  if (name == "round-robin") return make_round_robin_agent();
  if (name == "least-loaded") return make_least_loaded_agent();
  if (name == "lowest-carbon-now") return make_lowest_carbon_now_agent();
  if (name == "carbon-forecast") return make_carbon_forecast_agent(options);
  if (name == "green") return make_green_agent(options);
  if (name == "green-plan") return make_green_agent(options, /*plan=*/true);
  if (name == "bound-schedule") {
    if (!options.schedule) {
      return Error{
          "agent bound-schedule runs the fleet bound's schedule: use multi --bound "
          "--bound-schedule"};
    }
    return make_bound_schedule_agent(options.schedule);
  }
  if (name == "green-cost" || name == "green-cost-carbon") {
    AgentOptions o = options;
    o.objective = name == "green-cost" ? AgentOptions::Objective::kCost
                                       : AgentOptions::Objective::kCostCarbon;
    return make_green_agent(o);
  }
  std::string known;
  for (const std::string& n : known_agent_names()) known += known.empty() ? n : ", " + n;
  return Error{fmt::format("unknown agent '{}' (known: {})", name, known)};
}

}  // namespace greensched::multi
