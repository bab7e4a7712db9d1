#include "greensched/multi/fleet_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <list>
#include <memory>
#include <queue>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/frag/fragmentation.hpp"
#include "greensched/multi/net_signal.hpp"
#include "greensched/policy/filter.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/sim/decision_record.hpp"
#include "greensched/trace/job_predictor.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/quantiles.hpp"

namespace greensched::multi {
namespace {

int64_t floor_hour(int64_t t) {
  return t - ((t % 3600) + 3600) % 3600;
}

struct Job {
  JobInfo info;
  int site = -1;
  int64_t ready_s = 0;
  int64_t start_s = -1;
  bool done = false;
  // Length of the site's freed-node log when this job last found no node: it can only fit on
  // a node freed since (a job ended there or it woke).
  std::size_t failed_at = std::numeric_limits<std::size_t>::max();
};

// A site at run time: its cluster, local scheduler, power, queue and powered-down nodes.
struct SiteRuntime {
  const SiteSpec* spec = nullptr;
  std::unique_ptr<Cluster> cluster;
  std::shared_ptr<frag::FragmentationModel> frag;
  std::shared_ptr<const std::vector<power::NodePower>> figures;
  std::unique_ptr<policy::Policy> policy;
  std::unique_ptr<policy::Scheduler> scheduler;
  std::unique_ptr<power::ClusterPower> power;
  Rng rng{0};
  Rng preview_rng{0};
  // Job indices waiting to start, latency-sensitive first, each in the order they became
  // ready. Lists, so that a pass over the front of a long queue costs only that front.
  std::list<std::size_t> ls_queue, be_queue;
  std::size_t queued() const { return ls_queue.size() + be_queue.size(); }
  std::vector<int64_t> idle_since;  // per node; -1 while busy
  std::vector<bool> waking;
  double waking_watts = 0;  // idle power of nodes being woken (IT)
  int64_t running = 0;
  int64_t waiting = 0;  // dispatched here, not yet ready
  int64_t queued_gpu_milli = 0;
  // GPU requests of jobs dispatched here and not started yet (moving, deferred or queued):
  // agents see them as taken, so a burst of submissions does not all pick the same site.
  int64_t pending_gpu_milli = 0;
  int64_t asleep_gpu_milli = 0;  // capacity of nodes powered down or waking
  uint64_t version = 0;          // bumped on every change, for the preview cache
  std::vector<NodeIndex> freed;  // every node that gained capacity, in order
  uint64_t sleep_epoch = 0;      // bumped whenever a node powers down
  uint64_t wake_pass_sleep_epoch = std::numeric_limits<uint64_t>::max();
  int64_t powered_down = 0;  // nodes asleep (not counting those waking)
  // Accumulators.
  double energy_j = 0;
  double carbon_g = 0;
  double alloc_milli_seconds = 0;
  int64_t jobs = 0;

  std::vector<double> hourly_kwh;  // facility energy per hour from FleetSim::hour0_

  // Facility watts at epoch second t (the PUE may follow the weather).
  double facility_watts(int64_t t) const {
    return (power->watts() + waking_watts) * spec->pue_at(t);
  }
  int64_t online_nodes() const {
    int64_t n = 0;
    for (std::size_t i = 0; i < cluster->size(); ++i)
      n += cluster->state(static_cast<NodeIndex>(i)).online;
    return n;
  }
};

enum class EventKind : int { kJobEnd, kNodeWake, kPowerDownCheck, kJobReady, kJobSubmit, kSample };

struct Event {
  int64_t time;
  EventKind kind;
  uint64_t seq;
  std::size_t a;  // job or site
  std::size_t b;  // node
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return static_cast<int>(kind) > static_cast<int>(o.kind);
    return seq > o.seq;
  }
};

class FleetSim final : public FleetView {
 public:
  FleetSim(const Fleet& fleet, const MultiOptions& options)
      : fleet_(fleet),
        options_(options),
        forecaster_(options.oracle ? make_oracle_forecaster() : make_same_hour_forecaster()) {}

  Result<MultiResult> run(const std::vector<PodSpec>& pods, uint32_t shape_count);

