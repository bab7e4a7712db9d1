// FleetEnv: episodes as `greensched multi` builds them (multi_bindings.cpp and the command
// line build the same fleet and workload from the same options), and the encoding of
// observations, actions, masks and rewards over a FleetStepper.
#include "greensched/multi/fleet_env.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include <fmt/format.h>

#include "greensched/core/utc_time.hpp"
#include "greensched/multi/agents/agents.hpp"
#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/mpc_forecast.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "greensched/trace/workload.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kSlotS = 3600;  // start slots: now, then hour boundaries

}  // namespace

Result<std::unique_ptr<FleetEnv>> FleetEnv::make(const FleetEnvOptions& options) {
  std::unique_ptr<FleetEnv> env(new FleetEnv());
  env->options_ = options;
  if (!(options.slack_h >= 0 && options.slack_h <= 24 * 7)) {
    return Error{fmt::format("slack_h: {} is not in [0, 168]", options.slack_h)};
  }
  if (!(options.load_pct >= 0 && options.load_pct <= 1000)) {
    return Error{fmt::format("load: {} is not in (0, 1000]", options.load_pct)};
  }
  if (!(options.days >= 0 && options.days <= 366) ||
      !(options.warmup_days >= 0 && options.warmup_days <= 366)) {
    return Error{"days must be in (0, 366] and warmup_days in [0, 366]"};
  }
  if (options.ls_bound_s < 0 || options.wake_delay_s < 0 || options.sample_s <= 0) {
    return Error{"ls_bound, wake_delay must be >= 0 and sample > 0"};
  }
  if (options.horizon_h > 24 * 7) return Error{"horizon_h must be at most 168"};
  env->horizon_h_ = options.horizon_h >= 0 ? options.horizon_h
                                           : static_cast<int>(std::ceil(options.slack_h - 1e-9));
  if (!options.expert.empty()) {
    if (auto a = make_agent(options.expert); !a.ok()) return Error{a.error()};
  }
  if (options.forecast == "learned") {
    env->learned_ = std::make_unique<LearnedForecastsByWindow>();
  } else if (options.forecast != "same-hour") {
    return Error{
        fmt::format("forecast: unknown forecast '{}' (same-hour or learned)", options.forecast)};
  }
  if (options.fleet_path.empty()) {
    env->fleet_ = builtin_fleet();
  } else {
    auto fleet = load_fleet(options.fleet_path, options.data_dir);
    if (!fleet.ok()) return Error{fleet.error()};
    env->fleet_ = std::move(fleet.value());
  }
  if (env->fleet_.sites.empty()) return Error{"the fleet has no sites"};
  if (!options.start.empty()) {
    auto t = parse_utc_time(options.start);
    if (!t.ok()) return Error{fmt::format("start: {}", t.error())};
    env->fleet_.start_s = t.value();
    if (options.load_pct > 0) env->fleet_.start_s -= std::llround(options.warmup_days * 86400.0);
  }
  for (const SiteSpec& site : env->fleet_.sites) env->capacity_milli_ += site_gpu_milli(site);
  if (!options.pods_path.empty()) {
    auto pods = trace::read_openb_pods(options.pods_path, env->fleet_.models);
    if (!pods.ok()) return Error{pods.error()};
    env->file_pods_ = std::move(pods.value());
  }
  return env;
}

Status FleetEnv::reset(uint64_t seed) {
  stepper_.reset();
  const double run_days = options_.days > 0 ? options_.days : options_.load_pct > 0 ? 14.0 : 30.0;
  std::vector<PodSpec> pods;
  if (!options_.pods_path.empty()) {
    pods = file_pods_;
  } else {
    pods = trace::builtin_openb_workload().pods;
    const int span = options_.load_pct > 0 ? 28 : static_cast<int>(std::lround(run_days));
    trace::assign_synthetic_times(pods, seed, span);
  }
  const uint32_t shapes = trace::assign_shape_ids(pods);
  MultiOptions o;
  if (options_.load_pct > 0) {
    trace::LoadSpec spec;
    spec.load_pct = options_.load_pct;
    spec.days = run_days;
    spec.warmup_days = options_.warmup_days;
    spec.seed = seed;
    auto generated = trace::generate_load(pods, capacity_milli_, spec);
    if (!generated.ok()) {
      return Error{fmt::format("load {}: {}", options_.load_pct, generated.error())};
    }
    pods = std::move(generated.value().pods);
    o.measure_from_s = generated.value().window.start_s;
    o.measure_to_s = generated.value().window.end_s;
    o.target_load_pct = options_.load_pct;
  }
  o.agent = options_.expert.empty() ? "external" : options_.expert;
  o.seed = seed;
  o.ls_bound_s = options_.ls_bound_s;
  o.be_slack_s = static_cast<int64_t>(std::llround(options_.slack_h * 3600.0));
  o.power_down_idle_s = options_.power_down_idle_s;
  o.wake_delay_s = options_.wake_delay_s;
  o.sample_s = options_.sample_s;
  o.data_gb_per_job = options_.data_gb;
  o.preempt_be = options_.preempt_be;
  o.generation_forecast.seed = seed;
  if (learned_) {
    auto got = learned_->get(fleet_, measured_hour0_s(fleet_, pods, o.measure_from_s));
    if (!got.ok()) return Error{fmt::format("forecast learned: {}", got.error())};
    o.learned_forecasts = got.value().forecasts;
  }
  agents_.clear();
  decision_ = 0;
  auto s = FleetStepper::start(fleet_, std::move(pods), shapes, o);
  if (!s.ok()) return s.status();
  stepper_ = std::move(s.value());
  last_measured_ = 0;
  last_violations_ = 0;
  total_ = 0;
  if (stepper_->done()) return Error{"the episode has no job to dispatch"};
  offer();
  return Status::Ok();
}

