// A pod list's arrivals as hourly series to forecast: per class of service, the work
// submitted in each hour of trace time, either the GPU-hours it asks for (requested GPUs x its
// run time, deletion - creation) or the number of jobs. A capacity plan needs the coming
// hours' arrivals (multi/capacity_plan.hpp forecasts them by the same hour on past days); this
// turns a trace into the series that forecasters are measured on.
//
// Trace time has no date: sample 0 starts at trace second 0, which the series places at
// 1970-01-01 00:00 UTC (epoch second 0), local time UTC, so hour-of-day and day-of-week are
// those of trace time, as the load generator's hour-of-week profile reads them
// (trace/load_generator.hpp). The series runs from hour 0 to the hour of the last creation,
// an hour without arrivals holding 0.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "greensched/core/pod.hpp"
#include "greensched/core/status.hpp"
#include "greensched/forecast/series.hpp"

namespace greensched::forecast {

// Which pods a series counts: latency-sensitive (QoS LS or Guaranteed, core/pod.hpp's
// is_latency_sensitive), best-effort (the rest), or all of them.
enum class ArrivalClass { kLatencySensitive, kBestEffort, kAll };
enum class ArrivalUnit { kGpuHours, kJobs };

// A class's name ("LS", "BE" or "all"), and the class of a name (false for an unknown one).
std::string_view arrival_class_name(ArrivalClass c);
bool parse_arrival_class(std::string_view name, ArrivalClass& out);

// The hourly series of `pods`' arrivals of class `cls`, named by the class. Every pod needs a
// creation and deletion time (the multigpu lists have none): an error names `source` and the
// first pod without them. Pods of the class that ask for no GPU count as jobs and add 0
// GPU-hours.
Result<Series> arrival_series(std::span<const PodSpec> pods, ArrivalClass cls, ArrivalUnit unit,
                              const std::string& source);

}  // namespace greensched::forecast
