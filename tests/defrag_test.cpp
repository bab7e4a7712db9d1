// Bounded migration (defrag/move_planner.hpp): hand-computed plans on small clusters, the
// limits, undo, and a property check that a plan never loses or overcommits a pod; plans for
// several pending pods on a copy of the cluster (defrag/defrag_plan.hpp); and draining a node
// (defrag/drain.hpp).
#include <map>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "greensched/core/rng.hpp"
#include "greensched/defrag/defrag_plan.hpp"
#include "greensched/defrag/drain.hpp"
#include "greensched/defrag/move_planner.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"

namespace greensched {
namespace {

PodSpec gpu_pod(int64_t cpu, int num_gpu, int32_t milli) {
  PodSpec p;
  p.name = "p";
  p.cpu_milli = cpu;
  p.memory_mib = 1024;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  return p;
}

// A cluster with its pods (by id) and a best-fit scheduler, node order as tie order.
class Defrag : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = policy::make_policy("bestfit", {});
    ASSERT_TRUE(made.ok());
    policy_ = std::move(made.value());
  }
  void make_cluster(std::vector<NodeSpec> nodes) {
    cluster_ = std::make_unique<Cluster>(std::move(nodes));
    std::vector<uint32_t> rank(cluster_->size());
    for (std::size_t i = 0; i < rank.size(); ++i) rank[i] = static_cast<uint32_t>(i);
    scheduler_ = std::make_unique<policy::Scheduler>(*policy_, rank);
  }
  void place(PodId id, const PodSpec& pod, NodeIndex node, GpuMask gpus) {
    pods_[id] = pod;
    ASSERT_TRUE(cluster_->allocate(id, pod, node, gpus).ok());
  }
  defrag::MovePlanner planner(defrag::Movable movable = {}) {
    return defrag::MovePlanner(
        [this](PodId id) -> const PodSpec* {
          auto it = pods_.find(id);
          return it == pods_.end() ? nullptr : &it->second;
        },
        std::move(movable));
  }
  // Every node's free resources, to compare states.
  std::vector<std::vector<int64_t>> snapshot() const {
    std::vector<std::vector<int64_t>> out;
    for (std::size_t n = 0; n < cluster_->size(); ++n) {
      const NodeState& s = cluster_->state(static_cast<NodeIndex>(n));
      std::vector<int64_t> row = {s.cpu_free_milli, s.memory_free_mib, s.pods};
      for (int g = 0; g < kMaxGpusPerNode; ++g) row.push_back(s.gpu_free_milli[g]);
      out.push_back(std::move(row));
    }
    return out;
  }

  std::unique_ptr<policy::Policy> policy_;
  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<policy::Scheduler> scheduler_;
  std::map<PodId, PodSpec> pods_;
  Rng rng_{1};
};

// Two nodes of two GPUs, every GPU half used or more: a whole-GPU pod fits nowhere. Moving one
// half frees a GPU: one move. Among equal sets node 0 comes first in tie order, and on it
// GPU 0's pod (first index among equals); the pod takes GPU 0 and best fit puts the moved
// half on node 0's other half-free GPU, which fills it.
TEST_F(Defrag, OneMoveFreesAWholeGpu) {
  make_cluster({NodeSpec{"a", 32000, 64000, 2, 0}, NodeSpec{"b", 32000, 64000, 2, 0}});
  place(0, gpu_pod(1000, 1, 500), 0, 0b01);
  place(1, gpu_pod(1000, 1, 500), 0, 0b10);
  place(2, gpu_pod(1000, 1, 500), 1, 0b01);
  place(3, gpu_pod(1000, 1, 600), 1, 0b10);
  const PodSpec whole = gpu_pod(2000, 1, 1000);
  pods_[9] = whole;
  ASSERT_LT(scheduler_->schedule(*cluster_, whole, rng_).node, 0);

  auto p = planner();
  auto plan = p.fit(*cluster_, 9, whole, *scheduler_, rng_, {});
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->moves.size(), 1U);
  const defrag::Move& m = plan->moves[0];
  // Candidate sets of one 500-milli pod: node 0 GPU 0 or 1, node 1 GPU 0 (pod 2). Equal moves
  // and milli: node 0 first in tie order; on it GPU 0's pod (first index among equals).
  EXPECT_EQ(plan->node, 0);
  EXPECT_EQ(m.pod, 0U);
  EXPECT_EQ(m.from, 0);
  EXPECT_EQ(m.from_gpus, 0b01U);
  EXPECT_EQ(m.to, 0);
  EXPECT_EQ(m.to_gpus, 0b10U);
  EXPECT_EQ(m.gpu_milli, 500);
  EXPECT_EQ(plan->gpus, 0b01U);
  EXPECT_EQ(cluster_->allocation_of(9)->node, 0);
  EXPECT_EQ(cluster_->state(0).gpu_free_milli[1], 0);
  EXPECT_EQ(cluster_->state(1).gpu_free_milli[0], 500);
  // Nothing lost: every pod placed, allocation summed.
  EXPECT_EQ(cluster_->allocated_gpu_milli(), 500 + 500 + 500 + 600 + 1000);
}

