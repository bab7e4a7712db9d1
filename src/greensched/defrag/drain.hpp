// Draining a node: moves that take every pod off one node, so that it can sleep. The replay's
// consolidation (sim/site_engine.hpp) drains a lightly used node when the idle power it would
// otherwise draw outweighs the run time the moves lose; this file finds the moves.
//
// How: the node's pods are released and the node is taken out of the scheduler's view; each
// pod, largest first (GPU, then CPU, then memory, then id), is placed where the policy's own
// scheduling cycle puts it. With same_gpu_model, a GPU pod may only go to a node of the
// drained node's GPU model (it then draws and runs as it did, so a drain spares idle power
// without moving work to a less efficient GPU). If one fits nowhere, everything is undone
// exactly and nothing is returned. It is bounded: at most max_moves pods, one scheduling cycle
// each.
#pragma once

#include <optional>
#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/defrag/move_planner.hpp"
#include "greensched/policy/scheduler.hpp"

namespace greensched::defrag {

// The moves that empty online node `node` (at least one pod on it, all of them movable and
// known to `pod_of`, at most `max_moves`), carried out on `cluster`, which then holds the
// node empty and online; or nullopt with the cluster unchanged.
std::optional<std::vector<Move>> drain_node(Cluster& cluster, NodeIndex node,
                                            const PodLookup& pod_of, const Movable& movable,
                                            policy::Scheduler& scheduler, Rng& rng, int max_moves,
                                            bool same_gpu_model = false);

}  // namespace greensched::defrag
