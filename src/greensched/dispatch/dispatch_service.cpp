#include "greensched/dispatch/dispatch_service.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "greensched/core/prometheus_text.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/dispatch/workload_request.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/multi/forecast.hpp"
#include "greensched/serve/json_fields.hpp"
#include "greensched/sim/decision_record.hpp"
#include "greensched/trace/builtin_workload.hpp"

namespace greensched::dispatch {

using nlohmann::json;

namespace {

// Forecasts fetched over HTTP are forecasts already: read as they are. The fleet file's
// series are history: forecast from the past, as `multi` does.
class MixedForecaster final : public multi::Forecaster {
 public:
  explicit MixedForecaster(std::set<uint64_t> forecast_ids)
      : forecast_ids_(std::move(forecast_ids)),
        past_(multi::make_same_hour_forecaster()),
        given_(multi::make_oracle_forecaster()) {}
  double at(const multi::TimeSeries& s, int64_t now, int64_t t) const override {
    return pick(s).at(s, now, t);
  }
  double mean(const multi::TimeSeries& s, int64_t now, int64_t from, int64_t to) const override {
    return pick(s).mean(s, now, from, to);
  }

 private:
  const multi::Forecaster& pick(const multi::TimeSeries& s) const {
    return forecast_ids_.contains(s.id()) ? *given_ : *past_;
  }
  std::set<uint64_t> forecast_ids_;
  std::unique_ptr<multi::Forecaster> past_, given_;
};

std::string utc(int64_t epoch_s) {
  std::string t = format_utc_time(epoch_s);
  t[10] = 'T';
  return t + "Z";
}

// What the agent saw of a job (JobInfo, with its largest pod's GPUs): journalled with the
// decision, so that a restart teaches the agent what it had learned (DispatchAgent::observe).
json observed_json(const multi::JobInfo& job, const std::string& home) {
  return {{"home", home},
          {"submit_s", job.submit_s},
          {"duration_s", job.duration_s},
          {"slack_s", job.slack_s},
          {"data_gb", job.data_gb},
          {"latency_sensitive", job.latency_sensitive},
          {"again", job.again},
          {"num_gpu", job.pod->needs_gpu() ? job.pod->num_gpu : 0},
          {"gpu_milli", job.pod->needs_gpu() ? job.pod->gpu_milli : 0}};
}

// The job of observed_json, its pod in *pod; none when it is not one (a hand-edited line) or
// its home is no longer in the fleet.
std::optional<multi::JobInfo> observed_job(const json& o, const multi::Fleet& fleet, PodSpec* pod) {
  if (!o.is_object()) return std::nullopt;
  for (const char* key : {"submit_s", "duration_s", "slack_s", "num_gpu", "gpu_milli"}) {
    if (!o.contains(key) || !o[key].is_number_integer()) return std::nullopt;
  }
  if (!o.contains("data_gb") || !o["data_gb"].is_number() || !o.contains("home") ||
      !o["home"].is_string()) {
    return std::nullopt;
  }
  multi::JobInfo job;
  job.home_site = -1;
  for (std::size_t i = 0; i < fleet.sites.size(); ++i) {
    if (fleet.sites[i].name == o["home"].get<std::string>()) job.home_site = static_cast<int>(i);
  }
  if (job.home_site < 0) return std::nullopt;
  pod->num_gpu = o["num_gpu"].get<int>();
  pod->gpu_milli = o["gpu_milli"].get<int32_t>();
  job.pod = pod;
  job.submit_s = o["submit_s"].get<int64_t>();
  job.duration_s = o["duration_s"].get<int64_t>();
  job.slack_s = o["slack_s"].get<int64_t>();
  job.data_gb = o["data_gb"].get<double>();
  job.latency_sensitive = o.value("latency_sensitive", false);
  job.again = o.value("again", false);
  return job;
}

}  // namespace

namespace {

const std::vector<double> kDecisionBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                           0.1,    0.25,  0.5,    1,     2,    5};
const std::vector<double> kReadBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

}  // namespace

DispatchService::DispatchService(DispatchConfig config)
    : config_(std::move(config)),
      sites_(config_.fleet.sites.size()),
      decision_seconds_(kDecisionBuckets),
      read_seconds_(config_.fleet.sites.size(), PrometheusHistogram(kReadBuckets)) {}

