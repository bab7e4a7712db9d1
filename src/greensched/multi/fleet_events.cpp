// The fleet simulator's event handlers: a job's submission (the agent's dispatch), its
// arrival at the site's queue, its end; a node waking or found idle long enough to power
// down; and the local scheduling pass these trigger.
#include <algorithm>
#include <cmath>
#include <list>

#include <nlohmann/json.hpp>

#include "greensched/multi/fleet_sim_internal.hpp"
#include "greensched/sim/decision_record.hpp"

namespace greensched::multi::detail {

Dispatch FleetSim::decide(std::size_t j, DispatchAgent& agent) {
  const Job& job = jobs_[j];
  // --predict-durations: the agent sees the predicted duration, the job runs its true one.
  JobInfo predicted = job.info;
  if (!predicted_s_.empty()) predicted.duration_s = predicted_s_[j];
  Dispatch d = agent.decide(predicted_s_.empty() ? job.info : predicted, *this);
  if (d.site < 0 || d.site >= static_cast<int>(sites_.size())) d.site = job.info.home_site;
  d.not_before_s = std::max(d.not_before_s, now_);
  if (!job.info.latency_sensitive) {
    d.not_before_s = std::min(d.not_before_s, job.info.submit_s + job.info.slack_s);
  } else {
    d.not_before_s = now_;
  }
  return d;
}

int64_t FleetSim::move_data(const Job& job, SiteRuntime& s, int64_t ready) {
  ++result_.jobs_moved;
  result_.gb_moved += job.info.data_gb;
  const double kwh = job.info.data_gb * s.spec->network.energy_kwh_per_gb;
  if (in_window(now_)) {
    result_.transfer_kwh += kwh;
    s.energy_j += kwh * 3.6e6;
    s.carbon_g += kwh * s.spec->carbon.at(epoch_s(now_));
    add_hourly(s, epoch_s(now_), epoch_s(now_) + 1, kwh * 3.6e6);  // kWh in this hour
  }
  return std::max(ready, now_ + static_cast<int64_t>(
                                    std::ceil(s.spec->network.transfer_seconds(job.info.data_gb))));
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
  r["step"] = j;
  records_[j] = std::move(r);
}

void FleetSim::on_submit(std::size_t j, DispatchAgent& agent) {
  ++jobs_submitted_;
  Job& job = jobs_[j];
  Dispatch d = decide(j, agent);
  job.site = d.site;
  SiteRuntime& s = sites_[d.site];
  ++s.jobs;
  const int64_t milli = job.info.pod->total_gpu_milli();
  if (d.not_before_s > now_) {
    // Deferred: no capacity held now, only over the hours it is planned to run.
    job.planned = true;
    job.planned_from_s = d.not_before_s;
    s.ledger.add(d.not_before_s, d.not_before_s + known_duration(j), milli);
  } else {
    s.pending_gpu_milli += milli;
  }
  ++s.version;
  int64_t ready = d.not_before_s;
  if (d.site != job.info.home_site) {
    ready = move_data(job, s, ready);
    // A latency-sensitive job holds a node there while its data moves, waking one now if
    // none is free, so the wake-up runs during the transfer.
    if (job.info.latency_sensitive) hold_node_for(static_cast<std::size_t>(d.site), j);
  }
  if (d.not_before_s > now_) ++result_.jobs_deferred;
  job.ready_s = ready;
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
  if (job.held >= 0) {
    // Its held node joins the cluster now, or when its wake-up ends.
    const NodeIndex n = job.held;
    s.held[n] = false;
    job.held = -1;
    if (s.held_awake[n]) {
      s.held_awake[n] = false;
      bring_online(static_cast<std::size_t>(job.site), n);
    }
  }
  if (job.planned) {
    // Due: its plan leaves the ledger and it holds capacity until it starts.
    const int64_t milli = job.info.pod->total_gpu_milli();
    s.ledger.add(job.planned_from_s, job.planned_from_s + known_duration(j), -milli);
    s.pending_gpu_milli += milli;
    job.planned = false;
    ++s.version;
  }
  (job.info.latency_sensitive ? s.ls_queue : s.be_queue).push_back(j);
  s.queued_gpu_milli += job.info.pod->total_gpu_milli();
  try_schedule(static_cast<std::size_t>(job.site));
}

void FleetSim::on_job_end(std::size_t j, std::size_t site) {
  Job& job = jobs_[j];
  // The end of a run that was preempted: the job waits again or runs anew.
  if (job.done || job.start_s < 0 || now_ != job.start_s + job.info.duration_s) return;
  stop_job(site, j);
  job.done = true;
  ++jobs_done_;
  try_schedule(site);
}

void FleetSim::stop_job(std::size_t site, std::size_t j) {
  SiteRuntime& s = sites_[site];
  const NodeIndex node = s.cluster->allocation_of(static_cast<PodId>(j))->node;
  expect_ok(s.cluster->release(static_cast<PodId>(j)));
  const Job& job = jobs_[j];
  const int64_t milli = job.info.pod->total_gpu_milli();
  const int64_t expected_end = job.start_s + known_duration(j);
  s.ledger.add(job.start_s, expected_end, -milli);
  if (job.info.latency_sensitive) {
    s.ls_ledger.add(job.start_s, expected_end, -milli);
    s.ls_alloc_milli -= milli;
  }
  std::vector<std::size_t>& on_node = s.node_jobs[node];
  on_node.erase(std::find(on_node.begin(), on_node.end(), j));
  s.power->update(*s.cluster, node);
  --s.running;
  ++s.version;
  s.freed.push_back(node);
  if (s.cluster->state(node).pods == 0) {
    s.idle_since[node] = now_;
    if (options_.power_down_idle_s >= 0) {
      push(now_ + options_.power_down_idle_s, EventKind::kPowerDownCheck, site,
           static_cast<std::size_t>(node));
    }
  }
}

void FleetSim::on_node_wake(std::size_t site, std::size_t index) {
  SiteRuntime& s = sites_[site];
  const auto node = static_cast<NodeIndex>(index);
  if (s.held[node]) {
    s.held_awake[node] = true;  // awake, still held until its job arrives
    return;
  }
  bring_online(site, node);
  try_schedule(site);
}

void FleetSim::bring_online(std::size_t site, NodeIndex node) {
  SiteRuntime& s = sites_[site];
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
    push(now_ + options_.power_down_idle_s, EventKind::kPowerDownCheck, site,
         static_cast<std::size_t>(node));
  }
}

