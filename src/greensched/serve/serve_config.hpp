// The JSON configuration of `greensched serve --config FILE`. Every key is optional; unknown
// keys are errors (a typo should not silently fall back to a default):
//   policy            "fgd" (default) or any policy spec, e.g. "pwr:200+fgd:800"
//   gpu_select        in a mix, the member whose rule picks the GPUs
//   target_pods       openb pod list whose shapes form FGD's target workload (relative to the
//                     config file); default: the built-in openb default-trace shape counts
//   target_coverage   share of pods the kept target shapes cover (default 0.95)
//   power_model       power model JSON (default: the built-in data/power-model.json)
//   pue               facility PUE (default: the power model's)
//   seed              seed of the policies' random draws (default 42)
//   unknown_nodes     "add" (default) or "reject": Node objects the state does not know
//   pending_pods      pods remembered between filter and bind (default 65536)
//   compact_every     journal entries after which a snapshot replaces them (default 100000)
//   threads, max_body_bytes, read_timeout_seconds, write_timeout_seconds,
//   keep_alive_seconds          HTTP server (see http_server.hpp)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "greensched/core/status.hpp"
#include "greensched/serve/extender.hpp"
#include "greensched/serve/http_server.hpp"

namespace greensched::serve {

struct ServeConfig {
  std::string policy = "fgd";
  std::string gpu_select;
  std::string target_pods;  // resolved against the config file's directory
  double target_coverage = 0.95;
  std::string power_model;
  double pue = 0;  // 0: the power model's
  uint64_t seed = 42;
  ExtenderOptions extender;
  ServerOptions server;
};

// `base_dir` resolves relative paths in the file.
Result<ServeConfig> parse_serve_config(std::string_view text, const std::string& source,
                                       const std::string& base_dir);
Result<ServeConfig> load_serve_config(const std::string& path);

}  // namespace greensched::serve
