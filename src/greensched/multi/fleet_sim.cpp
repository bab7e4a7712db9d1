// The fleet simulator's set-up and event loop; the handlers, the agents' view and the
// metrics live beside it (fleet_sim_internal.hpp lists the parts).
#include "greensched/multi/fleet_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/fleet_sim_internal.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/trace/job_predictor.hpp"

namespace greensched::multi {
namespace detail {
namespace {

// Waiting jobs a site's scheduling pass tries at most (a scheduler's active queue): a queue
// that grows without bound (an agent sending everything to one site) then costs no more per
// pass than a short one.
constexpr std::size_t kScanLimit = 2048;

}  // namespace

Status FleetSim::set_up_sites(const std::vector<PodSpec>& pods, uint32_t shape_count, Rng& seeds,
                              std::vector<double>& weights) {
  // Cluster, local policy with the fleet-wide target workload, power figures, and the site
  // engine that runs them.
  const frag::TargetWorkload target = frag::build_target_workload(pods);
  site_jobs_.resize(pods.size());
  for (std::size_t j = 0; j < pods.size(); ++j) {
    site_jobs_[j] = sim::SiteJob{&pods[j], pods[j].deletion_time - pods[j].creation_time};
  }
  uint32_t key_count = 0;
  site_keys_ = sim::feasibility_keys(site_jobs_, key_count);
  sites_.resize(fleet_.sites.size());
  run_watts_.assign(fleet_.sites.size(), std::vector<double>(shape_count, std::nan("")));
  reserve_hour_ = std::numeric_limits<int64_t>::min();
  if (Status s = validate(options_.generation_forecast); !s.ok()) return s;
  generation_.clear();
  for (std::size_t i = 0; i < fleet_.sites.size(); ++i) {
    const SiteSpec& site = fleet_.sites[i];
    generation_.push_back(
        site.energy
            ? GenerationForecast(*site.energy, options_.generation_forecast, static_cast<int>(i))
            : GenerationForecast());
  }
  for (std::size_t i = 0; i < fleet_.sites.size(); ++i) {
    SiteRuntime& s = sites_[i];
    s.spec = &fleet_.sites[i];
    s.cluster = std::make_unique<Cluster>(s.spec->nodes);
    s.frag = std::make_shared<frag::FragmentationModel>(target);
    auto figures = options_.power_model.resolve(s.spec->nodes, fleet_.models);
    if (!figures.ok()) return Error{fmt::format("site {}: {}", s.spec->name, figures.error())};
    s.figures = std::make_shared<const std::vector<power::NodePower>>(std::move(figures.value()));
    policy::PolicyContext context;
    context.frag = s.frag;
    context.shape_count = shape_count;
    context.power = s.figures;
    auto made = policy::make_policy(s.spec->policy, context);
    if (!made.ok()) return Error{fmt::format("site {}: {}", s.spec->name, made.error())};
    s.policy = std::move(made.value());
    // The site's scheduler draws as `simulate --mode replay --seed` does with the run's seed
    // plus the site's index; its previews (what agents see) from their own generator.
    s.rng = Rng(site_seed(options_.seed, i));
    s.preview_rng = Rng(seeds.next());
    s.scheduler = std::make_unique<policy::Scheduler>(
        *s.policy, policy::random_tie_rank(s.cluster->size(), s.rng));
    s.power = std::make_unique<power::ClusterPower>(*s.figures, *s.cluster);
    s.full_gpu_it_watts = full_gpu_it_watts(s.spec->nodes, *s.figures);
    s.hooks.sim = this;
    s.hooks.site = i;
    sim::SiteEngineConfig engine;
    engine.queue = s.spec->queue;
    engine.power_down_idle_s = options_.power_down_idle_s;
    engine.wake_delay_s = options_.wake_delay_s;
    engine.preempt_be = options_.preempt_be;
    engine.scan_limit = kScanLimit;
    s.engine =
        std::make_unique<sim::SiteEngine>(*s.cluster, *s.scheduler, s.rng, *s.power, site_jobs_,
                                          site_keys_, key_count, engine, &s.hooks);
    s.engine->set_policy_name(s.spec->policy);
  }
  weights = site_home_weights(fleet_);
  return Status{};
}

Status FleetSim::set_up_jobs(const std::vector<PodSpec>& pods, const std::vector<double>& weights,
                             Rng& seeds) {
  // A home site drawn in proportion to GPU capacity (fleet_home_sites draws the same).
  Rng homes(seeds.next());
  const std::vector<int> home = draw_home_sites(pods.size(), weights, homes);
  jobs_.resize(pods.size());
  for (std::size_t j = 0; j < pods.size(); ++j) {
    const PodSpec& pod = pods[j];
    if (pod.creation_time < 0 || pod.deletion_time < 0) {
      return Error{
          fmt::format("pod {} has no creation/deletion time: the pod list cannot be "
                      "replayed in time",
                      pod.name)};
    }
    JobInfo& info = jobs_[j].info;
    info.index = j;
    info.pod = &pod;
    info.home_site = home[j];
    info.latency_sensitive = is_latency_sensitive(pod);
    info.submit_s = pod.creation_time;
    info.duration_s = pod.deletion_time - pod.creation_time;
    info.slack_s = info.latency_sensitive ? 0 : options_.be_slack_s;
    info.data_gb = job_data_gb(pod, options_.data_gb_per_job);
    push(info.submit_s, EventKind::kJobSubmit, j);
  }
  // --predict-durations: each job's duration as predicted online from the jobs finished
  // before its submission (trace/job_predictor); used only for the agent's decision.
  if (options_.predict_durations) predicted_s_ = trace::predict_durations_online(pods);
  by_submit_.resize(jobs_.size());
  for (std::size_t j = 0; j < jobs_.size(); ++j) by_submit_[j] = j;
  std::stable_sort(by_submit_.begin(), by_submit_.end(), [&](std::size_t a, std::size_t b) {
    return jobs_[a].info.submit_s < jobs_[b].info.submit_s;
  });
  result_.jobs = static_cast<int64_t>(jobs_.size());
  result_.decisions.resize(jobs_.size());
  if (options_.record) records_.resize(jobs_.size());
  return Status{};
}

void FleetSim::set_up_clock() {
  first_ = events_.empty() ? 0 : events_.top().time;
  now_ = last_ = first_;
  hour0_ = floor_hour(epoch_s(std::max(first_, options_.measure_from_s)));
  // The ledgers span every hour a job could run in: from the first event to the latest end of
  // a job started as late as its slack allows (then some, for waits in the queue).
  trace_hour0_ = first_ - ((first_ % 3600) + 3600) % 3600;
  int64_t last_end = first_;
  for (const Job& job : jobs_) {
    last_end = std::max(last_end, job.info.submit_s + job.info.slack_s + job.info.duration_s);
  }
  const auto hours = static_cast<std::size_t>((last_end - trace_hour0_) / 3600 + 48);
  for (SiteRuntime& s : sites_) {
    s.ledger = HourLedger(trace_hour0_, hours);
    s.ls_ledger = HourLedger(trace_hour0_, hours);
    s.cpu_ledger = HourLedger(trace_hour0_, hours);
    s.memory_ledger = HourLedger(trace_hour0_, hours);
  }
  for (SiteRuntime& s : sites_) s.engine->begin(first_);
  push(first_, EventKind::kSample, 0);
}

bool FleetSim::finished() const {
  // Every job has finished: only power-state timers remain, and those inside a stated window
  // still change what the idle fleet draws there (run() then measures the window to its end).
  if (jobs_done_ == jobs_.size()) {
    if (options_.measure_to_s == std::numeric_limits<int64_t>::max()) return true;
    for (const SiteRuntime& s : sites_) {
      const std::optional<int64_t> e = s.engine->next_time();
      if (e && *e < options_.measure_to_s) return false;
    }
    return true;
  }
  // Past the measured window with every job submitted and started: nothing left changes a
  // metric.
  return now_ >= options_.measure_to_s && jobs_submitted_ == jobs_.size() && nothing_waits();
}

std::optional<int64_t> FleetSim::next_time() {
  std::optional<int64_t> t;
  if (!events_.empty()) t = events_.top().time;
  for (SiteRuntime& s : sites_) {
    const std::optional<int64_t> e = s.engine->next_time();
    if (e && (!t || *e < *t)) t = e;
  }
  return t;
}

Status FleetSim::begin(const std::vector<PodSpec>& pods, uint32_t shape_count) {
  wall_start_ = std::chrono::steady_clock::now();
  pods_ = &pods;
  const bool given_prices = options_.agent_options.capacity_prices != nullptr;
  const char* forecasts = options_.oracle ? "oracle" : options_.learned_forecasts ? "learned" : "";
  result_.agent = options_.agent;
  if (*forecasts != 0 && given_prices) {
    result_.agent += fmt::format(" ({}, bound prices)", forecasts);
  } else if (*forecasts != 0) {
    result_.agent += fmt::format(" ({})", forecasts);
  } else if (given_prices) {
    result_.agent += " (bound prices)";
  }
  if (options_.ls_bound_s < 0 || options_.be_slack_s < 0 || options_.wake_delay_s < 0 ||
      options_.sample_s <= 0) {
    return Error{"bounds, slack and delays must be non-negative and the sample step positive"};
  }
  Rng seeds(options_.seed);
  std::vector<double> weights;
  if (Status s = set_up_sites(pods, shape_count, seeds, weights); !s.ok()) return s;
  if (Status s = set_up_jobs(pods, weights, seeds); !s.ok()) return s;
  set_up_clock();
  return Status{};
}

Result<bool> FleetSim::next_decision() {
  // Each instant: the sites' departures and power-state timers and a scheduling pass where
  // they changed something, then submissions and jobs becoming ready (each scheduled as it
  // arrives), then the samples. A submission (or a job at its latest start) stops the loop
  // mid-instant until apply() books its dispatch.
  if (pending_.kind != Pending::Kind::kNone) {
    return Error{"a decision is pending: apply a dispatch first", ErrorCode::kInternal};
  }
  while (!ended_) {
    if (!in_instant_) {
      const std::optional<int64_t> t = next_time();
      if (!t) {
        ended_ = true;
        break;
      }
      advance(*t);
      now_ = *t;
      for (SiteRuntime& s : sites_) {
        const std::optional<int64_t> e = s.engine->next_time();
        if (e && *e == now_) {
          expect_ok(s.engine->handle_events(now_));
          expect_ok(s.engine->schedule(now_));
        }
      }
      in_instant_ = true;
    }
    while (!events_.empty() && events_.top().time == now_ &&
           events_.top().kind != EventKind::kSample) {
      const Event e = events_.top();
      events_.pop();
      if (e.kind == EventKind::kJobSubmit) {
        begin_submit(e.a);
        return true;
      }
      if (e.kind == EventKind::kLatestStart) {
        if (begin_latest_start(e.a)) return true;
      } else {
        on_ready(e.a);
      }
    }
    while (!events_.empty() && events_.top().time == now_) {
      events_.pop();
      on_sample();
    }
    in_instant_ = false;
    if (!broken_.ok()) return broken_.error();
    if (finished()) ended_ = true;
  }
  return false;
}

void FleetSim::apply(Dispatch d) {
  const Pending::Kind kind = pending_.kind;
  pending_.kind = Pending::Kind::kNone;
  if (kind == Pending::Kind::kSubmit) {
    end_submit(pending_.job, std::move(d));
  } else if (kind == Pending::Kind::kLatestStart) {
    end_latest_start(pending_.job, d);
  }
}

Result<MultiResult> FleetSim::finish() {
  if (!ended_ || pending_.kind != Pending::Kind::kNone) {
    return Error{"the run has not ended", ErrorCode::kInternal};
  }
  // A stated window is measured to its end even when the last job ends before it: the fleet
  // idles (or sleeps) until then, and that energy, carbon and the window's length count.
  if (options_.measure_to_s != std::numeric_limits<int64_t>::max() &&
      last_ < options_.measure_to_s) {
    advance(options_.measure_to_s);
    now_ = options_.measure_to_s;
  }
  sample();
  summarize_delays();
  summarize_sites(*pods_);
  result_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  return std::move(result_);
}

double FleetSim::carbon_g() const {
  double g = 0;
  for (const SiteRuntime& s : sites_) g += s.carbon_g;
  return g;
}

double FleetSim::cost() const {
  double c = 0;
  for (const SiteRuntime& s : sites_) c += s.cost;
  return c;
}

Result<MultiResult> FleetSim::run(const std::vector<PodSpec>& pods, uint32_t shape_count) {
  auto agent = make_agent(options_.agent, options_.agent_options);
  if (!agent.ok()) return Error{agent.error()};
  if (Status s = begin(pods, shape_count); !s.ok()) return s.error();
  for (;;) {
    Result<bool> more = next_decision();
    if (!more.ok()) return Error{more.error(), more.code()};
    if (!more.value()) break;
    apply(agent.value()->decide(pending(), *this));
  }
  return finish();
}

}  // namespace detail

Result<MultiResult> run_fleet(const Fleet& fleet, const std::vector<PodSpec>& pods,
                              uint32_t shape_count, const MultiOptions& options) {
  detail::FleetSim sim(fleet, options);
  return sim.run(pods, shape_count);
}

}  // namespace greensched::multi