Result<std::unique_ptr<DispatchService>> DispatchService::create(DispatchConfig config,
                                                                 int64_t wall_now_s) {
  if (config.fleet.sites.empty()) return Error{"dispatch: the fleet has no sites"};
  if (!(config.refresh_seconds > 0)) return Error{"dispatch: the refresh period must be > 0"};
  if (!(config.cluster_timeout_seconds > 0)) {
    return Error{"dispatch: the cluster read timeout must be > 0"};
  }
  config.sources.resize(config.fleet.sites.size());
  config.forecasts.resize(config.fleet.sites.size());
  for (std::size_t i = 0; i < config.fleet.sites.size(); ++i) {
    if (!config.sources[i]) {
      config.sources[i] = make_static_source(config.fleet.sites[i].nodes, config.fleet.models);
    }
  }
  auto agent = multi::make_agent(config.agent, config.agent_options);
  if (!agent.ok()) return Error{agent.error()};
  auto capacity_agent = multi::make_agent("least-loaded", config.agent_options);
  if (!capacity_agent.ok()) return Error{capacity_agent.error()};
  if (!config.target) {
    config.target = frag::build_target_workload(trace::builtin_openb_workload().pods);
  }
  std::unique_ptr<DispatchService> service(new DispatchService(std::move(config)));
  service->agent_ = std::move(agent.value());
  service->capacity_agent_ = std::move(capacity_agent.value());
  DispatchConfig& c = service->config_;
  if (!c.journal_path.empty()) {
    if (!c.journal_lock) {
      auto lock = JournalLock::try_acquire(c.journal_path);
      if (!lock.ok()) return Error{lock.error(), lock.code()};
      c.journal_lock = std::move(lock.value());
    }
    JournalOptions options;
    options.path = c.journal_path;
    options.repair = c.journal_repair;
    options.compact_bytes = c.journal_compact_bytes;
    options.compact_age_s = c.journal_compact_age_s;
    options.warn = c.warn;
    std::vector<json> records;
    auto journal = DecisionJournal::open(std::move(options), wall_now_s, &records);
    if (!journal.ok()) return Error{journal.error(), journal.code()};
    service->journal_ = std::move(journal.value());
    service->replay(records, wall_now_s);
    service->compact_if_due(wall_now_s);
  }
  ReaderOptions reader;
  reader.deadline = std::chrono::milliseconds(
      std::max<int64_t>(1, std::llround(c.cluster_timeout_seconds * 1000)));
  reader.period =
      std::chrono::milliseconds(std::max<int64_t>(1, std::llround(c.refresh_seconds * 1000)));
  auto models = std::make_shared<SharedModels>();
  models->models = c.fleet.models;
  for (std::size_t i = 0; i < c.fleet.sites.size(); ++i) {
    serve::StateOptions options;
    options.policy = c.fleet.sites[i].policy;
    options.target = *c.target;
    options.power_model = c.power_model;
    options.seed = c.seed + i;
    service->readers_.push_back(
        std::make_unique<ClusterReader>(c.fleet.sites[i].name, std::move(c.sources[i]),
                                        c.forecasts[i], std::move(options), models, reader));
  }
  // The first reads, in parallel: a read and a forecast fetch, each within the deadline.
  const auto until =
      std::chrono::steady_clock::now() + 2 * reader.deadline + std::chrono::milliseconds(100);
  for (auto& r : service->readers_) (void)r->wait_first_read(until);
  std::lock_guard lock(service->mu_);
  service->take_reads();
  return service;
}

void DispatchService::take_reads() {
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    Site& site = sites_[i];
    ReadResult r = readers_[i]->take();
    for (double seconds : r.read_seconds) read_seconds_[i].observe(seconds);
    if (r.fresh_state) site.state = std::move(r.fresh_state);
    site.error = r.error;
    site.degraded = r.degraded;
    site.age_s = r.age_s;
    if (r.fresh_forecast) {
      site.forecast = std::move(*r.fresh_forecast);
      config_.fleet.sites[i].carbon = site.forecast;
    }
    site.forecast_error = r.forecast_error;
  }
}

json DispatchService::health_json(std::size_t i) const {
  const Site& s = sites_[i];
  json h{{"name", config_.fleet.sites[i].name},
         {"up", s.state != nullptr},
         {"degraded", s.state != nullptr && !s.degraded.empty()}};
  if (s.state) h["age_s"] = std::round(s.age_s * 1000) / 1000;
  if (!s.degraded.empty()) {
    h["error"] = s.degraded;
  } else if (!s.state) {
    h["error"] = s.error.empty() ? "not read yet" : s.error;
  }
  return h;
}

const multi::TimeSeries* DispatchService::carbon_series(std::size_t site, int64_t signal_now,
                                                        std::string* why) const {
  if (!config_.forecasts[site]) return &config_.fleet.sites[site].carbon;
  const Site& s = sites_[site];
  if (s.forecast.empty()) {
    *why = s.forecast_error.empty() ? "no forecast yet" : s.forecast_error;
    return nullptr;
  }
  if (signal_now >= s.forecast.end_s() || signal_now < s.forecast.start_s()) {
    *why = fmt::format("its forecast covers {} to {}, not now ({})", utc(s.forecast.start_s()),
                       utc(s.forecast.end_s()), utc(signal_now));
    return nullptr;
  }
  return &s.forecast;
}

void DispatchService::forget(int64_t wall_now_s) {
  std::erase_if(remembered_, [&](const auto& kv) { return kv.second.until_wall_s <= wall_now_s; });
}

