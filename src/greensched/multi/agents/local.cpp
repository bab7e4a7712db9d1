#include "greensched/multi/agents/agents.hpp"

namespace greensched::multi {
namespace {

// Every job runs where it was submitted, as soon as possible: the baseline.
class LocalAgent final : public DispatchAgent {
 public:
  std::string_view name() const override { return "local"; }
  Dispatch decide(const JobInfo& job, const FleetView& view) override {
    return Dispatch{job.home_site, view.now_s(), "stays at its submission site", {}};
  }
};

}  // namespace

std::unique_ptr<DispatchAgent> make_local_agent() {
  return std::make_unique<LocalAgent>();
}

}  // namespace greensched::multi