TEST_F(Defrag, UndoRestoresTheState) {
  make_cluster({NodeSpec{"a", 32000, 64000, 2, 0}, NodeSpec{"b", 32000, 64000, 2, 0}});
  place(0, gpu_pod(1000, 1, 500), 0, 0b01);
  place(1, gpu_pod(1000, 1, 500), 0, 0b10);
  place(2, gpu_pod(1000, 1, 500), 1, 0b01);
  place(3, gpu_pod(1000, 1, 600), 1, 0b10);
  const auto before = snapshot();
  const PodSpec whole = gpu_pod(2000, 1, 1000);
  pods_[9] = whole;
  auto p = planner();
  auto plan = p.fit(*cluster_, 9, whole, *scheduler_, rng_, {});
  ASSERT_TRUE(plan.has_value());
  ASSERT_TRUE(p.undo(*cluster_, 9, *plan).ok());
  EXPECT_EQ(snapshot(), before);
  EXPECT_FALSE(cluster_->allocation_of(9).has_value());
}

// Pods the caller marks unmovable stay: the plan takes the other node's pod.
TEST_F(Defrag, UnmovablePodsStay) {
  make_cluster({NodeSpec{"a", 32000, 64000, 2, 0}, NodeSpec{"b", 32000, 64000, 2, 0}});
  place(0, gpu_pod(1000, 1, 500), 0, 0b01);
  place(1, gpu_pod(1000, 1, 500), 0, 0b10);
  place(2, gpu_pod(1000, 1, 500), 1, 0b01);
  place(3, gpu_pod(1000, 1, 500), 1, 0b10);
  const PodSpec whole = gpu_pod(2000, 1, 1000);
  pods_[9] = whole;
  auto p = planner([](PodId id) { return id >= 2; });
  auto plan = p.fit(*cluster_, 9, whole, *scheduler_, rng_, {});
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->moves.size(), 1U);
  EXPECT_EQ(plan->moves[0].from, 1);
  EXPECT_GE(plan->moves[0].pod, 2U);
  EXPECT_EQ(plan->node, 1);
}

// Two GPUs needed, every GPU shared by one pod: two moves; with max_moves 1 no plan, and the
// cluster is left as it was.
TEST_F(Defrag, MoveLimitIsHonoured) {
  make_cluster({NodeSpec{"a", 32000, 64000, 2, 0}, NodeSpec{"b", 32000, 64000, 4, 0}});
  place(0, gpu_pod(1000, 1, 300), 0, 0b01);
  place(1, gpu_pod(1000, 1, 300), 0, 0b10);
  place(2, gpu_pod(1000, 1, 700), 1, 0b0001);
  place(3, gpu_pod(1000, 1, 700), 1, 0b0010);
  place(4, gpu_pod(1000, 1, 700), 1, 0b0100);
  place(5, gpu_pod(1000, 1, 700), 1, 0b1000);
  const PodSpec two = gpu_pod(2000, 2, 1000);
  pods_[9] = two;
  const auto before = snapshot();
  auto p = planner();
  EXPECT_FALSE(p.fit(*cluster_, 9, two, *scheduler_, rng_, {.max_moves = 1}).has_value());
  EXPECT_EQ(snapshot(), before);
  auto plan = p.fit(*cluster_, 9, two, *scheduler_, rng_, {.max_moves = 2});
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->moves.size(), 2U);
  EXPECT_EQ(plan->node, 0);  // its two 300s go onto node 1's 700s
  for (const defrag::Move& m : plan->moves) EXPECT_EQ(m.to, 1);
}

