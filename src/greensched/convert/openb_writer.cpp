// The openb CSV text of converted rows; see openb_writer.hpp.
#include "greensched/convert/openb_writer.hpp"

#include <fmt/format.h>

namespace greensched::convert {
namespace {

std::string time_field(int64_t t) {
  return t < 0 ? std::string() : fmt::format("{}", t);
}

}  // namespace

std::string openb_nodes_csv(const std::vector<OpenbNodeRow>& rows) {
  std::string out = fmt::format("{}\n", kOpenbNodeHeader);
  for (const OpenbNodeRow& r : rows) {
    out += fmt::format("{},{},{},{},{}\n", r.name, r.cpu_milli, r.memory_mib, r.gpu,
                       r.gpu > 0 ? r.model : std::string());
  }
  return out;
}

std::string openb_pods_csv(const std::vector<OpenbPodRow>& rows) {
  std::string out = fmt::format("{}\n", kOpenbPodHeader);
  for (const OpenbPodRow& r : rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", r.name, r.cpu_milli, r.memory_mib,
                       r.num_gpu, r.gpu_milli, fmt::join(r.gpu_spec, "|"), r.qos, r.phase,
                       time_field(r.creation_time), time_field(r.deletion_time),
                       time_field(r.scheduled_time));
  }
  return out;
}

bool plain_field(std::string_view text) {
  return text.find_first_of(",\"|\r\n") == std::string_view::npos;
}

}  // namespace greensched::convert