  // FleetView.
  const Fleet& fleet() const override { return fleet_; }
  int64_t now_s() const override { return now_; }
  int64_t epoch_s(int64_t trace_s) const override { return fleet_.start_s + trace_s; }
  const Forecaster& forecaster() const override { return *forecaster_; }
  int64_t ls_bound_s() const override { return options_.ls_bound_s; }
  int64_t wake_delay_s() const override { return options_.wake_delay_s; }
  double load(int site) const override;
  int64_t gpu_capacity_milli(int site) const override {
    return sites_[site].cluster->total_gpu_milli();
  }
  bool fits_now(int site, const PodSpec& pod) const override;
  bool fits_ever(int site, const PodSpec& pod) const override;
  double marginal_watts(int site, const PodSpec& pod) const override {
    return preview(site, pod).watts;
  }
  double fragmentation_delta(int site, const PodSpec& pod) const override {
    return preview(site, pod).frag_milli;
  }
  SignalView expected_signal(int site, int64_t from_s, int64_t to_s, double job_kw) const override;

 private:
  struct Preview {
    double watts = 0;
    double frag_milli = 0;
  };
  Preview preview(int site, const PodSpec& pod) const;
  NodeIndex wakeable_node(const SiteRuntime& s, const PodSpec& pod) const;

  void push(int64_t time, EventKind kind, std::size_t a, std::size_t b = 0) {
    events_.push(Event{time, kind, seq_++, a, b});
  }
  void advance(int64_t t);
  // Adds facility energy over [from, to) (epoch seconds, to > from) at `it_watts` to the
  // site's totals and hourly series, hour by hour when the PUE follows the weather.
  void accumulate(SiteRuntime& s, int64_t from, int64_t to, double it_watts);
  void add_hourly(SiteRuntime& s, int64_t from, int64_t to, double watts);
  bool in_window(int64_t t) const {
    return t >= options_.measure_from_s && t < options_.measure_to_s;
  }
  void try_schedule(std::size_t site);
  void start_job(std::size_t site, std::size_t job, const policy::Decision& d);
  void sample();
  // Whether a job that found no node may fit now: some node freed since fits it.
  static bool may_fit_again(SiteRuntime& s, Job& job) {
    if (job.failed_at == std::numeric_limits<std::size_t>::max()) return true;
    if (s.freed.size() - job.failed_at > s.cluster->size()) return true;  // cheaper to rerun
    const PodSpec& pod = *job.info.pod;
    for (std::size_t i = job.failed_at; i < s.freed.size(); ++i) {
      const NodeIndex n = s.freed[i];
      if (policy::filter_node(s.cluster->spec(n), s.cluster->state(n), pod) ==
          policy::FilterReason::kFits) {
        return true;
      }
    }
    job.failed_at = s.freed.size();
    return false;
  }
  bool nothing_waits() const {
    for (const SiteRuntime& s : sites_) {
      if (s.queued() > 0 || s.waiting > 0) return false;
    }
    return true;
  }

  const Fleet& fleet_;
  MultiOptions options_;
  std::unique_ptr<Forecaster> forecaster_;
  std::vector<SiteRuntime> sites_;
  std::vector<Job> jobs_;
  const std::vector<PodSpec>* pods_ = nullptr;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  int64_t now_ = 0;
  int64_t last_ = 0;
  int64_t first_ = 0;
  std::size_t jobs_done_ = 0;
  std::size_t jobs_submitted_ = 0;
  MultiResult result_;
  std::vector<nlohmann::json> records_;  // per job, when recording
  // The first refused cluster change: the policy and the event order guarantee each one fits,
  // so a refusal is a bug; run() stops and returns it.
  Status broken_;

  void expect_ok(Status s) {
    if (!s.ok() && broken_.ok()) broken_ = Error{s.message(), ErrorCode::kInternal};
  }
  std::vector<int64_t> predicted_s_;  // per job, with options.predict_durations
  mutable std::vector<std::tuple<const PodSpec*, uint64_t, Preview>> preview_cache_;
  mutable NetSignalCache net_cache_;
  int64_t hour0_ = std::numeric_limits<int64_t>::min();  // epoch hour of hourly_kwh[0]
};

double FleetSim::load(int site) const {
  const SiteRuntime& s = sites_[site];
  const double cap = static_cast<double>(s.cluster->total_gpu_milli());
  if (cap <= 0) return 1.0;
  return static_cast<double>(s.cluster->allocated_gpu_milli() + s.pending_gpu_milli) / cap;
}

bool FleetSim::fits_now(int site, const PodSpec& pod) const {
  const SiteRuntime& s = sites_[site];
  if (s.cluster->allocated_gpu_milli() + s.pending_gpu_milli + pod.total_gpu_milli() >
      s.cluster->total_gpu_milli() - s.asleep_gpu_milli) {
    return false;  // what was dispatched here first takes the free GPUs
  }
  const Cluster& c = *sites_[site].cluster;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
    if (policy::filter_node(c.spec(n), c.state(n), pod) == policy::FilterReason::kFits) return true;
  }
  return false;
}

