// Assembles a running extender from the command line's inputs: the node list (openb CSV
// and/or a Kubernetes NodeList JSON; neither means nodes arrive as Node objects), FGD's target
// workload (the config's target_pods, else the built-in openb default-trace shapes), the power
// model, and the state rebuilt by replaying the journal in the state directory. A journal
// entry that no longer applies (its node left the node list) is skipped with a warning.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/serve/extender.hpp"
#include "greensched/serve/serve_config.hpp"

namespace greensched::serve {

struct ServiceInputs {
  std::string nodes_csv;   // openb node list (sn,cpu_milli,memory_mib,gpu,model)
  std::string nodes_json;  // v1.NodeList, e.g. `kubectl get nodes -o json`
  std::string state_dir;
  ServeConfig config;
};

struct StartupReport {
  std::size_t nodes = 0;
  std::size_t pods = 0;
  uint64_t replayed = 0;
  std::vector<std::string> warnings;  // skipped journal entries
  std::string target;                 // where FGD's target workload came from
};

Result<std::unique_ptr<Extender>> open_extender(const ServiceInputs& inputs,
                                                StartupReport* report = nullptr);

}  // namespace greensched::serve
