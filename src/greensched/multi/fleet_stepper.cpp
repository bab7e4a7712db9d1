// FleetStepper: FleetSim's begin / next_decision / apply / finish behind a public class.
#include "greensched/multi/fleet_stepper.hpp"

#include "greensched/multi/fleet_sim_internal.hpp"

namespace greensched::multi {

Result<std::unique_ptr<FleetStepper>> FleetStepper::start(Fleet fleet, std::vector<PodSpec> pods,
                                                          uint32_t shape_count,
                                                          const MultiOptions& options) {
  std::unique_ptr<FleetStepper> s(new FleetStepper());
  s->fleet_ = std::make_unique<Fleet>(std::move(fleet));
  s->pods_ = std::make_unique<std::vector<PodSpec>>(std::move(pods));
  s->sim_ = std::make_unique<detail::FleetSim>(*s->fleet_, options);
  if (Status st = s->sim_->begin(*s->pods_, shape_count); !st.ok()) return st.error();
  if (Status st = s->run_to_decision(); !st.ok()) return st.error();
  return s;
}

FleetStepper::~FleetStepper() = default;

Status FleetStepper::run_to_decision() {
  Result<bool> more = sim_->next_decision();
  if (!more.ok()) return more.status();
  if (more.value()) return Status::Ok();
  auto r = sim_->finish();
  if (!r.ok()) return r.status();
  result_ = std::move(r.value());
  done_ = true;
  return Status::Ok();
}

const JobInfo& FleetStepper::job() const {
  return sim_->pending();
}

const FleetView& FleetStepper::view() const {
  return *sim_;
}

Status FleetStepper::decide(Dispatch d) {
  if (done_) return Error{"the run has ended"};
  sim_->apply(std::move(d));
  return run_to_decision();
}

double FleetStepper::carbon_g() const {
  return sim_->carbon_g();
}

double FleetStepper::cost() const {
  return sim_->cost();
}

int64_t FleetStepper::ls_started_late() const {
  return sim_->ls_started_late();
}

}  // namespace greensched::multi
