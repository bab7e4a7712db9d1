#include <memory>

#include <fmt/format.h>

#include "greensched/multi/agents/agents.hpp"

namespace greensched::multi {
namespace {

// Runs a schedule made in advance: each job at the site and delay given for it
// (AgentOptions::schedule, by JobInfo::index). With the fleet bound's (`multi
// --bound-schedule`: each job where the bound's capacity prices put it, first come first placed
// within the bound's capacities) it shows what a schedule the fluid fleet can run does on the
// sites' own schedulers. A job the schedule has no start for, or one chosen for again, stays
// home and starts now.
class BoundScheduleAgent final : public DispatchAgent {
 public:
  explicit BoundScheduleAgent(std::shared_ptr<const std::vector<WholeJobStart>> schedule)
      : schedule_(std::move(schedule)) {}
  std::string_view name() const override { return "bound-schedule"; }
  Dispatch decide(const JobInfo& job, const FleetView& view) override {
    const int64_t now = view.now_s();
    if (!job.again && job.index < schedule_->size()) {
      const WholeJobStart& at = (*schedule_)[job.index];
      if (at.site >= 0 && static_cast<std::size_t>(at.site) < view.fleet().sites.size()) {
        return Dispatch{at.site,
                        now + at.delay_s,
                        fmt::format("the bound's schedule: at {}, {} s after its submission",
                                    view.fleet().sites[at.site].name, at.delay_s),
                        {}};
      }
    }
    return Dispatch{
        job.home_site, now, "not in the bound's schedule: stays at its submission site", {}};
  }

 private:
  std::shared_ptr<const std::vector<WholeJobStart>> schedule_;
};

}  // namespace

std::unique_ptr<DispatchAgent> make_bound_schedule_agent(
    std::shared_ptr<const std::vector<WholeJobStart>> schedule) {
  return std::make_unique<BoundScheduleAgent>(std::move(schedule));
}

}  // namespace greensched::multi
