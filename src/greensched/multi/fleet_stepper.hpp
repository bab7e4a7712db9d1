// A fleet run driven one dispatch at a time by its caller instead of an agent: the run stops
// at each job an agent would dispatch, the caller reads the job and the fleet (FleetView)
// and hands back the dispatch, and the run goes on to the next one. It is run_fleet's own
// event loop (run_fleet is this with a built-in agent), so a caller that dispatches as an
// agent would gets that agent's result exactly. Used by the reinforcement-learning
// environments of the Python package.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/multi/agent.hpp"
#include "greensched/multi/fleet.hpp"
#include "greensched/multi/fleet_sim.hpp"

namespace greensched::multi {

namespace detail {
class FleetSim;
}

class FleetStepper {
 public:
  // Sets the run up (as run_fleet does with `options`; options.agent only names the result)
  // and runs it to its first decision.
  static Result<std::unique_ptr<FleetStepper>> start(Fleet fleet, std::vector<PodSpec> pods,
                                                     uint32_t shape_count,
                                                     const MultiOptions& options);
  ~FleetStepper();
  FleetStepper(const FleetStepper&) = delete;
  FleetStepper& operator=(const FleetStepper&) = delete;

  // Whether the run has ended (result() is then final).
  bool done() const { return done_; }
  // The job to dispatch now (while !done()), with the duration the agents know.
  const JobInfo& job() const;
  const FleetView& view() const;
  // Books the dispatch of job() (bounds enforced as for an agent: an LS job starts now, a BE
  // job within its slack, an unknown site is the home site) and runs to the next decision.
  [[nodiscard]] Status decide(Dispatch d);
  // Inside the measured window so far: carbon (g) and electricity cost (at the sites' price
  // series), and LS jobs that have started later than the bound. At the end, result() has
  // the totals (LS violations then also count LS jobs that never started).
  double carbon_g() const;
  double cost() const;
  int64_t ls_started_late() const;
  const MultiResult& result() const { return result_; }
  const Fleet& fleet() const { return *fleet_; }

 private:
  FleetStepper() = default;
  Status run_to_decision();

  std::unique_ptr<Fleet> fleet_;
  std::unique_ptr<std::vector<PodSpec>> pods_;
  std::unique_ptr<detail::FleetSim> sim_;
  MultiResult result_;
  bool done_ = false;
};

}  // namespace greensched::multi
