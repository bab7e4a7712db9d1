// The fleet simulator's event handlers: a job's submission (the agent's dispatch) and its
// arrival at the site's queue; a best-effort job dispatched again when it has not started by
// its latest start (once: a job a site cannot place must not wait there for days, counted as
// its load); and what the fleet books when a site engine starts or stops a
// job (the queue, power states and scheduling pass are the engine's, sim/site_engine.hpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/utc_time.hpp"
#include "greensched/multi/fleet_sim_internal.hpp"
#include "greensched/sim/decision_record.hpp"

namespace greensched::multi::detail {

void FleetSim::begin_submit(std::size_t j) {
  ++jobs_submitted_;
  // --predict-durations: the agent sees the predicted duration, the job runs its true one.
  pending_.kind = Pending::Kind::kSubmit;
  pending_.job = j;
  pending_.info = jobs_[j].info;
  if (!predicted_s_.empty()) pending_.info.duration_s = predicted_s_[j];
}

int64_t FleetSim::move_data(const Job& job, SiteRuntime& s, int64_t ready) {
  ++result_.jobs_moved;
  result_.gb_moved += job.info.data_gb;
  const double kwh = job.info.data_gb * s.spec->network.energy_kwh_per_gb;
  if (in_window(now_)) {
    result_.transfer_kwh += kwh;
    s.energy_j += kwh * 3.6e6;
    s.carbon_g += kwh * s.spec->carbon.at(epoch_s(now_));
    if (s.spec->price) s.cost += kwh * s.spec->price->at(epoch_s(now_));
    add_hourly(s, epoch_s(now_), epoch_s(now_) + 1, kwh * 3.6e6);  // kWh in this hour
  }
  return std::max(ready, now_ + static_cast<int64_t>(
                                    std::ceil(s.spec->network.transfer_seconds(job.info.data_gb))));
}

void FleetSim::promise_hold(SiteRuntime& s, Job& job, int64_t to) {
  job.hold_from_s = now_;
  job.hold_to_s = std::max(to, now_ + 1);
  s.promise(job.hold_from_s, job.hold_to_s, Demand::of(*job.info.pod));
}

void FleetSim::record_dispatch(std::size_t j, const Dispatch& d) {
  const Job& job = jobs_[j];
  nlohmann::json r;
  r["kind"] = "dispatch";
  r["agent"] = result_.agent;
  r["pod"] = job.info.pod->name;
  r["qos"] = job.info.latency_sensitive ? "LS" : "BE";
  r["request"] = sim::request_json(*job.info.pod, fleet_.models);
  r["home_site"] = fleet_.sites[job.info.home_site].name;
  r["site"] = fleet_.sites[d.site].name;
  r["submit_s"] = now_;
  r["submit_utc"] = format_utc_time(epoch_s(now_));
  r["deferred_s"] = d.not_before_s - now_;
  // Seconds its data takes to move there (0 at home): part of deferred_s.
  r["transfer_s"] = d.site == job.info.home_site
                        ? int64_t{0}
                        : static_cast<int64_t>(std::ceil(
                              fleet_.sites[d.site].network.transfer_seconds(job.info.data_gb)));
  r["slack_s"] = job.info.slack_s;
  r["reason"] = d.reason;
  nlohmann::json ci = nlohmann::json::object();
  for (const SiteSpec& site : fleet_.sites) ci[site.name] = site.carbon.at(epoch_s(now_));
  r["carbon_now"] = ci;
  nlohmann::json alternatives = nlohmann::json::array();
  for (const Alternative& a : d.alternatives) {
    alternatives.push_back(alternative_json(a, fleet_, now_));
  }
  r["alternatives"] = alternatives;
  if (d.home_now) r["home_now"] = alternative_json(*d.home_now, fleet_, now_);
  if (d.now_best) r["now_best"] = alternative_json(*d.now_best, fleet_, now_);
  // What the agent believed of each site's grid over the job's slack (its possible starts and
  // the hour after the last), and what the grid then did.
  const int64_t until = now_ + job.info.slack_s + 3600;
  r["forecast"] = carbon_curve_json(*this, until, false);
  r["actual"] = carbon_curve_json(*this, until, true);
  r["chosen_node"] = nullptr;
  r["start_s"] = nullptr;
  r["step"] = j;
  records_[j] = std::move(r);
}

void FleetSim::end_submit(std::size_t j, Dispatch d) {
  Job& job = jobs_[j];
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
  const Demand demand = Demand::of(*job.info.pod);
  // When its data is there (now at home): a start no later is a start on arrival, a later one
  // a deferral.
  const int64_t arrival =
      d.site == job.info.home_site
          ? now_
          : now_ +
                static_cast<int64_t>(std::ceil(s.spec->network.transfer_seconds(job.info.data_gb)));
  const bool deferred = d.not_before_s > arrival;
  if (deferred) {
    // Deferred: no capacity held now, only over the hours it is planned to run.
    job.planned = true;
    job.planned_from_s = d.not_before_s;
    s.promise(d.not_before_s, d.not_before_s + known_duration(j), demand);
  } else {
    s.pending += demand;
  }
  ++s.version;
  int64_t ready = d.not_before_s;
  if (d.site != job.info.home_site) {
    ready = move_data(job, s, ready);
    // A job to start on arrival holds a node there while its data moves, waking one now if
    // none is free, so the wake-up runs during the transfer, and what is dispatched after it
    // sees the node taken. Whatever its class: a best-effort job that found its room gone on
    // arrival would wait to its latest start and be dispatched again.
    if (!deferred) {
      job.held = s.engine->hold_for(static_cast<PodId>(j), now_, s.preview_rng);
      // Reserved room is allocated already: not pending as well, and promised from now to
      // the end of its run.
      if (s.engine->reserved(static_cast<PodId>(j))) {
        s.pending -= demand;
        promise_hold(s, job, ready + known_duration(j));
      }
    }
  }
  if (deferred) ++result_.jobs_deferred;
  ++s.waiting;
  if (options_.record) record_dispatch(j, d);
  result_.decisions[j] = JobDecision{job.info.pod->name,
                                     job.info.home_site,
                                     d.site,
                                     job.info.latency_sensitive,
                                     now_,
                                     d.not_before_s,
                                     -1,
                                     std::move(d.reason)};
  push(ready, EventKind::kJobReady, j);
}

void FleetSim::on_ready(std::size_t j) {
  Job& job = jobs_[j];
  SiteRuntime& s = sites_[job.site];
  --s.waiting;
  if (job.hold_to_s > job.hold_from_s) {  // arrived: its run is promised when it starts
    s.promise(job.hold_from_s, job.hold_to_s, -Demand::of(*job.info.pod));
    job.hold_from_s = job.hold_to_s = 0;
  }
  if (job.held >= 0 && s.engine->reserved(static_cast<PodId>(j))) {
    // Its room was reserved when it was dispatched: it starts there now.
    job.held = -1;
    ++s.version;
    s.pending += Demand::of(*job.info.pod);  // on_started takes it off
    expect_ok(s.engine->start_reserved(static_cast<PodId>(j), now_));
    return;
  }
  if (job.planned) {
    // Due: its plan leaves the ledger and it holds capacity until it starts.
    const Demand demand = Demand::of(*job.info.pod);
    s.promise(job.planned_from_s, job.planned_from_s + known_duration(j), -demand);
    s.pending += demand;
    job.planned = false;
  }
  ++s.version;
  // A scheduling cycle as it arrives, so that the decisions after it see it placed.
  s.engine->enqueue(static_cast<PodId>(j), ready_rank_++);
  if (job.held >= 0) {
    // Its held node joins the cluster now, or when its wake-up ends, and takes it first.
    expect_ok(s.engine->arrive_held(static_cast<PodId>(j), job.held, now_));
    job.held = -1;
  }
  expect_ok(s.engine->schedule(now_));
  // A best-effort job still waiting at its latest start is chosen for again then.
  if (!job.info.latency_sensitive && !job.chosen_again && job.start_s < 0 && !job.done) {
    push(std::max(now_, job.info.submit_s + job.info.slack_s), EventKind::kLatestStart, j);
  }
}

bool FleetSim::begin_latest_start(std::size_t j) {
  Job& job = jobs_[j];
  SiteRuntime& from = sites_[job.site];
  // Started (and maybe evicted since: it waits where it ran), or chosen for again already.
  if (job.done || job.chosen_again || from.engine->first_start(static_cast<PodId>(j)) >= 0) {
    return false;
  }
  job.chosen_again = true;
  // The agent chooses where it starts now, from where its data is; the site it waits at
  // sees it out of its queue while it does.
  from.pending -= Demand::of(*job.info.pod);
  ++from.version;
  pending_.kind = Pending::Kind::kLatestStart;
  pending_.job = j;
  JobInfo& info = pending_.info;
  info = job.info;
  if (!predicted_s_.empty()) info.duration_s = predicted_s_[j];
  info.home_site = job.site;
  info.submit_s = now_;
  info.slack_s = 0;
  info.again = true;
  return true;
}

void FleetSim::end_latest_start(std::size_t j, const Dispatch& d) {
  Job& job = jobs_[j];
  SiteRuntime& from = sites_[job.site];
  const auto id = static_cast<PodId>(j);
  const Demand demand = Demand::of(*job.info.pod);
  if (d.site < 0 || d.site >= static_cast<int>(sites_.size()) || d.site == job.site ||
      !from.engine->withdraw(id)) {
    from.pending += demand;  // it waits where it is
    ++from.version;
    return;
  }
  --from.jobs;
  ++result_.jobs_redispatched;
  SiteRuntime& to = sites_[d.site];
  ++to.jobs;
  to.pending += demand;
  ++to.waiting;
  ++to.version;
  const int64_t ready = move_data(job, to, now_);
  // It is due: it holds a node there while its data moves, as in end_submit.
  job.held = to.engine->hold_for(id, now_, to.preview_rng);
  if (to.engine->reserved(id)) {
    to.pending -= demand;
    promise_hold(to, job, ready + known_duration(j));
  }
  const std::string& from_name = fleet_.sites[job.site].name;
  job.site = d.site;
  JobDecision& decision = result_.decisions[j];
  decision.site = d.site;
  decision.reason +=
      fmt::format("; not started at {} by its latest start, {}", from_name, d.reason);
  if (options_.record) {
    records_[j]["site"] = fleet_.sites[d.site].name;
    records_[j]["redispatch"] = {{"at_s", now_},
                                 {"from_site", from_name},
                                 {"site", fleet_.sites[d.site].name},
                                 {"reason", d.reason}};
  }
  push(ready, EventKind::kJobReady, j);
}

void FleetSim::on_sample() {
  sample();
  if (jobs_done_ < jobs_.size()) push(now_ + options_.sample_s, EventKind::kSample, 0);
}

void SiteHooks::on_start(PodId id, NodeIndex node, int64_t) {
  sim->on_started(site, id, node);
}

void SiteHooks::on_stop(PodId id, NodeIndex, int64_t, bool finished) {
  sim->on_stopped(site, id, finished);
}

void FleetSim::on_started(std::size_t site, std::size_t j, NodeIndex node) {
  SiteRuntime& s = sites_[site];
  Job& job = jobs_[j];
  const Demand demand = Demand::of(*job.info.pod);
  const int64_t milli = demand.gpu_milli;
  s.pending -= demand;
  ++s.version;
  job.start_s = now_;
  if (!job.started_once) {
    job.started_once = true;
    if (job.info.latency_sensitive && in_window(job.info.submit_s) &&
        now_ - job.info.submit_s > options_.ls_bound_s) {
      ++ls_started_late_;
    }
  }
  s.promise(now_, now_ + known_duration(j), demand);
  if (job.info.latency_sensitive) {
    s.ls_ledger.add(now_, now_ + known_duration(j), milli);
    s.ls_alloc_milli += milli;
  }
  if (options_.record && records_[j]["start_s"].is_null()) {
    records_[j]["chosen_node"] = s.cluster->spec(node).name;
    records_[j]["start_s"] = now_;
  }
}

void FleetSim::on_stopped(std::size_t site, std::size_t j, bool finished) {
  SiteRuntime& s = sites_[site];
  Job& job = jobs_[j];
  const Demand demand = Demand::of(*job.info.pod);
  const int64_t milli = demand.gpu_milli;
  const int64_t expected_end = job.start_s + known_duration(j);
  s.promise(job.start_s, expected_end, -demand);
  if (job.info.latency_sensitive) {
    s.ls_ledger.add(job.start_s, expected_end, -milli);
    s.ls_alloc_milli -= milli;
  }
  ++s.version;
  if (finished && options_.record) {
    // What then happened: when its (last) run ended and the grid's mean intensity over it.
    records_[j]["end_s"] = now_;
    records_[j]["run_ci"] =
        s.spec->carbon.mean(epoch_s(job.start_s), epoch_s(std::max(now_, job.start_s + 1)));
  }
  job.start_s = -1;
  if (finished) {
    job.done = true;
    ++jobs_done_;
  } else {
    // Evicted for a latency-sensitive job (--preempt-be): it waits again, from the beginning.
    s.pending += demand;
    ++result_.be_preemptions;
  }
}

}  // namespace greensched::multi::detail