bool FleetSim::fits_ever(int site, const PodSpec& pod) const {
  const Cluster& c = *sites_[site].cluster;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
    const NodeSpec& spec = c.spec(n);
    if (pod.cpu_milli > spec.cpu_milli || pod.memory_mib > spec.memory_mib) continue;
    if (!pod.needs_gpu()) return true;
    if (spec.gpu_count >= pod.num_gpu && model_allowed(pod.gpu_spec, spec.model)) return true;
  }
  return false;
}

// A powered-down node that could host `pod`, or -1.
NodeIndex FleetSim::wakeable_node(const SiteRuntime& s, const PodSpec& pod) const {
  const Cluster& c = *s.cluster;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.size()); ++n) {
    if (c.state(n).online || s.waking[n]) continue;
    NodeState on = c.state(n);
    on.online = true;
    if (policy::filter_node(c.spec(n), on, pod) == policy::FilterReason::kFits) return n;
  }
  return -1;
}

FleetSim::Preview FleetSim::preview(int site, const PodSpec& pod) const {
  const SiteRuntime& s = sites_[site];
  for (const auto& [p, version, value] : preview_cache_) {
    if (p == &pod && version == (s.version << 8 | static_cast<uint64_t>(site))) return value;
  }
  Preview out;
  if (s.cluster->allocated_gpu_milli() + s.pending_gpu_milli + pod.total_gpu_milli() >
      s.cluster->total_gpu_milli()) {
    out.watts = std::numeric_limits<double>::infinity();  // full, counting what is on its way
    return out;
  }
  auto& self = const_cast<SiteRuntime&>(s);
  const policy::Decision d = self.scheduler->schedule(*s.cluster, pod, self.preview_rng);
  NodeIndex node = d.node;
  GpuMask gpus = d.gpus;
  bool waking = false;
  if (node < 0) {
    node = wakeable_node(s, pod);
    if (node < 0) {
      out.watts = std::numeric_limits<double>::infinity();
      return out;
    }
    waking = true;
    // A powered-down node is empty: the first GPU(s) are the ones any rule picks.
    gpus = pod.needs_gpu() ? (pod.shares_gpu() ? GpuMask{1} : (GpuMask{1} << pod.num_gpu) - 1) : 0;
  }
  const NodeSpec& spec = s.cluster->spec(node);
  const NodeState& st = s.cluster->state(node);
  const power::NodePower& fig = (*s.figures)[node];
  auto after = st.gpu_free_milli;
  for (int g = 0; g < spec.gpu_count; ++g) {
    if ((gpus >> g) & 1U) after[g] -= pod.gpu_milli;
  }
  const double before_w =
      waking ? 0.0
             : power::node_power_watts(spec, fig, st.cpu_free_milli, st.gpu_free_milli.data());
  const double after_w =
      power::node_power_watts(spec, fig, st.cpu_free_milli - pod.cpu_milli, after.data());
  out.watts = (after_w - before_w) * s.spec->pue_at(epoch_s(now_));
  const int64_t f_before =
      s.frag->scaled_frag(spec.model, spec.gpu_count, st.cpu_free_milli, st.gpu_free_milli.data());
  const int64_t f_after = s.frag->scaled_frag(spec.model, spec.gpu_count,
                                              st.cpu_free_milli - pod.cpu_milli, after.data());
  out.frag_milli = s.frag->to_gpu_milli(f_after - f_before);
  if (preview_cache_.size() > 16) preview_cache_.clear();
  preview_cache_.emplace_back(&pod, s.version << 8 | static_cast<uint64_t>(site), out);
  return out;
}

void FleetSim::advance(int64_t t) {
  if (t <= last_) return;
  const int64_t from = std::max(last_, options_.measure_from_s);
  const int64_t to = std::min(t, options_.measure_to_s);
  last_ = t;
  if (to <= from) return;
  for (SiteRuntime& s : sites_) {
    const double dt = static_cast<double>(to - from);
    accumulate(s, epoch_s(from), epoch_s(to), s.power->watts() + s.waking_watts);
    s.alloc_milli_seconds += static_cast<double>(s.cluster->allocated_gpu_milli()) * dt;
  }
}

