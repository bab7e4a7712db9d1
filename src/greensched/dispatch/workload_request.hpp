// A Kueue Workload as the dispatch service reads it (POST /v1/dispatch): what it asks for and
// how urgent it is. From the object itself:
//   spec.podSets[]           name, count and the pod template (resources read as the extender
//                            reads a pod: serve/pod_request.hpp, GPU shares included);
//   metadata                 namespace/name, creationTimestamp (its submission);
//   spec.maximumExecutionTimeSeconds   its expected run time, when set.
// And from greensched's annotations (all optional), on the Workload or, as Kueue copies only a
// Job's pod template into its Workload (not the Job's annotations), on a pod set's template:
//   greensched.io/qos        LS (latency-sensitive: starts now, moves only where it can start
//                            within the LS bound) or BE (best-effort, the default);
//   greensched.io/slack      how long a BE workload may wait for a greener start: "4h", "30m",
//                            "1h30m" or seconds (default: the service's --slack);
//   greensched.io/duration   expected run time, as for slack (else the execution time limit,
//                            else the service's --duration);
//   greensched.io/data-gb    data that moves with it when it runs away from home;
//   greensched.io/home       the cluster it belongs to (its data's home; default: the first
//                            cluster it may go to).
// The agent decides for the workload's largest pod (the most GPU, then CPU) with the
// workload's data shared over its pods: the ranking of clusters for one pod is the ranking for
// all of them when they are alike. Errors name the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"
#include "greensched/serve/pod_request.hpp"

namespace greensched::dispatch {

inline constexpr std::string_view kQosAnnotation = "greensched.io/qos";
inline constexpr std::string_view kSlackAnnotation = "greensched.io/slack";
inline constexpr std::string_view kDurationAnnotation = "greensched.io/duration";
inline constexpr std::string_view kDataAnnotation = "greensched.io/data-gb";
inline constexpr std::string_view kHomeAnnotation = "greensched.io/home";

struct PodSetRequest {
  std::string name;
  int count = 1;
  serve::PodRequest pod;
};

struct WorkloadRequest {
  std::string key;  // namespace/name
  std::string uid;
  std::vector<PodSetRequest> pod_sets;
  bool latency_sensitive = false;
  std::optional<int64_t> created_epoch_s;  // metadata.creationTimestamp
  std::optional<int64_t> slack_s;
  std::optional<int64_t> duration_s;
  double data_gb = 0;
  std::string home;  // "" = not given

  int total_pods() const;
  // The pod the decision is made for: the most GPU milli, then CPU, then the first.
  const PodSetRequest& largest() const;
};

// "4h", "30m", "90s", "1h30m", "2d" or a plain number of seconds (core/duration.hpp), whole
// seconds.
Result<int64_t> parse_duration_s(std::string_view text);

// A kueue.x-k8s.io Workload object (v1beta1 or v1beta2: the fields read are the same).
Result<WorkloadRequest> parse_workload(const nlohmann::json& workload);

}  // namespace greensched::dispatch
