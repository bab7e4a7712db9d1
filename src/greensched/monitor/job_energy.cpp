#include "greensched/monitor/job_energy.hpp"

#include <fmt/format.h>

namespace greensched::monitor {

Result<JobEnergyModel> JobEnergyModel::make(const power::PowerModel& model,
                                            const GpuModelRegistry& models,
                                            const std::string& reference_gpu) {
  JobEnergyModel m;
  m.gpu_max_watts_.assign(models.size(), -1.0);
  bool have_reference = false;
  for (std::size_t id = 0; id < models.size(); ++id) {
    const std::vector<NodeSpec> node{
        NodeSpec{"probe", 96000, 1024, 1, static_cast<GpuModelId>(id)}};
    auto figures = model.resolve(node, models);
    if (!figures.ok()) continue;
    const power::NodePower& f = figures.value()[0];
    m.gpu_max_watts_[id] = f.gpu.max_watts;
    m.watts_per_vcpu_ = f.cpu.max_watts / (2.0 * f.cpu.cores_per_socket);
    if (models.name(static_cast<GpuModelId>(id)) == reference_gpu) {
      m.reference_watts_ = f.gpu.max_watts;
      have_reference = true;
    }
  }
  if (!have_reference) {
    return Error{
        fmt::format("reference GPU '{}' has no figures in the power model", reference_gpu)};
  }
  return m;
}

double JobEnergyModel::watts(const PodSpec& pod) const {
  double gpu_watts = reference_watts_;
  if (pod.gpu_spec != 0) {
    for (std::size_t id = 0; id < gpu_max_watts_.size(); ++id) {
      if (((pod.gpu_spec >> id) & 1U) && gpu_max_watts_[id] >= 0) {
        gpu_watts = gpu_max_watts_[id];
        break;
      }
    }
  }
  return static_cast<double>(pod.total_gpu_milli()) / kGpuMilli * gpu_watts +
         static_cast<double>(pod.cpu_milli) / 1000.0 * watts_per_vcpu_;
}

}  // namespace greensched::monitor