void FleetSim::accumulate(SiteRuntime& s, int64_t from, int64_t to, double it_watts) {
  if (!s.spec->energy || s.spec->energy->pue.empty()) {
    const double watts = it_watts * s.spec->pue;
    s.energy_j += watts * static_cast<double>(to - from);
    s.carbon_g += watts * s.spec->carbon.integral(from, to) / 3.6e6;
    add_hourly(s, from, to, watts);
    return;
  }
  for (int64_t a = from; a < to;) {
    const int64_t b = std::min(to, floor_hour(a) + 3600);
    const double watts = it_watts * s.spec->pue_at(a);
    s.energy_j += watts * static_cast<double>(b - a);
    s.carbon_g += watts * s.spec->carbon.integral(a, b) / 3.6e6;
    add_hourly(s, a, b, watts);
    a = b;
  }
}

void FleetSim::add_hourly(SiteRuntime& s, int64_t from, int64_t to, double watts) {
  for (int64_t a = from; a < to;) {
    const int64_t b = std::min(to, floor_hour(a) + 3600);
    const auto h = static_cast<std::size_t>(std::max<int64_t>((floor_hour(a) - hour0_) / 3600, 0));
    if (s.hourly_kwh.size() <= h) s.hourly_kwh.resize(h + 1, 0.0);
    s.hourly_kwh[h] += watts * static_cast<double>(b - a) / 3.6e6;
    a = b;
  }
}

SignalView FleetSim::expected_signal(int site, int64_t from_s, int64_t to_s, double job_kw) const {
  const SiteSpec& spec = fleet_.sites[site];
  if (!spec.energy) return FleetView::expected_signal(site, from_s, to_s, job_kw);
  const double demand_kw = sites_[site].facility_watts(epoch_s(now_)) / 1000.0;
  return net_cache_.mean(spec, site, *forecaster_, epoch_s(now_), epoch_s(from_s), epoch_s(to_s),
                         demand_kw, job_kw);
}

void FleetSim::start_job(std::size_t site, std::size_t j, const policy::Decision& d) {
  SiteRuntime& s = sites_[site];
  Job& job = jobs_[j];
  const PodSpec& pod = *job.info.pod;
  s.pending_gpu_milli -= pod.total_gpu_milli();
  expect_ok(s.cluster->allocate(static_cast<PodId>(j), pod, d.node, d.gpus));
  s.power->update(*s.cluster, d.node);
  s.idle_since[d.node] = -1;
  ++s.running;
  ++s.version;
  job.start_s = now_;
  push(now_ + job.info.duration_s, EventKind::kJobEnd, j, site);
  if (options_.record) {
    records_[j]["chosen_node"] = s.cluster->spec(d.node).name;
    records_[j]["start_s"] = now_;
  }
}

void FleetSim::try_schedule(std::size_t site) {
  SiteRuntime& s = sites_[site];
  if (s.queued() == 0) return;
  // Latency-sensitive jobs first, then in the order they became ready; at most kScanLimit
  // of them per pass (a scheduler's active queue): a queue that grows without bound (an
  // agent sending everything to one site) then costs no more per event than a short one.
  constexpr std::size_t kScanLimit = 2048;
  std::vector<std::size_t> scanned;  // still waiting, in queue order
  bool newly_failed = false;
  for (std::list<std::size_t>* queue : {&s.ls_queue, &s.be_queue}) {
    for (auto it = queue->begin(); it != queue->end() && scanned.size() < kScanLimit;) {
      const std::size_t j = *it;
      const PodSpec& pod = *jobs_[j].info.pod;
      if (may_fit_again(s, jobs_[j])) {
        const policy::Decision d = s.scheduler->schedule(*s.cluster, pod, s.rng);
        if (d.node >= 0) {
          s.queued_gpu_milli -= pod.total_gpu_milli();
          start_job(site, j, d);
          it = queue->erase(it);
          continue;
        }
        jobs_[j].failed_at = s.freed.size();
        newly_failed = true;
      }
      scanned.push_back(j);
      ++it;
    }
  }
  if (options_.power_down_idle_s < 0 || scanned.empty()) return;
  // Claims only change when a job newly found no node or a node went to sleep.
  if (!newly_failed && s.wake_pass_sleep_epoch == s.sleep_epoch) return;
  s.wake_pass_sleep_epoch = s.sleep_epoch;

  // Each job still waiting claims a node being woken that could host it, or wakes one.
  std::vector<NodeIndex> unclaimed;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(s.cluster->size()); ++n) {
    if (s.waking[n]) unclaimed.push_back(n);
  }
  for (std::size_t j : scanned) {
    const PodSpec& pod = *jobs_[j].info.pod;
    auto claim = std::find_if(unclaimed.begin(), unclaimed.end(), [&](NodeIndex n) {
      NodeState on = s.cluster->state(n);
      on.online = true;
      return policy::filter_node(s.cluster->spec(n), on, pod) == policy::FilterReason::kFits;
    });
    if (claim != unclaimed.end()) {
      unclaimed.erase(claim);
      continue;
    }
    if (s.powered_down == 0) continue;
    const NodeIndex n = wakeable_node(s, pod);
    if (n < 0) continue;
    s.waking[n] = true;
    --s.powered_down;
    const power::NodePower& fig = (*s.figures)[n];
    const NodeState& st = s.cluster->state(n);
    s.waking_watts += power::node_power_watts(s.cluster->spec(n), fig, st.cpu_free_milli,
                                              st.gpu_free_milli.data());
    push(now_ + options_.wake_delay_s, EventKind::kNodeWake, site, static_cast<std::size_t>(n));
  }
}