Result<json> DispatchService::decide(const json& request, int64_t wall_now_s, int* status) {
  if (!request.is_object()) return Error{"the body must be a JSON object"};
  const json* workload_json = serve::find_field(request, "workload");
  if (workload_json == nullptr) return Error{"workload: missing (the Kueue Workload object)"};
  auto parsed = parse_workload(*workload_json);
  if (!parsed.ok()) return Error{parsed.error()};
  const WorkloadRequest& w = parsed.value();
  forget(wall_now_s);
  const std::size_t n = sites_.size();
  const auto site_index = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < n; ++i) {
      if (config_.fleet.sites[i].name == name) return i;
    }
    return std::nullopt;
  };
  std::vector<bool> allowed(n, true);
  if (const json* clusters = serve::find_field(request, "clusters"); clusters != nullptr) {
    if (!clusters->is_array()) return Error{"clusters: expected an array of cluster names"};
    std::fill(allowed.begin(), allowed.end(), false);
    for (const json& c : *clusters) {
      if (!c.is_string()) return Error{"clusters: expected an array of cluster names"};
      auto i = site_index(c.get<std::string>());
      if (!i) return Error{fmt::format("clusters: unknown cluster '{}'", c.get<std::string>())};
      allowed[*i] = true;
    }
  }
  if (const json* exclude = serve::find_field(request, "exclude"); exclude != nullptr) {
    if (!exclude->is_array()) return Error{"exclude: expected an array of cluster names"};
    for (const json& c : *exclude) {
      if (!c.is_string()) return Error{"exclude: expected an array of cluster names"};
      auto i = site_index(c.get<std::string>());
      if (!i) return Error{fmt::format("exclude: unknown cluster '{}'", c.get<std::string>())};
      allowed[*i] = false;
    }
  }
  // Re-nomination: the workload's decision is made again without the cluster it was sent to.
  std::optional<json> renomination;
  if (const json* re = serve::find_field(request, "renominate"); re != nullptr) {
    if (!re->is_object()) return Error{"renominate: expected {\"reason\", \"from\"}"};
    auto reason = serve::optional_string(*re, "reason", "renominate");
    if (!reason.ok()) return reason.status().error();
    const std::string why = reason.value().value_or("");
    if (std::find(kRenominationReasons.begin(), kRenominationReasons.end(), why) ==
        kRenominationReasons.end()) {
      return Error{fmt::format("renominate.reason: '{}' is not one of {}", why,
                               fmt::join(kRenominationReasons, ", "))};
    }
    auto from = serve::optional_string(*re, "from", "renominate");
    if (!from.ok()) return from.status().error();
    if (!from.value()) return Error{"renominate.from: missing (the cluster it leaves)"};
    auto i = site_index(*from.value());
    if (!i) return Error{fmt::format("renominate.from: unknown cluster '{}'", *from.value())};
    allowed[*i] = false;
    renomination = json{{"reason", why}, {"from", *from.value()}};
  }
  if (std::find(allowed.begin(), allowed.end(), true) == allowed.end()) {
    *status = 409;
    return Error{renomination ? "no cluster remains to renominate it to: every cluster it may go "
                                "to is excluded or the one it leaves"
                              : "no cluster remains: every cluster it may go to is excluded"};
  }
  // A standing decision is given again while its cluster may still be chosen; a dispatcher
  // that leaves that cluster out (its worker is unreachable) gets a new one, as does a
  // re-nomination.
  if (auto it = remembered_.find(w.key); !renomination && it != remembered_.end() &&
                                         it->second.uid == w.uid &&
                                         allowed[it->second.commitment.site]) {
    json again = it->second.reply;
    again["repeated"] = true;
    // The same start, counted from now.
    if (const json* start = serve::find_field(again, "earliest_start");
        start != nullptr && start->is_string()) {
      if (auto t = parse_utc_time(start->get<std::string>()); t.ok()) {
        again["start_after_s"] = std::max<int64_t>(0, t.value() - wall_now_s);
      }
    }
    return again;
  }

  std::string home_name = w.home;
  if (home_name.empty()) {
    auto h = serve::optional_string(request, "home", "request");
    if (!h.ok()) return h.status().error();
    home_name = h.value().value_or("");
  }
  std::optional<std::size_t> home;
  if (!home_name.empty()) {
    home = site_index(home_name);
    // A home it may not go to (its cluster is down) is still where its data is.
    if (!home) return Error{fmt::format("home: unknown cluster '{}'", home_name)};
  }

  take_reads();
  const int64_t now = config_.clock.signal_s(wall_now_s);
  std::vector<std::string> degraded;
  json degraded_clusters = json::array();
  std::vector<serve::ClusterState*> states(n, nullptr);
  bool capacity_only = false;
  // A degraded cluster is left out while another it may go to is healthy; when none is, the
  // decision is made on the degraded ones' last known states.
  bool any_healthy = false;
  for (std::size_t i = 0; i < n; ++i) {
    any_healthy = any_healthy || (allowed[i] && sites_[i].state && sites_[i].degraded.empty());
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!allowed[i]) continue;
    const std::string& name = config_.fleet.sites[i].name;
    const Site& site = sites_[i];
    if (!site.state) {
      degraded_clusters.push_back(health_json(i));
      degraded.push_back(fmt::format("cluster {} left out: {}", name,
                                     degraded_clusters.back()["error"].get<std::string>()));
      continue;
    }
    if (!site.degraded.empty()) {
      degraded_clusters.push_back(health_json(i));
      if (any_healthy) {
        degraded.push_back(
            fmt::format("cluster {} left out (degraded): {}; its state as read "
                        "{:.1f} s ago",
                        name, site.degraded, site.age_s));
        continue;
      }
      degraded.push_back(
          fmt::format("cluster {} degraded: {}; decided on its state as read "
                      "{:.1f} s ago",
                      name, site.degraded, site.age_s));
    }
    states[i] = site.state.get();
    std::string why;
    if (carbon_series(i, now, &why) == nullptr) {
      capacity_only = true;
      degraded.push_back(fmt::format("no carbon signal for {}: {}", name, why));
    }
  }
  if (!home) {
    for (std::size_t i = 0; i < n && !home; ++i) {
      if (allowed[i]) home = i;
    }
  }
  std::optional<std::size_t> any_state;
  for (std::size_t i = 0; i < n && !any_state; ++i) {
    if (states[i] != nullptr) any_state = i;
  }
  if (!any_state) {
    return Error{fmt::format("no cluster it may go to can be read ({})", fmt::join(degraded, "; ")),
                 ErrorCode::kIo};
  }

  const PodSetRequest& largest = w.largest();
  std::vector<PodSpec> pods(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (states[i] != nullptr) pods[i] = states[i]->pod_spec(largest.pod);
  }
  const int total_pods = w.total_pods();
  multi::JobInfo job;
  job.index = decisions_;
  job.pod = &pods[states[*home] != nullptr ? *home : *any_state];
  job.home_site = static_cast<int>(*home);
  job.latency_sensitive = w.latency_sensitive;
  job.submit_s = now;
  job.duration_s = w.duration_s.value_or(config_.default_duration_s);
  job.slack_s = w.latency_sensitive ? 0 : w.slack_s.value_or(config_.default_slack_s);
  job.data_gb = total_pods > 0 ? w.data_gb / total_pods : 0.0;
  job.again = renomination.has_value();

  // Its own earlier decision (the one a re-nomination leaves) no longer counts anywhere.
  std::vector<Commitment> committed;
  for (const auto& [key, r] : remembered_) {
    if (key != w.key) committed.push_back(r.commitment);
  }
  std::set<uint64_t> forecast_ids;
  for (std::size_t i = 0; i < n; ++i) {
    if (config_.forecasts[i] && !sites_[i].forecast.empty()) {
      forecast_ids.insert(config_.fleet.sites[i].carbon.id());
    }
  }
  MixedForecaster forecaster(std::move(forecast_ids));
  std::vector<std::vector<uint32_t>> ranks(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (states[i] != nullptr)
      ranks[i] = site_tie_rank(states[i]->cluster().size(), config_.seed, i);
  }
  LiveFleetView view(config_.fleet, states, pods, std::move(ranks), now, forecaster, committed,
                     config_.live, config_.seed + decisions_);
  const std::string agent_name = capacity_only ? "least-loaded" : config_.agent;
  multi::DispatchAgent& agent = capacity_only ? *capacity_agent_ : *agent_;
  multi::Dispatch d = agent.decide(job, view);
  if (d.site < 0 || static_cast<std::size_t>(d.site) >= n || states[d.site] == nullptr) {
    d.site = static_cast<int>(states[*home] != nullptr ? *home : *any_state);
  }
  d.not_before_s = std::max(d.not_before_s, now);
  if (!w.latency_sensitive) d.not_before_s = std::min(d.not_before_s, now + job.slack_s);

  // Ranked: the chosen cluster, then the others the agent priced, cheapest first, then the
  // rest it may go to.
  std::vector<multi::Alternative> others;
  for (const multi::Alternative& a : d.alternatives) {
    if (a.site != d.site) others.push_back(a);
  }
  std::stable_sort(others.begin(), others.end(),
                   [](const auto& a, const auto& b) { return a.cost < b.cost; });
  json ranking = json::array();
  const auto entry = [&](int site, std::optional<multi::Alternative> a, std::string note) {
    json e{{"cluster", config_.fleet.sites[site].name}};
    if (a) {
      e["start_offset_s"] = a->start_s - now;
      e["forecast_ci"] = a->forecast_ci;
      e["expected_per_pod"] = a->cost;
    }
    if (!note.empty()) e["note"] = note;
    return e;
  };
  std::optional<multi::Alternative> chosen;
  for (const multi::Alternative& a : d.alternatives) {
    if (a.site == d.site) chosen = a;
  }
  ranking.push_back(entry(d.site, chosen, "chosen"));
  std::set<int> listed{d.site};
  for (const multi::Alternative& a : others) {
    if (listed.insert(a.site).second) ranking.push_back(entry(a.site, a, ""));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!allowed[i] || listed.contains(static_cast<int>(i))) continue;
    ranking.push_back(entry(static_cast<int>(i), std::nullopt,
                            states[i] == nullptr ? (sites_[i].state ? "degraded" : "not readable")
                                                 : "no room or cannot host it"));
  }

  const int64_t start_wall = config_.clock.wall_s(d.not_before_s);
  const std::string& chosen_name = config_.fleet.sites[d.site].name;
  json reply;
  reply["workload"] = w.key;
  reply["clusters"] = json::array({chosen_name});
  reply["ranking"] = ranking;
  reply["earliest_start"] = utc(std::max(start_wall, wall_now_s));
  reply["start_after_s"] = std::max<int64_t>(0, start_wall - wall_now_s);
  reply["signal_time"] = utc(now);
  reply["deferred_signal_s"] = d.not_before_s - now;
  reply["agent"] = agent_name;
  reply["mode"] = capacity_only ? "capacity-only" : "carbon";
  reply["reason"] = capacity_only ? "capacity only (no carbon signal): " + d.reason : d.reason;
  reply["degraded"] = degraded;
  reply["degraded_clusters"] = degraded_clusters;
  reply["repeated"] = false;
  reply["renominated"] = renomination.has_value();
  if (renomination) reply["renomination"] = *renomination;

  int64_t gpu_milli = 0;
  for (const PodSetRequest& s : w.pod_sets) {
    gpu_milli += static_cast<int64_t>(s.count) * s.pod.num_gpu * std::max(s.pod.gpu_milli, 0);
  }
  Remembered r;
  r.uid = w.uid;
  r.start_wall_s = std::max(start_wall, wall_now_s);
  r.until_wall_s = r.start_wall_s + config_.commit_seconds;
  r.commitment = Commitment{d.site, d.not_before_s,
                            d.not_before_s + std::max<int64_t>(job.duration_s, 1), gpu_milli};
  r.reply = reply;

  // The journal's record: a dispatch record `greensched explain` reads, with what a restart
  // needs.
  json record;
  record["kind"] = "dispatch";
  record["agent"] = agent_name;
  record["pod"] = w.key;
  record["qos"] = w.latency_sensitive ? "LS" : "BE";
  record["request"] = sim::request_json(
      *job.pod, states[*home] != nullptr ? states[*home]->models() : states[*any_state]->models());
  record["home_site"] = config_.fleet.sites[*home].name;
  record["site"] = chosen_name;
  record["submit_s"] = now;
  record["submit_utc"] = format_utc_time(now);
  record["deferred_s"] = d.not_before_s - now;
  // Seconds its data takes to move there (0 at home), as the simulator's record says it.
  record["transfer_s"] =
      d.site == static_cast<int>(*home)
          ? int64_t{0}
          : static_cast<int64_t>(
                std::ceil(config_.fleet.sites[d.site].network.transfer_seconds(job.data_gb)));
  record["slack_s"] = job.slack_s;
  record["reason"] = reply["reason"];
  json ci = json::object();
  for (std::size_t i = 0; i < n; ++i) {
    std::string why;
    if (allowed[i]) {
      if (const multi::TimeSeries* s = carbon_series(i, now, &why)) {
        ci[config_.fleet.sites[i].name] = s->at(now);
      }
    }
  }
  record["carbon_now"] = ci;
  json alternatives = json::array();
  for (const multi::Alternative& a : d.alternatives) {
    alternatives.push_back(multi::alternative_json(a, config_.fleet, now));
  }
  record["alternatives"] = alternatives;
  if (d.home_now) record["home_now"] = multi::alternative_json(*d.home_now, config_.fleet, now);
  if (d.now_best) record["now_best"] = multi::alternative_json(*d.now_best, config_.fleet, now);
  record["step"] = decisions_;
  if (renomination) record["renominated"] = *renomination;
  // Where each site's carbon signal came from: its forecast's URL, else the fleet file's series.
  json carbon_sources = json::object();
  for (std::size_t i = 0; i < n; ++i) {
    carbon_sources[config_.fleet.sites[i].name] =
        config_.forecasts[i] ? config_.forecasts[i]->url : config_.fleet.sites[i].carbon_source;
  }
  record["service"] = {{"uid", w.uid},
                       {"carbon_sources", carbon_sources},
                       {"wall_s", wall_now_s},
                       {"observed", observed_json(job, config_.fleet.sites[*home].name)},
                       {"start_wall_s", r.start_wall_s},
                       {"until_wall_s", r.until_wall_s},
                       {"commit",
                        {{"site", chosen_name},
                         {"from_s", r.commitment.from_s},
                         {"to_s", r.commitment.to_s},
                         {"gpu_milli", r.commitment.gpu_milli}}},
                       {"reply", reply}};
  // Answered only once it is in the journal: a restart gives the same answer.
  if (journal_) {
    if (Status s = journal_->append(record); !s.ok()) return s.error();
  }
  r.record = std::move(record);
  remembered_[w.key] = std::move(r);
  ++decisions_;
  ++decisions_by_cluster_mode_[{chosen_name, reply["mode"].get<std::string>()}];
  if (renomination) ++renominations_by_reason_[(*renomination)["reason"].get<std::string>()];
  compact_if_due(wall_now_s);
  return reply;
}