void FleetSim::hold_node_for(std::size_t site, std::size_t j) {
  SiteRuntime& s = sites_[site];
  const PodSpec& pod = *jobs_[j].info.pod;
  const policy::Decision d = s.scheduler->schedule(*s.cluster, pod, s.preview_rng);
  if (d.node >= 0) {
    if (s.cluster->state(d.node).pods > 0) return;  // shares a busy node: nothing to hold
    // Taken out of the cluster as if waking, drawing its idle power, until the job arrives.
    const NodeIndex n = d.node;
    const NodeState& st = s.cluster->state(n);
    s.waking_watts += power::node_power_watts(s.cluster->spec(n), (*s.figures)[n],
                                              st.cpu_free_milli, st.gpu_free_milli.data());
    expect_ok(s.cluster->set_online(n, false));
    s.power->update(*s.cluster, n);
    s.waking[n] = true;
    s.asleep_gpu_milli += int64_t{s.cluster->spec(n).gpu_count} * kGpuMilli;
    s.held[n] = s.held_awake[n] = true;
    jobs_[j].held = n;
    ++s.version;
    return;
  }
  const NodeIndex n = wake_node_for(site, pod);
  if (n < 0) return;
  s.held[n] = true;
  s.held_awake[n] = false;
  jobs_[j].held = n;
}

void FleetSim::on_power_down_check(std::size_t site, std::size_t index) {
  SiteRuntime& s = sites_[site];
  const auto node = static_cast<NodeIndex>(index);
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
}

void FleetSim::on_sample() {
  sample();
  if (jobs_done_ < jobs_.size()) push(now_ + options_.sample_s, EventKind::kSample, 0);
}