void FleetSim::sample() {
  if (now_ > options_.measure_to_s) return;  // past the measured window: nothing to show
  if (!result_.timeline.empty() && result_.timeline.back().time_s == now_) return;
  FleetSample fleet_row;
  fleet_row.time_s = now_;
  fleet_row.site = -1;
  double fleet_gpus = 0;
  double fleet_carbon_rate = 0;
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    const SiteRuntime& s = sites_[i];
    FleetSample row;
    row.time_s = now_;
    row.site = static_cast<int>(i);
    row.power_watts = s.facility_watts(epoch_s(now_));
    row.energy_kwh = s.energy_j / 3.6e6;
    row.carbon_kg = s.carbon_g / 1000.0;
    row.carbon_intensity = s.spec->carbon.at(epoch_s(now_));
    row.running_jobs = s.running;
    row.queued_jobs = static_cast<int64_t>(s.queued());
    row.waiting_jobs = s.waiting;
    row.allocated_gpus = static_cast<double>(s.cluster->allocated_gpu_milli()) / kGpuMilli;
    const double cap = static_cast<double>(s.cluster->total_gpu_milli()) / kGpuMilli;
    row.gpu_alloc_pct = cap > 0 ? 100.0 * row.allocated_gpus / cap : 0.0;
    row.online_nodes = s.online_nodes();
    result_.timeline.push_back(row);
    fleet_row.power_watts += row.power_watts;
    fleet_row.energy_kwh += row.energy_kwh;
    fleet_row.carbon_kg += row.carbon_kg;
    fleet_carbon_rate += row.power_watts * row.carbon_intensity;
    fleet_row.running_jobs += row.running_jobs;
    fleet_row.queued_jobs += row.queued_jobs;
    fleet_row.waiting_jobs += row.waiting_jobs;
    fleet_row.allocated_gpus += row.allocated_gpus;
    fleet_gpus += cap;
    fleet_row.online_nodes += row.online_nodes;
  }
  fleet_row.carbon_intensity =
      fleet_row.power_watts > 0 ? fleet_carbon_rate / fleet_row.power_watts : 0;
  fleet_row.gpu_alloc_pct = fleet_gpus > 0 ? 100.0 * fleet_row.allocated_gpus / fleet_gpus : 0;
  result_.timeline.push_back(fleet_row);
}