DispatchReply DispatchService::dispatch(std::string_view body, int64_t wall_now_s) {
  const auto t0 = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  DispatchReply out;
  auto request = serve::parse_request_json(body);
  if (!request.ok()) {
    out.status = 400;
    out.body = {{"error", request.error()}};
  } else {
    int status = 0;
    auto decided = decide(request.value(), wall_now_s, &status);
    if (decided.ok()) {
      out.body = std::move(decided.value());
    } else {
      out.status = status != 0 ? status : decided.status().code() == ErrorCode::kIo ? 503 : 400;
      out.body = {{"error", decided.error()}};
    }
  }
  ++requests_by_code_[std::to_string(out.status)];
  decision_seconds_.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return out;
}

json DispatchService::clusters(int64_t wall_now_s) {
  std::lock_guard lock(mu_);
  take_reads();
  forget(wall_now_s);
  const int64_t now = config_.clock.signal_s(wall_now_s);
  json out = json::array();
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    const Site& s = sites_[i];
    json c;
    c["name"] = config_.fleet.sites[i].name;
    c["source"] = readers_[i]->describe();
    json health = health_json(i);
    health.erase("name");
    c.update(health);
    if (s.state) {
      const Cluster& cl = s.state->cluster();
      c["nodes"] = cl.size();
      c["gpu_capacity_milli"] = cl.total_gpu_milli();
      c["gpu_allocated_milli"] = cl.allocated_gpu_milli();
      c["pods"] = s.state->pods().size();
    }
    std::string why;
    const multi::TimeSeries* series = carbon_series(i, now, &why);
    c["carbon_source"] =
        config_.forecasts[i] ? config_.forecasts[i]->url : config_.fleet.sites[i].carbon_source;
    if (series != nullptr) {
      c["carbon_now"] = series->at(now);
    } else {
      c["carbon_error"] = why;
    }
    json committed = json::array();
    for (const auto& [key, r] : remembered_) {
      if (r.commitment.site != static_cast<int>(i)) continue;
      committed.push_back({{"workload", key},
                           {"from", utc(r.commitment.from_s)},
                           {"to", utc(r.commitment.to_s)},
                           {"gpu_milli", r.commitment.gpu_milli}});
    }
    c["committed"] = committed;
    out.push_back(std::move(c));
  }
  return json{{"signal_time", utc(now)}, {"clusters", out}};
}

