#include "greensched/forecast/arrivals.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace greensched::forecast {

std::string_view arrival_class_name(ArrivalClass c) {
  switch (c) {
    case ArrivalClass::kLatencySensitive:
      return "LS";
    case ArrivalClass::kBestEffort:
      return "BE";
    case ArrivalClass::kAll:
      return "all";
  }
  return "all";
}

bool parse_arrival_class(std::string_view name, ArrivalClass& out) {
  for (ArrivalClass c :
       {ArrivalClass::kLatencySensitive, ArrivalClass::kBestEffort, ArrivalClass::kAll}) {
    if (name == arrival_class_name(c)) {
      out = c;
      return true;
    }
  }
  return false;
}

Result<Series> arrival_series(std::span<const PodSpec> pods, ArrivalClass cls, ArrivalUnit unit,
                              const std::string& source) {
  if (pods.empty()) return Error{fmt::format("{}: no pods", source)};
  int64_t last = 0;
  for (const PodSpec& pod : pods) {
    if (pod.creation_time < 0 || pod.deletion_time < 0) {
      return Error{fmt::format(
          "{}: pod {} has no creation or deletion time: arrivals need a pod list with times",
          source, pod.name)};
    }
    last = std::max(last, pod.creation_time);
  }
  Series s;
  s.name = std::string(arrival_class_name(cls));
  s.start_s = 0;
  s.utc_offset_s = 0;
  s.values.assign(static_cast<std::size_t>(last / kHourS) + 1, 0.0);
  for (const PodSpec& pod : pods) {
    const bool ls = is_latency_sensitive(pod);
    if ((cls == ArrivalClass::kLatencySensitive && !ls) ||
        (cls == ArrivalClass::kBestEffort && ls)) {
      continue;
    }
    double& v = s.values[static_cast<std::size_t>(pod.creation_time / kHourS)];
    if (unit == ArrivalUnit::kJobs) {
      v += 1;
    } else {
      const double gpus = static_cast<double>(pod.total_gpu_milli()) / kGpuMilli;
      v += gpus * static_cast<double>(pod.deletion_time - pod.creation_time) / kHourS;
    }
  }
  return s;
}

}  // namespace greensched::forecast
