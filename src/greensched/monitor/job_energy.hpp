// Energy attributable to one job under the power model of the PWR paper: a GPU in use draws
// its max power, so a job is charged its requested GPUs (a share counts pro rata) times the
// max watts of its GPU model (the first model its gpu_spec allows, else a reference model),
// plus its vCPUs times the per-vCPU max power of the default CPU (max_watts / (2 x cores per
// socket), two vCPUs per physical core). Energy = that power x duration.
#pragma once

#include <string>
#include <vector>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::monitor {

class JobEnergyModel {
 public:
  // `reference_gpu` (default G2, the most common GPU of the openb cluster) must have figures.
  static Result<JobEnergyModel> make(const power::PowerModel& model, const GpuModelRegistry& models,
                                     const std::string& reference_gpu = "G2");
  double watts(const PodSpec& pod) const;
  double kwh(const PodSpec& pod, double seconds) const { return watts(pod) * seconds / 3.6e6; }

 private:
  std::vector<double> gpu_max_watts_;  // by model id; < 0 when the model has no figures
  double reference_watts_ = 0;
  double watts_per_vcpu_ = 0;
};

}  // namespace greensched::monitor