std::string DispatchService::metrics_text() {
  return metrics_text(std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count());
}

std::string DispatchService::metrics_text(int64_t wall_now_s) {
  std::lock_guard lock(mu_);
  take_reads();
  std::ostringstream m;
  m << "# HELP greensched_dispatch_requests_total Dispatch requests by HTTP status.\n"
       "# TYPE greensched_dispatch_requests_total counter\n";
  for (const auto& [code, count] : requests_by_code_) {
    m << fmt::format("greensched_dispatch_requests_total{{code=\"{}\"}} {}\n", code, count);
  }
  m << "# HELP greensched_dispatch_decisions_total Decisions by chosen cluster and mode.\n"
       "# TYPE greensched_dispatch_decisions_total counter\n";
  for (const auto& [key, count] : decisions_by_cluster_mode_) {
    m << fmt::format("greensched_dispatch_decisions_total{{cluster=\"{}\",mode=\"{}\"}} {}\n",
                     key.first, key.second, count);
  }
  uint64_t requests = 0;
  for (const auto& [code, count] : requests_by_code_) requests += count;
  m << "# HELP greensched_dispatch_request_seconds Time to answer a dispatch request.\n"
       "# TYPE greensched_dispatch_request_seconds summary\n"
    << fmt::format("greensched_dispatch_request_seconds_sum {}\n", decision_seconds_.sum())
    << fmt::format("greensched_dispatch_request_seconds_count {}\n", requests);
  std::string text;
  prometheus_header(text, "greensched_dispatch_decision_seconds", "histogram",
                    "Time to answer a POST /v1/dispatch (decide and journal).");
  decision_seconds_.render(text, "greensched_dispatch_decision_seconds", "");
  prometheus_header(text, "greensched_dispatch_cluster_read_seconds", "histogram",
                    "Time of each read of a cluster's state (off the request path).");
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    read_seconds_[i].render(
        text, "greensched_dispatch_cluster_read_seconds",
        fmt::format("cluster=\"{}\"", prometheus_label(config_.fleet.sites[i].name)));
  }
  prometheus_header(text, "greensched_dispatch_cluster_state_age_seconds", "gauge",
                    "Age of the cluster state decisions use (since its read ended).");
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    if (!sites_[i].state) continue;
    prometheus_sample(text, "greensched_dispatch_cluster_state_age_seconds",
                      fmt::format("cluster=\"{}\"", prometheus_label(config_.fleet.sites[i].name)),
                      sites_[i].age_s);
  }
  int64_t deferred = 0;
  for (const auto& [key, r] : remembered_) {
    if (r.until_wall_s > wall_now_s && r.start_wall_s > wall_now_s) ++deferred;
  }
  prometheus_header(text, "greensched_dispatch_deferred_workloads", "gauge",
                    "Standing decisions whose earliest start is still ahead.");
  prometheus_sample(text, "greensched_dispatch_deferred_workloads", "",
                    static_cast<double>(deferred));
  m << text;
  m << "# HELP greensched_dispatch_renominations_total Re-nominations by reason.\n"
       "# TYPE greensched_dispatch_renominations_total counter\n";
  for (const std::string_view reason : kRenominationReasons) {
    auto it = renominations_by_reason_.find(reason);
    m << fmt::format("greensched_dispatch_renominations_total{{reason=\"{}\"}} {}\n", reason,
                     it == renominations_by_reason_.end() ? 0 : it->second);
  }
  m << "# HELP greensched_dispatch_cluster_up Whether the cluster's state could be read.\n"
       "# TYPE greensched_dispatch_cluster_up gauge\n";
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    m << fmt::format("greensched_dispatch_cluster_up{{cluster=\"{}\"}} {}\n",
                     config_.fleet.sites[i].name, sites_[i].state ? 1 : 0);
  }
  m << "# HELP greensched_dispatch_cluster_gpu_allocated_ratio Allocated GPU share, as last read.\n"
       "# TYPE greensched_dispatch_cluster_gpu_allocated_ratio gauge\n";
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    if (!sites_[i].state) continue;
    const Cluster& c = sites_[i].state->cluster();
    const double ratio = c.total_gpu_milli() > 0 ? static_cast<double>(c.allocated_gpu_milli()) /
                                                       static_cast<double>(c.total_gpu_milli())
                                                 : 0.0;
    m << fmt::format("greensched_dispatch_cluster_gpu_allocated_ratio{{cluster=\"{}\"}} {}\n",
                     config_.fleet.sites[i].name, ratio);
  }
  m << "# HELP greensched_dispatch_committed_gpu_milli GPU milli dispatched and not yet seen.\n"
       "# TYPE greensched_dispatch_committed_gpu_milli gauge\n";
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    int64_t milli = 0;
    for (const auto& [key, r] : remembered_) {
      if (r.commitment.site == static_cast<int>(i)) milli += r.commitment.gpu_milli;
    }
    m << fmt::format("greensched_dispatch_committed_gpu_milli{{cluster=\"{}\"}} {}\n",
                     config_.fleet.sites[i].name, milli);
  }
  return m.str();
}