Result<MultiResult> FleetSim::run(const std::vector<PodSpec>& pods, uint32_t shape_count) {
  const auto wall_start = std::chrono::steady_clock::now();
  pods_ = &pods;
  auto agent = make_agent(options_.agent, options_.agent_options);
  if (!agent.ok()) return Error{agent.error()};
  result_.agent = options_.agent + (options_.oracle ? " (oracle)" : "");
  if (options_.ls_bound_s < 0 || options_.be_slack_s < 0 || options_.wake_delay_s < 0 ||
      options_.sample_s <= 0) {
    return Error{"bounds, slack and delays must be non-negative and the sample step positive"};
  }

  // Sites: cluster, local policy with the fleet-wide target workload, power figures.
  const frag::TargetWorkload target = frag::build_target_workload(pods);
  Rng seeds(options_.seed);
  sites_.resize(fleet_.sites.size());
  std::vector<double> weights;
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
    s.rng = Rng(seeds.next());
    s.preview_rng = Rng(seeds.next());
    s.scheduler = std::make_unique<policy::Scheduler>(
        *s.policy, policy::random_tie_rank(s.cluster->size(), s.rng));
    s.power = std::make_unique<power::ClusterPower>(*s.figures, *s.cluster);
    s.idle_since.assign(s.cluster->size(), 0);
    s.waking.assign(s.cluster->size(), false);
    weights.push_back(static_cast<double>(std::max<int64_t>(s.cluster->total_gpu_milli(), 1)));
  }

  // Jobs, with a home site drawn in proportion to GPU capacity.
  double weight_total = 0;
  for (double w : weights) weight_total += w;
  Rng homes(seeds.next());
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
    double u = homes.uniform_real() * weight_total;
    info.home_site = static_cast<int>(weights.size()) - 1;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (u < weights[i]) {
        info.home_site = static_cast<int>(i);
        break;
      }
      u -= weights[i];
    }
    info.latency_sensitive = is_latency_sensitive(pod);
    info.submit_s = pod.creation_time;
    info.duration_s = pod.deletion_time - pod.creation_time;
    info.slack_s = info.latency_sensitive ? 0 : options_.be_slack_s;
    info.data_gb = options_.data_gb_per_job >= 0 ? options_.data_gb_per_job
                                                 : static_cast<double>(pod.memory_mib) / 1024.0;
    push(info.submit_s, EventKind::kJobSubmit, j);
  }
  // --predict-durations: each job's duration as predicted online from the jobs finished
  // before its submission (trace/job_predictor); used only for the agent's decision.
  if (options_.predict_durations) predicted_s_ = trace::predict_durations_online(pods);
  result_.jobs = static_cast<int64_t>(jobs_.size());
  result_.decisions.resize(jobs_.size());
  if (options_.record) records_.resize(jobs_.size());
  first_ = events_.empty() ? 0 : events_.top().time;
  now_ = last_ = first_;
  hour0_ = floor_hour(epoch_s(std::max(first_, options_.measure_from_s)));
  if (options_.power_down_idle_s >= 0) {
    for (std::size_t i = 0; i < sites_.size(); ++i) {
      for (std::size_t n = 0; n < sites_[i].cluster->size(); ++n) {
        sites_[i].idle_since[n] = first_;
        push(first_ + options_.power_down_idle_s, EventKind::kPowerDownCheck, i, n);
      }
    }
  }
  push(first_, EventKind::kSample, 0);

  while (!events_.empty()) {
    const Event e = events_.top();
    events_.pop();
    advance(e.time);
    now_ = e.time;
    switch (e.kind) {
      case EventKind::kJobSubmit: {
        ++jobs_submitted_;
        Job& job = jobs_[e.a];
        // --predict-durations: the agent sees the predicted duration, the job runs its true one.
        JobInfo predicted = job.info;
        if (!predicted_s_.empty()) predicted.duration_s = predicted_s_[e.a];
        Dispatch d = agent.value()->decide(predicted_s_.empty() ? job.info : predicted, *this);
        if (d.site < 0 || d.site >= static_cast<int>(sites_.size())) d.site = job.info.home_site;
        d.not_before_s = std::max(d.not_before_s, now_);
        if (!job.info.latency_sensitive) {
          d.not_before_s = std::min(d.not_before_s, job.info.submit_s + job.info.slack_s);
        } else {
          d.not_before_s = now_;
        }
        job.site = d.site;
        SiteRuntime& s = sites_[d.site];
        ++s.jobs;
        s.pending_gpu_milli += job.info.pod->total_gpu_milli();
        ++s.version;
        int64_t ready = d.not_before_s;
        if (d.site != job.info.home_site) {
          ++result_.jobs_moved;
          result_.gb_moved += job.info.data_gb;
          const double kwh = job.info.data_gb * s.spec->network.energy_kwh_per_gb;
          if (in_window(now_)) {
            result_.transfer_kwh += kwh;
            s.energy_j += kwh * 3.6e6;
            s.carbon_g += kwh * s.spec->carbon.at(epoch_s(now_));
            add_hourly(s, epoch_s(now_), epoch_s(now_) + 1, kwh * 3.6e6);  // kWh in this hour
          }
          ready = std::max(ready, now_ + static_cast<int64_t>(std::ceil(
                                             s.spec->network.transfer_seconds(job.info.data_gb))));
        }
        if (d.not_before_s > now_) ++result_.jobs_deferred;
        job.ready_s = ready;
        ++s.waiting;
        if (options_.record) {
          nlohmann::json r;
          r["kind"] = "dispatch";
          r["agent"] = result_.agent;
          r["pod"] = job.info.pod->name;
          r["qos"] = job.info.latency_sensitive ? "LS" : "BE";
          r["request"] = sim::request_json(*job.info.pod, fleet_.models);
          r["home_site"] = fleet_.sites[job.info.home_site].name;
          r["site"] = fleet_.sites[d.site].name;
          r["submit_s"] = now_;
          r["deferred_s"] = d.not_before_s - now_;
          r["slack_s"] = job.info.slack_s;
          r["reason"] = d.reason;
          nlohmann::json ci = nlohmann::json::object();
          for (const SiteSpec& site : fleet_.sites) ci[site.name] = site.carbon.at(epoch_s(now_));
          r["carbon_now"] = ci;
          nlohmann::json alternatives = nlohmann::json::array();
          for (const Alternative& a : d.alternatives) {
            alternatives.push_back({{"site", fleet_.sites[a.site].name},
                                    {"start_offset_s", a.start_s - now_},
                                    {"forecast_ci", a.forecast_ci},
                                    {"expected_g", a.expected_g}});
          }
          r["alternatives"] = alternatives;
          r["chosen_node"] = nullptr;
          r["start_s"] = nullptr;
          r["step"] = e.a;
          records_[e.a] = std::move(r);
        }
        result_.decisions[e.a] = JobDecision{job.info.pod->name,
                                             job.info.home_site,
                                             d.site,
                                             job.info.latency_sensitive,
                                             now_,
                                             d.not_before_s,
                                             -1,
                                             std::move(d.reason)};
        push(ready, EventKind::kJobReady, e.a);
        break;
      }
      case EventKind::kJobReady: {
        Job& job = jobs_[e.a];
        SiteRuntime& s = sites_[job.site];
        --s.waiting;
        (job.info.latency_sensitive ? s.ls_queue : s.be_queue).push_back(e.a);
        s.queued_gpu_milli += job.info.pod->total_gpu_milli();
        try_schedule(static_cast<std::size_t>(job.site));
        break;
      }
      case EventKind::kJobEnd: {
        Job& job = jobs_[e.a];
        SiteRuntime& s = sites_[e.b];
        const NodeIndex node = s.cluster->allocation_of(static_cast<PodId>(e.a))->node;
        expect_ok(s.cluster->release(static_cast<PodId>(e.a)));
        s.power->update(*s.cluster, node);
        --s.running;
        ++s.version;
        s.freed.push_back(node);
        job.done = true;
        ++jobs_done_;
        if (s.cluster->state(node).pods == 0) {
          s.idle_since[node] = now_;
          if (options_.power_down_idle_s >= 0) {
            push(now_ + options_.power_down_idle_s, EventKind::kPowerDownCheck, e.b,
                 static_cast<std::size_t>(node));
          }
        }
        try_schedule(e.b);
        break;
      }
      case EventKind::kNodeWake: {
        SiteRuntime& s = sites_[e.a];
        const auto node = static_cast<NodeIndex>(e.b);
        const power::NodePower& fig = (*s.figures)[node];
        const NodeState& st = s.cluster->state(node);
        s.waking_watts -= power::node_power_watts(s.cluster->spec(node), fig, st.cpu_free_milli,
                                                  st.gpu_free_milli.data());
        s.waking[node] = false;
        s.asleep_gpu_milli -= int64_t{s.cluster->spec(node).gpu_count} * kGpuMilli;
        expect_ok(s.cluster->set_online(node, true));
        s.power->update(*s.cluster, node);
        s.idle_since[node] = now_;
        ++s.version;
        s.freed.push_back(node);
        if (options_.power_down_idle_s >= 0) {
          push(now_ + options_.power_down_idle_s, EventKind::kPowerDownCheck, e.a, e.b);
        }
        try_schedule(e.a);
        break;
      }
      case EventKind::kPowerDownCheck: {
        SiteRuntime& s = sites_[e.a];
        const auto node = static_cast<NodeIndex>(e.b);
        const NodeState& st = s.cluster->state(node);
        if (st.online && st.pods == 0 && s.idle_since[node] >= 0 &&
            now_ - s.idle_since[node] >= options_.power_down_idle_s) {
          expect_ok(s.cluster->set_online(node, false));
          s.power->update(*s.cluster, node);
          ++s.version;
          ++s.powered_down;
          ++s.sleep_epoch;
          s.asleep_gpu_milli += int64_t{s.cluster->spec(node).gpu_count} * kGpuMilli;
        }
        break;
      }
      case EventKind::kSample: {
        sample();
        if (jobs_done_ < jobs_.size()) push(now_ + options_.sample_s, EventKind::kSample, 0);
        break;
      }
    }
    if (!broken_.ok()) return broken_.error();
    // Stop once every job that can still start has finished: only checks remain.
    if (jobs_done_ == jobs_.size() &&
        (events_.empty() || events_.top().kind == EventKind::kPowerDownCheck)) {
      break;
    }
    // Past the measured window with every job submitted and started: nothing left changes a
    // metric.
    if (now_ >= options_.measure_to_s && jobs_submitted_ == jobs_.size() && nothing_waits()) {
      break;
    }
  }
  sample();

  // Summary.
  std::vector<double> delays_ls, delays_be;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const Job& job = jobs_[j];
    result_.decisions[j].start_s = job.start_s;
    if (!in_window(job.info.submit_s)) continue;
    if (job.start_s < 0) {
      ++result_.jobs_never_started;
      if (job.info.latency_sensitive) ++result_.ls_slo_violations;
      continue;
    }
    const double delay = static_cast<double>(job.start_s - job.info.submit_s);
    if (job.info.latency_sensitive) {
      delays_ls.push_back(delay);
      if (delay > static_cast<double>(options_.ls_bound_s)) ++result_.ls_slo_violations;
    } else {
      delays_be.push_back(delay);
    }
  }
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  result_.mean_delay_s_ls = mean(delays_ls);
  result_.mean_delay_s_be = mean(delays_be);
  std::sort(delays_be.begin(), delays_be.end());
  std::sort(delays_ls.begin(), delays_ls.end());
  result_.p99_delay_s_be = delays_be.empty() ? 0.0 : trace::p99_nearest_rank(delays_be);
  result_.p99_delay_s_ls = delays_ls.empty() ? 0.0 : trace::p99_nearest_rank(delays_ls);
  double alloc_integral = 0, capacity = 0;
  for (const SiteRuntime& s : sites_) {
    result_.energy_kwh += s.energy_j / 3.6e6;
    result_.carbon_kg += s.carbon_g / 1000.0;
    result_.site_energy_kwh.push_back(s.energy_j / 3.6e6);
    result_.site_carbon_kg.push_back(s.carbon_g / 1000.0);
    result_.site_jobs.push_back(s.jobs);
    result_.site_hourly_kwh.push_back(s.hourly_kwh);
    alloc_integral += s.alloc_milli_seconds;
    capacity += static_cast<double>(s.cluster->total_gpu_milli());
  }
  std::size_t hours = 0;
  for (const auto& h : result_.site_hourly_kwh) hours = std::max(hours, h.size());
  for (auto& h : result_.site_hourly_kwh) h.resize(hours, 0.0);
  result_.energy_hour0_s = hours > 0 ? hour0_ : 0;
  const int64_t from = std::max(first_, options_.measure_from_s);
  const int64_t to = std::min(last_, options_.measure_to_s);
  const double span = static_cast<double>(std::max<int64_t>(to - from, 0));
  result_.window_s = span;
  result_.gpu_alloc_pct =
      span > 0 && capacity > 0 ? 100.0 * alloc_integral / (capacity * span) : 0.0;
  result_.offered_load_pct =
      trace::offered_load_pct(pods, static_cast<int64_t>(capacity), trace::LoadWindow{from, to});
  result_.target_load_pct = options_.target_load_pct;
  result_.be_slack_h = static_cast<double>(options_.be_slack_s) / 3600.0;
  for (const nlohmann::json& r : records_) {
    result_.records += r.dump();
    result_.records += '\n';
  }
  result_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return std::move(result_);
}

}  // namespace

Result<MultiResult> run_fleet(const Fleet& fleet, const std::vector<PodSpec>& pods,
                              uint32_t shape_count, const MultiOptions& options) {
  FleetSim sim(fleet, options);
  return sim.run(pods, shape_count);
}

}  // namespace greensched::multi
