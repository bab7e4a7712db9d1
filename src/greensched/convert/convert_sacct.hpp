// `greensched convert sacct`: Slurm accounting (`sacct --parsable2`: '|'-separated, a header
// line naming the fields) to an openb pod list, one pod per job and node, and optionally
// `scontrol show node -o` (one node a line, NodeName=... CPUTot=... RealMemory=... Gres=...) to
// an openb node list. Read per job: JobID (the pod name; job steps such as 123.batch are
// dropped as "job step"), CPUs (AllocCPUS, else ReqCPUS, else the TRES cpu=), memory (the TRES
// mem=, else ReqMem, per CPU or per node where it says so), GPUs (gres/gpu=N or
// gres/gpu:MODEL=N of AllocTRES, else ReqTRES; the model becomes the pod's gpu_spec), nodes
// (NNodes, else the TRES node=) and times (Submit, Start, End: Slurm's local time stamps, read
// as UTC). A file without the header is an error "file:line: reason"; a row that cannot be
// converted is dropped and counted with its reason.
#pragma once

#include <optional>

#include "greensched/convert/convert_summary.hpp"
#include "greensched/convert/gpu_names.hpp"
#include "greensched/core/status.hpp"

namespace greensched::convert {

// `models`: --gpu-model's names for the dump's GPU models (gpu_names.hpp).
Result<ConvertOutput> convert_sacct(const SourceText& jobs, const std::optional<SourceText>& nodes,
                                    const GpuModelMap& models = {});

}  // namespace greensched::convert