void DispatchService::replay(const std::vector<json>& records, int64_t wall_now_s) {
  replay_agent(records);
  for (const json& r : records) {
    // The decision count (the next decision's seed) survives compaction through the steps.
    ++decisions_;
    if (const json* step = serve::find_field(r, "step"); step != nullptr && step->is_number()) {
      decisions_ = std::max<uint64_t>(decisions_, step->get<uint64_t>() + 1);
    }
    const json& service = r["service"];
    const int64_t until = service["until_wall_s"].get<int64_t>();
    const std::string pod = r["pod"].get<std::string>();
    if (until <= wall_now_s) {
      remembered_.erase(pod);  // a later record of it ends an earlier one
      continue;
    }
    const json& commit = service["commit"];
    Remembered m;
    m.uid = service["uid"].get<std::string>();
    m.until_wall_s = until;
    m.reply = service["reply"];
    m.start_wall_s = service.value("start_wall_s", wall_now_s);
    if (!service.contains("start_wall_s")) {
      if (const json* start = serve::find_field(m.reply, "earliest_start");
          start != nullptr && start->is_string()) {
        if (auto t = parse_utc_time(start->get<std::string>()); t.ok()) m.start_wall_s = t.value();
      }
    }
    int site = -1;
    for (std::size_t i = 0; i < config_.fleet.sites.size(); ++i) {
      if (config_.fleet.sites[i].name == commit["site"].get<std::string>()) {
        site = static_cast<int>(i);
      }
    }
    if (site < 0) {  // a cluster no longer in the fleet
      remembered_.erase(pod);
      continue;
    }
    m.commitment = Commitment{site, commit["from_s"].get<int64_t>(), commit["to_s"].get<int64_t>(),
                              commit["gpu_milli"].get<int64_t>()};
    m.record = r;
    remembered_[pod] = std::move(m);
  }
}

