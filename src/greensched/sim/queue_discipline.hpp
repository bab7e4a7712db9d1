// The order a cluster's queue tries waiting jobs in (site_engine.hpp): fifo (the head blocks
// the rest), backfill (any job that fits may start, oldest first) or priority
// (latency-sensitive jobs first, then best-effort ones, each backfilled).
#pragma once

#include <string_view>

#include "greensched/core/status.hpp"

namespace greensched::sim {

enum class QueueDiscipline { kFifo, kBackfill, kPriority };

// "fifo", "backfill" or "priority", as reports and the command line spell them.
std::string_view queue_name(QueueDiscipline queue);
Result<QueueDiscipline> parse_queue_discipline(std::string_view text);

}  // namespace greensched::sim