double FleetEnv::measured() const {
  return options_.reward_cost ? stepper_->cost() : stepper_->carbon_g() / 1000.0;
}

Result<double> FleetEnv::step(int action) {
  if (done()) return Error{"the episode has ended: call reset"};
  if (action < 0 || action >= actions()) {
    return Error{fmt::format("action {} is not in [0, {})", action, actions())};
  }
  const Dispatch d = dispatch_of(action);
  const double dispatched_kg =
      options_.reward_at_dispatch ? expected_kg(d.site, d.not_before_s) : 0;
  if (Status s = stepper_->decide(d); !s.ok()) return s.error();
  double m = 0;
  int64_t v = 0;
  if (stepper_->done()) {
    const MultiResult& r = stepper_->result();
    m = options_.reward_cost ? stepper_->cost() : r.carbon_kg;
    v = r.ls_slo_violations;
  } else {
    m = measured();
    v = stepper_->ls_started_late();
  }
  const double charged = options_.reward_at_dispatch ? dispatched_kg : m - last_measured_;
  const double reward = -charged - options_.ls_penalty * static_cast<double>(v - last_violations_);
  last_measured_ = m;
  last_violations_ = v;
  total_ += reward;
  if (!stepper_->done()) offer();
  return reward;
}

std::vector<int64_t> FleetEnv::starts(int site) const {
  const FleetView& view = stepper_->view();
  const JobInfo& j = stepper_->job();
  const int64_t ready = view.now_s() + static_cast<int64_t>(transfer_seconds(view, j, site));
  std::vector<int64_t> c = start_candidates(j, ready, kSlotS);
  if (c.size() > static_cast<std::size_t>(slots())) c.resize(static_cast<std::size_t>(slots()));
  return c;
}

Dispatch FleetEnv::dispatch_of(int action) const {
  const int site = action / slots();
  const auto k = static_cast<std::size_t>(action % slots());
  const std::vector<int64_t> c = starts(site);
  return Dispatch{site, c[std::min(k, c.size() - 1)], "chosen by the environment's caller", {}};
}

double FleetEnv::expected_kg(int site, int64_t start) const {
  const FleetView& view = stepper_->view();
  const JobInfo& j = stepper_->job();
  const double hours = static_cast<double>(std::max<int64_t>(j.duration_s, 1)) / 3600.0;
  // As green: what the job adds now where the site can take it now, else its share.
  double kw = view.marginal_watts(site, *j.pod) / 1000.0;
  if (!std::isfinite(kw)) kw = view.run_watts(site, *j.pod) / 1000.0;
  if (!std::isfinite(kw)) kw = 0;  // no node there can host it (the run keeps it waiting)
  const int64_t run_s = std::max<int64_t>(j.duration_s, 1);
  const double ci = view.expected_signal(site, start, start + run_s, kw).carbon_g_per_kwh;
  const SiteSpec& spec = fleet_.sites[site];
  const double move_g = site == j.home_site ? 0.0
                                            : j.data_gb * spec.network.energy_kwh_per_gb *
                                                  spec.carbon.at(view.epoch_s(view.now_s()));
  return (kw * hours * ci + move_g) / 1000.0;
}

int FleetEnv::action_of(const Dispatch& d) const {
  const FleetView& view = stepper_->view();
  const JobInfo& j = stepper_->job();
  const int site = d.site >= 0 && d.site < sites() ? d.site : j.home_site;
  // The bounds the run enforces (FleetSim::end_submit).
  int64_t nb = std::max(d.not_before_s, view.now_s());
  nb = j.latency_sensitive ? view.now_s() : std::min(nb, j.submit_s + j.slack_s);
  const std::vector<int64_t> c = starts(site);
  std::size_t k = 0;
  while (k + 1 < c.size() && c[k + 1] <= nb) ++k;
  return site * slots() + static_cast<int>(k);
}