void DispatchService::replay_agent(const std::vector<json>& records) {
  const int n_sites = static_cast<int>(config_.fleet.sites.size());
  // The newest snapshot of what the agent had learned (a compaction writes one), then every
  // decision of this agent after it, in the order decided.
  const json* snapshot = nullptr;
  int64_t snapshot_step = -1;
  for (const json& r : records) {
    const json& service = r["service"];
    if (service.contains("agent_state") && r.value("step", int64_t{-1}) > snapshot_step) {
      snapshot = &service["agent_state"];
      snapshot_step = r.value("step", int64_t{-1});
    }
  }
  if (snapshot != nullptr) {
    const std::string agent = snapshot->value("agent", std::string());
    if (agent != config_.agent) {
      warn(fmt::format("the journal's agent state is {}'s, not {}'s: {} starts afresh", agent,
                       config_.agent, config_.agent));
      snapshot_step = std::numeric_limits<int64_t>::max();  // nor learns from before it
    } else if (Status s = agent_->restore(snapshot->value("state", json()), n_sites); !s.ok()) {
      warn(fmt::format("the journal's agent state cannot be restored ({}): {} starts afresh",
                       s.message(), config_.agent));
      snapshot_step = std::numeric_limits<int64_t>::max();
    }
  }
  std::vector<const json*> after;
  for (const json& r : records) {
    if (r.value("step", int64_t{-1}) > snapshot_step &&
        r.value("agent", std::string()) == config_.agent && r["service"].contains("observed")) {
      after.push_back(&r);
    }
  }
  std::stable_sort(after.begin(), after.end(), [](const json* a, const json* b) {
    return a->value("step", int64_t{0}) < b->value("step", int64_t{0});
  });
  for (const json* r : after) {
    PodSpec pod;
    if (std::optional<multi::JobInfo> job =
            observed_job((*r)["service"]["observed"], config_.fleet, &pod)) {
      agent_->observe(*job, n_sites);
    }
  }
}