// CPU binds: node 0 has a free GPU but a CPU-only pod holds its cores; moving that pod to
// node 1 (cores free, no GPU room) lets the GPU pod in.
TEST_F(Defrag, CpuIsFreedByMovingACpuOnlyPod) {
  make_cluster({NodeSpec{"a", 16000, 64000, 1, 0}, NodeSpec{"b", 16000, 64000, 1, 0}});
  PodSpec cpu_only;
  cpu_only.name = "c";
  cpu_only.cpu_milli = 12000;
  cpu_only.memory_mib = 1024;
  place(0, cpu_only, 0, 0);
  place(1, gpu_pod(2000, 1, 1000), 1, 0b1);
  const PodSpec want = gpu_pod(8000, 1, 1000);
  pods_[9] = want;
  auto p = planner();
  auto plan = p.fit(*cluster_, 9, want, *scheduler_, rng_, {});
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->moves.size(), 1U);
  EXPECT_EQ(plan->moves[0].pod, 0U);
  EXPECT_EQ(plan->moves[0].to, 1);
  EXPECT_EQ(plan->node, 0);
}

// Property: on random small clusters, a plan places the pod and every moved pod, never
// overcommits (the cluster refuses that), and keeps every other pod where it was.
TEST_F(Defrag, PlansNeverLoseOrOvercommit) {
  Rng rng(7);
  auto random = policy::make_policy("random", {});
  ASSERT_TRUE(random.ok());
  int planned = 0;
  for (int round = 0; round < 200; ++round) {
    pods_.clear();
    std::vector<NodeSpec> nodes;
    for (int n = 0; n < 4; ++n) nodes.push_back(NodeSpec{"n", 32000, 64000, 4, 0});
    make_cluster(nodes);
    PodId next = 0;
    // Mostly shares placed at random, so that the GPUs fragment.
    policy::Scheduler filler(*random.value(), scheduler_->tie_rank());
    for (int i = 0; i < 20; ++i) {
      const int kind = static_cast<int>(rng.uniform(6));
      const PodSpec pod = kind == 0   ? gpu_pod(2000, 1, 1000)
                          : kind == 1 ? gpu_pod(2000, 2, 1000)
                                      : gpu_pod(1000 * static_cast<int64_t>(1 + rng.uniform(6)), 1,
                                                static_cast<int32_t>(100 + 100 * rng.uniform(6)));
      const policy::Decision d = filler.schedule(*cluster_, pod, rng);
      if (d.node >= 0) place(next++, pod, d.node, d.gpus);
    }
    const PodSpec want = gpu_pod(2000, static_cast<int>(1 + rng.uniform(2)), 1000);
    if (scheduler_->schedule(*cluster_, want, rng_).node >= 0) continue;
    std::map<PodId, Allocation> before;
    cluster_->for_each_allocation([&](PodId id, const Allocation& a) { before[id] = a; });
    const int64_t allocated = cluster_->allocated_gpu_milli();
    const PodId id = next;
    pods_[id] = want;
    auto p = planner();
    auto plan = p.fit(*cluster_, id, want, *scheduler_, rng_, {.max_moves = 3});
    if (!plan) {
      EXPECT_EQ(cluster_->allocated_gpu_milli(), allocated);
      continue;
    }
    ++planned;
    EXPECT_LE(plan->moves.size(), 3U);
    EXPECT_EQ(cluster_->allocated_gpu_milli(), allocated + want.total_gpu_milli());
    std::map<PodId, int> moved;
    for (const defrag::Move& m : plan->moves) ++moved[m.pod];
    for (const auto& [pid, a] : before) {
      const auto now = cluster_->allocation_of(pid);
      ASSERT_TRUE(now.has_value()) << "pod " << pid << " lost";
      if (moved.count(pid) == 0) {
        EXPECT_EQ(now->node, a.node);
      }
    }
  }
  EXPECT_GT(planned, 10);  // the property was exercised
}

