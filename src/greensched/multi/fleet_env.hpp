// The dispatch decision of a fleet run as a reinforcement-learning environment: episodes
// (a fleet and a workload per seed, built as `greensched multi` builds them), a fixed-size
// observation of the fleet and the job to dispatch, a discrete action (site x start slot)
// with a mask of the valid ones, and a reward that adds up to minus the run's measured
// carbon (or cost) and a penalty per LS SLO violation. The run is a FleetStepper: the same
// event loop as run_fleet. The Python package wraps it as the Gymnasium environment
// greensched/FleetDispatch-v0 and a PettingZoo parallel environment (docs/PYTHON.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/multi/agent.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/fleet_stepper.hpp"
#include "greensched/multi/learned_forecaster.hpp"

namespace greensched::multi {

struct FleetEnvOptions {
  // Episodes: as `greensched multi` runs them. Empty fleet_path: the built-in fleet; empty
  // pods_path: the built-in pod shapes with synthetic times; load_pct > 0: a generated load
  // of that % of the fleet's GPUs over `days` (default 14) after `warmup_days`; start: the
  // measured window's first instant (UTC, e.g. 2023-07-01).
  std::string fleet_path, data_dir, pods_path, start;
  double load_pct = 0;
  double days = 0;  // 0: 14 with a load, else 30
  double warmup_days = 1;
  double slack_h = 12;
  int64_t ls_bound_s = 600;
  int64_t wake_delay_s = 300;
  int64_t power_down_idle_s = -1;
  int64_t sample_s = 3600;
  double data_gb = -1;
  bool preempt_be = false;
  // Start slots: now and the next `horizon_h` hour boundaries (-1: ceil(slack_h)).
  int horizon_h = -1;
  // Reward: minus carbon (kg) or minus electricity cost (price-series units), minus
  // ls_penalty per LS SLO violation. The step's carbon or cost is what the fleet emitted or
  // paid since the previous decision (the return adds up to the run's measured total).
  bool reward_cost = false;
  double ls_penalty = 10.0;
  // Instead (reward "dispatch-carbon"): each step is charged, at once, minus the carbon (kg)
  // its job is expected to emit at the chosen site and start (its facility power there over
  // its run at the forecast intensity, as green counts it, plus moving its data), minus
  // ls_penalty per LS SLO violation that arose since the previous decision.
  bool reward_at_dispatch = false;
  // Mask options. ls_home: a latency-sensitive job may only start now at its home site (as
  // local places it). room: every job only where the site has room for it as green judges
  // it: an LS job at the sites it can reach within its bound that have room now (has_room),
  // a BE job at the starts where the site's expected load with it and the LS reserve stays
  // within AgentOptions::be_max_fill (has_be_room); and the earliest start only where a node
  // takes the job now or wakes for it (marginal_watts finite). Where none qualifies, the job
  // starts now at home.
  bool ls_home = false;
  bool room = false;
  // A built-in agent consulted at every decision (expert_action), or empty.
  std::string expert;
  // The carbon and price forecasts of the observation, the expert and the "dispatch-carbon"
  // reward: "same-hour", or "learned" (`multi --forecast learned`: the mpc's learned models,
  // trained once per window on the fleet's series before it, kept across episodes).
  std::string forecast = "same-hour";
};

class FleetEnv {
 public:
  static Result<std::unique_ptr<FleetEnv>> make(const FleetEnvOptions& options);

  int sites() const { return static_cast<int>(fleet_.sites.size()); }
  int slots() const { return horizon_h_ + 1; }
  int actions() const { return sites() * slots(); }
  int obs_size() const { return sites() * site_block() + job_block() + 2; }
  const Fleet& fleet() const { return fleet_; }

  // A new episode for `seed`; then the first job is offered.
  [[nodiscard]] Status reset(uint64_t seed);
  // Dispatches the offered job by `action` (any in [0, actions()): outside the mask it is
  // applied with the run's bounds) and runs to the next one. Returns the reward.
  [[nodiscard]] Result<double> step(int action);
  bool done() const { return !stepper_ || stepper_->done(); }

  // The current observation, mask and expert action (valid while !done(); after the end the
  // observation and mask of the last job stay).
  void observe(float* out) const;
  void mask(uint8_t* out) const;
  int expert_action() const { return expert_action_; }
  // The action the built-in agent `name` (make_agent's names) chooses for the offered job.
  // Each agent is made at its first call in an episode and asked once per decision (the
  // answer is kept for that decision); an agent that keeps state sees only the decisions it
  // was asked about, so replaying an agent means asking it at every step.
  [[nodiscard]] Result<int> agent_action(std::string_view name);
  // The action a Dispatch (site, not_before_s) of the offered job corresponds to.
  int action_of(const Dispatch& d) const;
  const JobInfo& job() const { return stepper_->job(); }
  int64_t now_s() const { return stepper_->view().now_s(); }
  const MultiResult& result() const { return stepper_->result(); }
  double total_reward() const { return total_; }

 private:
  FleetEnv() = default;
  int site_block() const { return 3 + 2 * slots(); }
  int job_block() const { return 6 + sites(); }
  // Start candidates of the offered job at `site` (agents' start_candidates, hourly).
  std::vector<int64_t> starts(int site) const;
  Dispatch dispatch_of(int action) const;
  // The carbon (kg) the offered job is expected to emit if it starts at `start` at `site`.
  double expected_kg(int site, int64_t start) const;
  void offer();  // computes the expert action for the new job
  double measured() const;

  FleetEnvOptions options_;
  int horizon_h_ = 12;
  Fleet fleet_;
  std::vector<PodSpec> file_pods_;  // pods_path read once
  int64_t capacity_milli_ = 0;
  std::unique_ptr<FleetStepper> stepper_;
  std::unique_ptr<LearnedForecastsByWindow> learned_;  // forecast "learned"
  struct Consulted {
    std::string name;
    std::unique_ptr<DispatchAgent> agent;
    int64_t decision = -1;  // the decision its action answers
    int action = -1;
  };
  std::vector<Consulted> agents_;  // this episode's, expert first
  int64_t decision_ = 0;           // decisions offered in this episode
  int expert_action_ = -1;
  double last_measured_ = 0;  // carbon kg or cost so far
  int64_t last_violations_ = 0;
  double total_ = 0;
};

}  // namespace greensched::multi