void DispatchService::warn(const std::string& message) const {
  if (config_.warn) {
    config_.warn(message);
  } else {
    fmt::print(stderr, "greensched dispatch: warning: {}\n", message);
  }
}

void DispatchService::compact_if_due(int64_t wall_now_s) {
  if (!journal_ || !journal_->compaction_due(wall_now_s)) return;
  forget(wall_now_s);
  std::vector<const Remembered*> standing;
  for (const auto& [key, r] : remembered_) standing.push_back(&r);
  std::sort(standing.begin(), standing.end(), [](const Remembered* a, const Remembered* b) {
    return a->record.value("step", uint64_t{0}) < b->record.value("step", uint64_t{0});
  });
  std::vector<json> records;
  for (const Remembered* r : standing) records.push_back(r->record);
  json agent_state = agent_->state();
  if (!agent_state.is_null()) agent_state = {{"agent", config_.agent}, {"state", agent_state}};
  if (Status s = journal_->compact(records, wall_now_s, agent_state); !s.ok()) {
    warn(fmt::format("{} (the journal keeps growing)", s.message()));
  }
}

Result<DispatchConfig> load_dispatch_config(const std::string& path, const std::string& data_dir) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  const json root = json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return Error{fmt::format("{}: not a JSON object", path)};
  }
  for (const auto& [key, value] : root.items()) {
    if (key != "fleet" && key != "clusters") {
      return Error{fmt::format("{}: {}: unknown key (fleet, clusters)", path, key)};
    }
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const auto resolve = [&](const std::string& p) {
    return std::filesystem::path(p).is_absolute() || dir.empty() ? p : (dir / p).string();
  };
  DispatchConfig config;
  if (!root.contains("fleet")) return Error{fmt::format("{}: fleet: missing", path)};
  const json& fleet = root["fleet"];
  Result<multi::Fleet> parsed = Error{"unset"};
  if (fleet.is_string()) {
    parsed = multi::load_fleet(resolve(fleet.get<std::string>()), data_dir);
  } else if (fleet.is_object()) {
    parsed = multi::parse_fleet(fleet.dump(), path + ": fleet", data_dir);
  } else {
    return Error{fmt::format("{}: fleet: a path or a fleet object", path)};
  }
  if (!parsed.ok()) return Error{parsed.error()};
  config.fleet = std::move(parsed.value());
  const std::size_t n = config.fleet.sites.size();
  config.sources.resize(n);
  config.forecasts.resize(n);
  if (root.contains("clusters")) {
    if (!root["clusters"].is_object()) return Error{fmt::format("{}: clusters: an object", path)};
    for (const auto& [name, c] : root["clusters"].items()) {
      const std::string where = fmt::format("{}: clusters.{}", path, name);
      std::optional<std::size_t> site;
      for (std::size_t i = 0; i < n; ++i) {
        if (config.fleet.sites[i].name == name) site = i;
      }
      if (!site) return Error{fmt::format("{}: no site of that name in the fleet", where)};
      if (!c.is_object()) return Error{fmt::format("{}: expected an object", where)};
      for (const auto& [key, value] : c.items()) {
        if (key != "api" && key != "carbon_forecast") {
          return Error{fmt::format("{}.{}: unknown key (api, carbon_forecast)", where, key)};
        }
      }
      if (c.contains("api")) {
        const json& a = c["api"];
        if (!a.is_object() || !a.contains("server") || !a["server"].is_string()) {
          return Error{fmt::format("{}.api: needs a server (https://host:port)", where)};
        }
        serve::KubeApiOptions api;
        api.server = a["server"].get<std::string>();
        if (a.contains("token_file")) api.token_file = resolve(a.value("token_file", ""));
        if (a.contains("ca_file")) api.ca_file = resolve(a.value("ca_file", ""));
        if (api.token_file.empty()) return Error{fmt::format("{}.api.token_file: missing", where)};
        config.sources[*site] = make_kube_source(std::move(api));
      }
      if (c.contains("carbon_forecast")) {
        const json& f = c["carbon_forecast"];
        if (!f.is_object() || !f.contains("url") || !f["url"].is_string()) {
          return Error{fmt::format("{}.carbon_forecast: needs a url", where)};
        }
        auto format = parse_forecast_format(f.value("format", "carbon-aware-sdk"));
        if (!format.ok())
          return Error{fmt::format("{}.carbon_forecast.format: {}", where, format.error())};
        config.forecasts[*site] = ForecastSource{f["url"].get<std::string>(), format.value()};
      }
    }
  }
  return config;
}

}  // namespace greensched::dispatch