// Property: a planner that has planned before (its per-node caches, room memos and shapes seen
// carried over, the cluster changed in between by arrivals, departures and its own moves) finds
// the same plan as a fresh planner on a copy of the cluster, and as a fresh one that builds
// every node's set (no bound passing nodes over), over a long random sequence; the cluster's
// per-node pod index stays equal to its allocations throughout. Memory varies within a shape
// and one shape id has two sets of fields, as the bounds must allow.
TEST_F(Defrag, CachedPlansEqualFreshPlans) {
  Rng rng(11);
  auto random = policy::make_policy("random", {});
  ASSERT_TRUE(random.ok());
  std::vector<NodeSpec> nodes;
  for (int n = 0; n < 6; ++n) nodes.push_back(NodeSpec{"n", 24000, 64000, n % 2 == 0 ? 4 : 8, 0});
  make_cluster(nodes);
  policy::Scheduler filler(*random.value(), scheduler_->tie_rank());
  const auto lookup = [this](PodId id) -> const PodSpec* {
    auto it = pods_.find(id);
    return it == pods_.end() ? nullptr : &it->second;
  };
  defrag::MovePlanner kept(lookup);
  std::vector<PodId> placed;
  PodId next = 0;
  int planned = 0;
  int compared = 0;
  for (int step = 0; step < 600; ++step) {
    // A few arrivals and departures; shapes repeat (a dense id per shape, as traces have).
    for (int i = 0; i < 4; ++i) {
      if (!placed.empty() && rng.uniform(3) == 0) {
        const std::size_t k = rng.uniform(placed.size());
        ASSERT_TRUE(cluster_->release(placed[k]).ok());
        placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      const int kind = static_cast<int>(rng.uniform(5));
      PodSpec pod = kind == 0   ? gpu_pod(2000, 1, 1000)
                    : kind == 1 ? gpu_pod(3000, 2, 1000)
                                : gpu_pod(1000 * (1 + kind), 1, 250 * kind);
      pod.memory_mib = 2048 * (1 + static_cast<int64_t>(rng.uniform(8)));
      // Shape 3 also names kind 4's fields now and then.
      pod.shape = kind == 4 && rng.uniform(4) == 0 ? 3U : static_cast<uint32_t>(kind);
      const policy::Decision d = filler.schedule(*cluster_, pod, rng);
      if (d.node < 0) continue;
      place(next, pod, d.node, d.gpus);
      placed.push_back(next++);
    }
    PodSpec want = rng.uniform(2) == 0 ? gpu_pod(2000, 1 + static_cast<int>(rng.uniform(2)), 1000)
                                       : gpu_pod(4000, 1, 800);
    want.shape = want.gpu_milli == 1000 ? 10U + static_cast<uint32_t>(want.num_gpu) : 13U;
    if (scheduler_->schedule(*cluster_, want, rng_).node >= 0) continue;
    Cluster copy = *cluster_;
    Cluster copy_all = *cluster_;
    defrag::MovePlanner fresh(lookup);
    defrag::MovePlanner all(lookup);
    all.set_exhaustive(true);
    const PodId id = next++;
    pods_[id] = want;
    const defrag::PlannerLimits limits{.max_moves = 3};
    Rng r1(static_cast<uint64_t>(step));
    Rng r2(static_cast<uint64_t>(step));
    Rng r3(static_cast<uint64_t>(step));
    kept.forget_failures();  // compare the search itself, not the memo of failures
    const auto a = kept.fit(*cluster_, id, want, *scheduler_, r1, limits);
    const auto b = fresh.fit(copy, id, want, *scheduler_, r2, limits);
    const auto c = all.fit(copy_all, id, want, *scheduler_, r3, limits);
    ++compared;
    // The index of pods per node matches the allocations, after the plan or its undoing.
    std::vector<std::vector<PodId>> by_node(cluster_->size());
    cluster_->for_each_allocation([&](PodId pod, const Allocation& at) {
      by_node[static_cast<std::size_t>(at.node)].push_back(pod);
    });
    for (std::size_t n = 0; n < cluster_->size(); ++n) {
      const auto on = cluster_->pods_on(static_cast<NodeIndex>(n));
      ASSERT_EQ(std::vector<PodId>(on.begin(), on.end()), by_node[n]) << "step " << step;
    }
    ASSERT_EQ(a.has_value(), b.has_value()) << "step " << step;
    ASSERT_EQ(a.has_value(), c.has_value()) << "step " << step;
    if (!a) continue;
    ++planned;
    for (const auto* other : {&*b, &*c}) {
      EXPECT_EQ(a->node, other->node);
      EXPECT_EQ(a->gpus, other->gpus);
      EXPECT_EQ(a->trials, other->trials);
      ASSERT_EQ(a->moves.size(), other->moves.size()) << "step " << step;
      for (std::size_t m = 0; m < a->moves.size(); ++m) {
        EXPECT_EQ(a->moves[m].pod, other->moves[m].pod);
        EXPECT_EQ(a->moves[m].to, other->moves[m].to);
        EXPECT_EQ(a->moves[m].to_gpus, other->moves[m].to_gpus);
      }
    }
    EXPECT_EQ(a->candidates, b->candidates);
    EXPECT_LE(a->candidates, c->candidates);
    placed.push_back(id);  // the plan stays carried out on the kept cluster
  }
  EXPECT_GT(compared, 100);
  EXPECT_GT(planned, 20);  // the property was exercised
}

// Plans on a copy (plan_defrag), the cluster of OneMoveFreesAWholeGpu with two whole-GPU pods
// waiting. w1 as there: pod 0 moves to node 0's GPU 1, w1 takes GPU 0; what that frees on
// node 0 is one whole GPU (the moved half stays on the node). w2, planned after it: node 0's
// GPUs hold w1 (not running yet) and pod 0 (moved once) beside pod 1; node 1's pod 2 fits only
// on node 1 itself and pod 3 (600) nowhere else: no plan. The cluster itself is unchanged.
TEST_F(Defrag, PlansOnACopyOnePodAfterTheOther) {
  make_cluster({NodeSpec{"a", 32000, 64000, 2, 0}, NodeSpec{"b", 32000, 64000, 2, 0}});
  place(0, gpu_pod(1000, 1, 500), 0, 0b01);
  place(1, gpu_pod(1000, 1, 500), 0, 0b10);
  place(2, gpu_pod(1000, 1, 500), 1, 0b01);
  place(3, gpu_pod(1000, 1, 600), 1, 0b10);
  const auto before = snapshot();
  const std::vector<defrag::PendingPod> pending = {{10, gpu_pod(2000, 1, 1000)},
                                                   {11, gpu_pod(2000, 1, 1000)}};
  const defrag::PodLookup lookup = [this](PodId id) -> const PodSpec* {
    auto it = pods_.find(id);
    return it == pods_.end() ? nullptr : &it->second;
  };
  const defrag::DefragPlan plan =
      defrag::plan_defrag(*cluster_, pending, lookup, {}, *scheduler_, rng_, 2);
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(plan.moves, 1);
  ASSERT_EQ(plan.pods.size(), 2U);
  const defrag::PodPlan& w1 = plan.pods[0];
  EXPECT_EQ(w1.pending, 0U);
  ASSERT_EQ(w1.outcome, defrag::PlanOutcome::kPlanned);
  EXPECT_EQ(w1.plan.node, 0);
  EXPECT_EQ(w1.plan.gpus, 0b01U);
  ASSERT_EQ(w1.plan.moves.size(), 1U);
  EXPECT_EQ(w1.plan.moves[0].pod, 0U);
  EXPECT_EQ(w1.plan.moves[0].to, 0);
  EXPECT_EQ(w1.plan.moves[0].to_gpus, 0b10U);
  EXPECT_EQ(w1.frees.whole_gpus, 1);
  EXPECT_EQ(w1.frees.gpu_milli, 0);
  EXPECT_EQ(w1.frees.cpu_milli, 0);
  EXPECT_EQ(plan.pods[1].outcome, defrag::PlanOutcome::kNoPlan);

  // Budget 0: nothing planned.
  const defrag::DefragPlan none =
      defrag::plan_defrag(*cluster_, pending, lookup, {}, *scheduler_, rng_, 0);
  EXPECT_EQ(none.moves, 0);
  EXPECT_EQ(none.pods[0].outcome, defrag::PlanOutcome::kBudgetSpent);
  EXPECT_EQ(none.pods[1].outcome, defrag::PlanOutcome::kBudgetSpent);

  // Pod 0 may not move: node 0's pod 1 does instead (best fit keeps it on node 0, on GPU 0 by
  // pod 0: node 0 is then left with less CPU and GPU than node 1), and w1 takes GPU 1.
  const defrag::DefragPlan other = defrag::plan_defrag(
      *cluster_, {pending[0]}, lookup, [](PodId id) { return id != 0; }, *scheduler_, rng_, 2);
  ASSERT_EQ(other.pods[0].outcome, defrag::PlanOutcome::kPlanned);
  ASSERT_EQ(other.pods[0].plan.moves.size(), 1U);
  EXPECT_EQ(other.pods[0].plan.moves[0].pod, 1U);
  EXPECT_EQ(other.pods[0].plan.moves[0].to_gpus, 0b01U);
  EXPECT_EQ(other.pods[0].plan.gpus, 0b10U);
  EXPECT_EQ(snapshot(), before);
}

// A pending pod that fits needs no move and takes its room on the copy; a CPU-only pod that
// fits nowhere is not planned for.
TEST_F(Defrag, PlansSkipPodsThatFitOrNeedNoGpu) {
  make_cluster({NodeSpec{"a", 4000, 64000, 2, 0}});
  place(0, gpu_pod(1000, 1, 500), 0, 0b01);
  PodSpec big_cpu;
  big_cpu.cpu_milli = 8000;
  big_cpu.memory_mib = 1024;
  const std::vector<defrag::PendingPod> pending = {{5, gpu_pod(1000, 1, 1000)}, {6, big_cpu}};
  const defrag::DefragPlan plan = defrag::plan_defrag(
      *cluster_, pending, [](PodId) -> const PodSpec* { return nullptr; }, {}, *scheduler_, rng_,
      3);
  EXPECT_EQ(plan.pods[0].outcome, defrag::PlanOutcome::kFitsNow);
  EXPECT_EQ(plan.pods[0].plan.node, 0);
  EXPECT_EQ(plan.pods[0].plan.gpus, 0b10U);
  EXPECT_EQ(plan.pods[1].outcome, defrag::PlanOutcome::kNoGpu);
  EXPECT_EQ(plan.moves, 0);
}

// Draining node a: its 0.5 share goes first (largest), to b's half-used GPU 0 (best fit, the
// tightest), then its 0.3 share to b's free GPU 1. Node a is left empty and online.
TEST_F(Defrag, DrainMovesEveryPodOffLargestFirst) {
  make_cluster({NodeSpec{"a", 32000, 64000, 2, 0}, NodeSpec{"b", 32000, 64000, 2, 0}});
  place(0, gpu_pod(1000, 1, 300), 0, 0b10);
  place(1, gpu_pod(1000, 1, 500), 0, 0b01);
  place(2, gpu_pod(1000, 1, 500), 1, 0b01);
  auto moves = defrag::drain_node(
      *cluster_, 0, [this](PodId id) -> const PodSpec* { return &pods_.at(id); }, {}, *scheduler_,
      rng_, 4);
  ASSERT_TRUE(moves.has_value());
  ASSERT_EQ(moves->size(), 2U);
  EXPECT_EQ((*moves)[0].pod, 1U);
  EXPECT_EQ((*moves)[0].from, 0);
  EXPECT_EQ((*moves)[0].from_gpus, 0b01U);
  EXPECT_EQ((*moves)[0].to, 1);
  EXPECT_EQ((*moves)[0].to_gpus, 0b01U);
  EXPECT_EQ((*moves)[0].gpu_milli, 500);
  EXPECT_EQ((*moves)[1].pod, 0U);
  EXPECT_EQ((*moves)[1].to, 1);
  EXPECT_EQ((*moves)[1].to_gpus, 0b10U);
  EXPECT_EQ(cluster_->state(0).pods, 0);
  EXPECT_TRUE(cluster_->state(0).online);
  EXPECT_EQ(cluster_->state(1).gpu_free_milli[0], 0);
  EXPECT_EQ(cluster_->state(1).gpu_free_milli[1], 700);
  EXPECT_EQ(cluster_->allocated_gpu_milli(), 1300);
}

// A pod that fits nowhere else, too many pods, or an unmovable pod: nothing changes.
TEST_F(Defrag, DrainThatCannotEmptyTheNodeChangesNothing) {
  make_cluster({NodeSpec{"a", 32000, 64000, 2, 0}, NodeSpec{"b", 32000, 64000, 2, 0}});
  place(0, gpu_pod(1000, 1, 300), 0, 0b10);
  place(1, gpu_pod(1000, 1, 500), 0, 0b01);
  place(2, gpu_pod(1000, 1, 600), 1, 0b01);
  place(3, gpu_pod(1000, 1, 600), 1, 0b10);
  const auto before = snapshot();
  const defrag::PodLookup lookup = [this](PodId id) -> const PodSpec* { return &pods_.at(id); };
  // The 0.3 share would fit on b, the 0.5 share does not (0.4 free on each GPU).
  EXPECT_FALSE(defrag::drain_node(*cluster_, 0, lookup, {}, *scheduler_, rng_, 4).has_value());
  EXPECT_EQ(snapshot(), before);
  ASSERT_TRUE(cluster_->release(3).ok());
  const auto freed = snapshot();
  EXPECT_FALSE(defrag::drain_node(*cluster_, 0, lookup, {}, *scheduler_, rng_, 1).has_value());
  EXPECT_FALSE(defrag::drain_node(
                   *cluster_, 0, lookup, [](PodId id) { return id != 0; }, *scheduler_, rng_, 4)
                   .has_value());
  EXPECT_EQ(snapshot(), freed);
  // Room now: both move, to b.
  EXPECT_TRUE(defrag::drain_node(*cluster_, 0, lookup, {}, *scheduler_, rng_, 4).has_value());
  EXPECT_EQ(cluster_->state(1).pods, 3);
}

// Best fit puts the share on b, the tighter node but another GPU model; keeping the model it
// goes to c; with no node of the model free, the drain fails.
TEST_F(Defrag, DrainKeepsTheGpuModelWhenAsked) {
  make_cluster({NodeSpec{"a", 32000, 64000, 1, 0}, NodeSpec{"b", 32000, 64000, 1, 1},
                NodeSpec{"c", 32000, 64000, 1, 0}});
  place(0, gpu_pod(1000, 1, 500), 0, 0b1);
  place(1, gpu_pod(1000, 1, 500), 1, 0b1);
  const defrag::PodLookup lookup = [this](PodId id) -> const PodSpec* { return &pods_.at(id); };
  auto any = defrag::drain_node(*cluster_, 0, lookup, {}, *scheduler_, rng_, 4);
  ASSERT_TRUE(any.has_value());
  EXPECT_EQ(any->at(0).to, 1);
  ASSERT_TRUE(cluster_->release(0).ok());
  place(0, gpu_pod(1000, 1, 500), 0, 0b1);
  auto same = defrag::drain_node(*cluster_, 0, lookup, {}, *scheduler_, rng_, 4, true);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->at(0).to, 2);
  ASSERT_TRUE(cluster_->release(0).ok());
  place(0, gpu_pod(1000, 1, 500), 0, 0b1);
  place(2, gpu_pod(1000, 1, 600), 2, 0b1);
  const auto before = snapshot();
  EXPECT_FALSE(
      defrag::drain_node(*cluster_, 0, lookup, {}, *scheduler_, rng_, 4, true).has_value());
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace greensched