void FleetEnv::offer() {
  ++decision_;
  expert_action_ = -1;
  if (options_.expert.empty()) return;
  Result<int> a = agent_action(options_.expert);
  if (a.ok()) expert_action_ = a.value();  // the name was checked by make()
}

Result<int> FleetEnv::agent_action(std::string_view name) {
  if (done()) return Error{"the episode has ended: no job to dispatch"};
  auto it = std::find_if(agents_.begin(), agents_.end(),
                         [&](const Consulted& c) { return c.name == name; });
  if (it == agents_.end()) {
    auto a = make_agent(name);
    if (!a.ok()) return Error{a.error()};
    agents_.push_back(Consulted{std::string(name), std::move(a.value()), -1, -1});
    it = agents_.end() - 1;
  }
  if (it->decision != decision_) {
    it->action = action_of(it->agent->decide(stepper_->job(), stepper_->view()));
    it->decision = decision_;
  }
  return it->action;
}

void FleetEnv::observe(float* out) const {
  const FleetView& view = stepper_->view();
  const JobInfo& j = stepper_->job();
  const int64_t now = view.now_s();
  const int f = slots();
  for (int s = 0; s < sites(); ++s) {
    float* b = out + s * site_block();
    const SiteSpec& spec = fleet_.sites[s];
    b[0] = static_cast<float>(view.load(s));
    b[1] = static_cast<float>(transfer_seconds(view, j, s) / 3600.0);
    b[2] = view.fits_ever(s, *j.pod) ? 1.0f : 0.0f;
    for (int k = 0; k < f; ++k) {
      const int64_t from = k == 0 ? now : (now / kSlotS + k) * kSlotS;
      const SignalView sig = view.expected_signal(s, from, from + kSlotS, 0.0);
      b[3 + k] = static_cast<float>(sig.carbon_g_per_kwh / 1000.0);
      b[3 + f + k] = spec.price ? static_cast<float>(sig.price_per_kwh) : 0.0f;
    }
  }
  float* b = out + sites() * site_block();
  b[0] = static_cast<float>(static_cast<double>(j.pod->total_gpu_milli()) / 1000.0);
  b[1] = static_cast<float>(static_cast<double>(j.duration_s) / 3600.0);
  b[2] = j.latency_sensitive ? 1.0f : 0.0f;
  b[3] = static_cast<float>(
      static_cast<double>(std::max<int64_t>(j.submit_s + j.slack_s - now, 0)) / 3600.0);
  b[4] = static_cast<float>(j.data_gb);
  b[5] = j.again ? 1.0f : 0.0f;
  for (int s = 0; s < sites(); ++s) b[6 + s] = s == j.home_site ? 1.0f : 0.0f;
  const int64_t day_s = ((view.epoch_s(now) % 86400) + 86400) % 86400;
  const double angle = 2.0 * std::numbers::pi * static_cast<double>(day_s) / 86400.0;
  b[job_block()] = static_cast<float>(std::sin(angle));
  b[job_block() + 1] = static_cast<float>(std::cos(angle));
}

void FleetEnv::mask(uint8_t* out) const {
  const FleetView& view = stepper_->view();
  const JobInfo& j = stepper_->job();
  std::fill(out, out + actions(), uint8_t{0});
  if (j.latency_sensitive && options_.ls_home) {
    out[j.home_site * slots()] = 1;
    return;
  }
  std::vector<int> ls_sites;
  if (j.latency_sensitive) ls_sites = ls_feasible_sites(view, j);
  const double max_fill = AgentOptions{}.be_max_fill;
  bool any = false;
  for (int s = 0; s < sites(); ++s) {
    if (!view.fits_ever(s, *j.pod)) continue;
    if (j.latency_sensitive && std::find(ls_sites.begin(), ls_sites.end(), s) == ls_sites.end()) {
      continue;
    }
    if (options_.room && j.latency_sensitive && !has_room(view, s, *j.pod, 0.0)) continue;
    const std::vector<int64_t> c = starts(s);
    // Starting as soon as it can (its data there), the job needs a node that takes it now or
    // wakes for it (green's marginal_watts is finite): a job queued at a full site takes the
    // capacity the site's next LS job needs.
    const bool now_ok = !options_.room || std::isfinite(view.marginal_watts(s, *j.pod));
    for (std::size_t k = 0; k < c.size(); ++k) {
      if (k == 0 && !now_ok) continue;
      if (options_.room && !j.latency_sensitive && !has_be_room(view, s, *j.pod, c[k], max_fill)) {
        continue;
      }
      out[s * slots() + static_cast<int>(k)] = 1;
      any = true;
    }
  }
  if (!any) out[j.home_site * slots()] = 1;  // no site can take it: it waits at home
}

}  // namespace greensched::multi
