// Writing openb node and pod lists (the CSVs trace/openb_reader.hpp reads): the node list
// sn,cpu_milli,memory_mib,gpu,model and the full 11-column pod list, in the column order of the
// published openb files. Rows hold names, not model ids, so a converter needs no registry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace greensched::convert {

struct OpenbNodeRow {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu = 0;
  std::string model;  // empty when gpu == 0
};

struct OpenbPodRow {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;              // per GPU
  std::vector<std::string> gpu_spec;  // allowed models; empty = any
  std::string qos;                    // LS, BE, Burstable, Guaranteed or empty
  std::string phase;                  // Running, Pending, Succeeded, Failed
  int64_t creation_time = -1;         // seconds; -1 writes an empty field
  int64_t deletion_time = -1;
  int64_t scheduled_time = -1;
};

inline constexpr const char* kOpenbNodeHeader = "sn,cpu_milli,memory_mib,gpu,model";
inline constexpr const char* kOpenbPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time";

// Header line and one line per row, each ending in '\n'.
std::string openb_nodes_csv(const std::vector<OpenbNodeRow>& rows);
std::string openb_pods_csv(const std::vector<OpenbPodRow>& rows);

// Whether `text` may stand in an openb field unquoted: no comma, quote, '|' or line break.
bool plain_field(std::string_view text);

}  // namespace greensched::convert