void FleetSim::start_job(std::size_t site, std::size_t j, const policy::Decision& d) {
  SiteRuntime& s = sites_[site];
  Job& job = jobs_[j];
  const PodSpec& pod = *job.info.pod;
  s.pending_gpu_milli -= pod.total_gpu_milli();
  expect_ok(s.cluster->allocate(static_cast<PodId>(j), pod, d.node, d.gpus));
  s.node_jobs[d.node].push_back(j);
  s.power->update(*s.cluster, d.node);
  s.idle_since[d.node] = -1;
  ++s.running;
  ++s.version;
  job.start_s = now_;
  const int64_t milli = pod.total_gpu_milli();
  s.ledger.add(now_, now_ + known_duration(j), milli);
  if (job.info.latency_sensitive) {
    s.ls_ledger.add(now_, now_ + known_duration(j), milli);
    s.ls_alloc_milli += milli;
  }
  push(now_ + job.info.duration_s, EventKind::kJobEnd, j, site);
  if (options_.record) {
    records_[j]["chosen_node"] = s.cluster->spec(d.node).name;
    records_[j]["start_s"] = now_;
  }
}

std::vector<std::size_t> FleetSim::start_queued(std::size_t site, bool& newly_failed) {
  SiteRuntime& s = sites_[site];
  // Latency-sensitive jobs first, then in the order they became ready; at most kScanLimit
  // of them per pass (a scheduler's active queue): a queue that grows without bound (an
  // agent sending everything to one site) then costs no more per event than a short one.
  constexpr std::size_t kScanLimit = 2048;
  std::vector<std::size_t> scanned;  // still waiting, in queue order
  for (std::list<std::size_t>* queue : {&s.ls_queue, &s.be_queue}) {
    for (auto it = queue->begin(); it != queue->end() && scanned.size() < kScanLimit;) {
      const std::size_t j = *it;
      const PodSpec& pod = *jobs_[j].info.pod;
      if (may_fit_again(s, jobs_[j])) {
        policy::Decision d = s.scheduler->schedule(*s.cluster, pod, s.rng);
        if (d.node < 0 && options_.preempt_be && jobs_[j].info.latency_sensitive &&
            preempt_for(site, j)) {
          d = s.scheduler->schedule(*s.cluster, pod, s.rng);
        }
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
  return scanned;
}

void FleetSim::try_schedule(std::size_t site) {
  SiteRuntime& s = sites_[site];
  if (s.queued() == 0) return;
  bool newly_failed = false;
  const std::vector<std::size_t> scanned = start_queued(site, newly_failed);
  if (options_.power_down_idle_s < 0 || scanned.empty()) return;
  // Claims only change when a job newly found no node or a node went to sleep.
  if (!newly_failed && s.wake_pass_sleep_epoch == s.sleep_epoch) return;
  s.wake_pass_sleep_epoch = s.sleep_epoch;
  wake_for(site, scanned);
}

void FleetSim::wake_for(std::size_t site, const std::vector<std::size_t>& waiting) {
  SiteRuntime& s = sites_[site];
  std::vector<NodeIndex> unclaimed;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(s.cluster->size()); ++n) {
    if (s.waking[n] && !s.held[n]) unclaimed.push_back(n);
  }
  for (std::size_t j : waiting) {
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
    wake_node_for(site, pod);
  }
}

NodeIndex FleetSim::wake_node_for(std::size_t site, const PodSpec& pod) {
  SiteRuntime& s = sites_[site];
  if (s.powered_down == 0) return -1;
  const NodeIndex n = wakeable_node(s, pod);
  if (n < 0) return -1;
  s.waking[n] = true;
  --s.powered_down;
  const power::NodePower& fig = (*s.figures)[n];
  const NodeState& st = s.cluster->state(n);
  s.waking_watts +=
      power::node_power_watts(s.cluster->spec(n), fig, st.cpu_free_milli, st.gpu_free_milli.data());
  push(now_ + options_.wake_delay_s, EventKind::kNodeWake, site, static_cast<std::size_t>(n));
  return n;
}

}  // namespace greensched::multi::detail
