// The built-in default workload: a cluster and pod list rebuilt from the openb trace's own
// statistics (node-type counts of the GPU node list, pod-shape counts of the default pod
// list), so that the tool runs on a fresh machine with no files. It is the same multiset of
// nodes and pod requests as the real trace, without names or timestamps.
#pragma once

#include "greensched/trace/workload.hpp"

namespace greensched::trace {

Workload builtin_openb_workload();

}  // namespace greensched::trace
