#include "greensched/sim/queue_discipline.hpp"

#include <fmt/format.h>

namespace greensched::sim {

std::string_view queue_name(QueueDiscipline queue) {
  switch (queue) {
    case QueueDiscipline::kFifo:
      return "fifo";
    case QueueDiscipline::kBackfill:
      return "backfill";
    case QueueDiscipline::kPriority:
      return "priority";
  }
  return "fifo";
}

Result<QueueDiscipline> parse_queue_discipline(std::string_view text) {
  for (auto q : {QueueDiscipline::kFifo, QueueDiscipline::kBackfill, QueueDiscipline::kPriority}) {
    if (text == queue_name(q)) return q;
  }
  return Error{
      fmt::format("unknown queue discipline '{}' (expected fifo, backfill or priority)", text)};
}

}  // namespace greensched::sim
