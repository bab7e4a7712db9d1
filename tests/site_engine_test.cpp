// One site engine (sim/site_engine.hpp) under `simulate --mode replay` and every fleet site: a
// one-site fleet under `local` is the replay of the same workload and seed, to the joule; and
// the engine's own rules by hand (the wake rule, holds, a node idle for 0 s).
#include <gtest/gtest.h>

#include <vector>

#include "greensched/core/cluster.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/multi/fleet_jobs.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/sim/site_engine.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "multi_fixtures.hpp"

namespace greensched {
namespace {

// The built-in cluster at 70 % load over a day after half a day's warm-up, nodes sleeping
// after 30 idle minutes: the fleet of that one cluster under `local` (every job at home,
// scheduled as it arrives) and the replay (every arrival of an instant in one pass) with the
// same queue order and seed give the same energy, allocation and delays. Under `priority` a
// latency-sensitive job passes the best-effort ones that arrived in the same second in the
// replay's pass but not in the fleet's cycles, so both run `backfill` here.
TEST(SiteEngine, OneSiteFleetUnderLocalIsTheReplay) {
  trace::Workload w = trace::builtin_openb_workload();
  trace::assign_synthetic_times(w.pods, 7, 10);  // the built-in pods have no times
  int64_t capacity = 0;
  for (const NodeSpec& n : w.nodes) capacity += int64_t{n.gpu_count} * kGpuMilli;
  trace::LoadSpec spec;
  spec.load_pct = 70;
  spec.days = 1;
  spec.warmup_days = 0.5;
  auto generated = trace::generate_load(w.pods, capacity, spec);
  ASSERT_TRUE(generated.ok()) << generated.error();
  trace::Workload loaded = w;
  loaded.pods = generated.value().pods;
  loaded.shape_count = trace::assign_shape_ids(loaded.pods);
  const power::PowerModel model = power::PowerModel::builtin();

  multi::Fleet fleet;
  fleet.models = w.models;
  multi::SiteSpec site;
  site.name = "only";
  site.nodes = w.nodes;
  site.carbon = multi::TimeSeries(fleet.start_s, 3600, {300});
  site.pue = model.pue();
  site.policy = "fgd";
  site.queue = sim::QueueDiscipline::kBackfill;
  fleet.sites.push_back(site);
  multi::MultiOptions options;
  options.agent = "local";
  options.seed = 42;
  options.power_down_idle_s = 1800;
  options.wake_delay_s = 300;
  options.measure_from_s = generated.value().window.start_s;
  options.measure_to_s = generated.value().window.end_s;
  options.power_model = model;
  auto fleet_run = multi::run_fleet(fleet, loaded.pods, loaded.shape_count, options);
  ASSERT_TRUE(fleet_run.ok()) << fleet_run.error();

  sim::ReplayConfig config;
  config.policy = "fgd";
  config.seed = multi::site_seed(options.seed, 0);
  config.queue = sim::QueueDiscipline::kBackfill;
  config.power_down_idle_s = options.power_down_idle_s;
  config.wake_delay_s = options.wake_delay_s;
  config.measure_from_s = options.measure_from_s;
  config.measure_to_s = options.measure_to_s;
  auto figures = model.resolve(w.nodes, w.models);
  ASSERT_TRUE(figures.ok()) << figures.error();
  auto replay = sim::run_replay(loaded, frag::build_target_workload(loaded.pods), figures.value(),
                                model.pue(), config);
  ASSERT_TRUE(replay.ok()) << replay.error();

  const multi::MultiResult& f = fleet_run.value();
  const sim::ReplayResult& r = replay.value();
  ASSERT_GT(r.wakeups, 0);  // the power states were exercised
  EXPECT_NEAR(f.energy_kwh, r.energy_kwh, 1e-9 * r.energy_kwh);
  EXPECT_NEAR(f.gpu_alloc_pct, r.gpu_alloc_pct, 1e-9);
  EXPECT_NEAR(f.mean_delay_s_ls, r.delay_ls.mean_s, 1e-9);
  EXPECT_NEAR(f.p99_delay_s_ls, r.delay_ls.p99_s, 1e-9);
  EXPECT_NEAR(f.mean_delay_s_be, r.delay_be.mean_s, 1e-9);
  EXPECT_NEAR(f.p99_delay_s_be, r.delay_be.p99_s, 1e-9);
  EXPECT_EQ(f.jobs_never_started, r.pods_never_started);
}

// A small engine by hand: two nodes, one GPU each, the first drawing more at idle.
struct Bench {
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;
  std::vector<sim::SiteJob> jobs;
  std::vector<uint32_t> keys;  // the engine keeps a reference
  std::vector<power::NodePower> figures;
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<policy::Policy> policy;
  std::unique_ptr<policy::Scheduler> scheduler;
  std::unique_ptr<power::ClusterPower> power;
  Rng rng{1};
  std::unique_ptr<sim::SiteEngine> engine;

  explicit Bench(int64_t idle_s, int jobs_count = 2) {
    const multi::Fleet fleet = multi::fixtures::two_sites(100, 100);
    nodes = {fleet.sites[0].nodes.front(), fleet.sites[1].nodes.front()};
    nodes[0].name = "hot";
    nodes[1].name = "cool";
    auto resolved = multi::fixtures::tiny_power_model().resolve(nodes, fleet.models);
    figures = resolved.value();
    figures[0].cpu.idle_watts += 100;  // "hot" draws 100 W more at idle
    for (int i = 0; i < jobs_count; ++i) {
      pods.push_back(multi::fixtures::job(("j" + std::to_string(i)).c_str(), 1000,
                                          nodes[0].gpu_count, 1000, 0, 1000));
    }
    for (const PodSpec& p : pods) jobs.push_back(sim::SiteJob{&p, 1000});
    cluster = std::make_unique<Cluster>(nodes);
    policy::PolicyContext context;
    context.shape_count = trace::assign_shape_ids(pods);
    policy = std::move(policy::make_policy("bestfit", context).value());
    scheduler = std::make_unique<policy::Scheduler>(*policy, policy::random_tie_rank(2, rng));
    power = std::make_unique<power::ClusterPower>(figures, *cluster);
    uint32_t key_count = 0;
    keys = sim::feasibility_keys(jobs, key_count);
    sim::SiteEngineConfig config;
    config.queue = sim::QueueDiscipline::kBackfill;
    config.power_down_idle_s = idle_s;
    config.wake_delay_s = 300;
    engine = std::make_unique<sim::SiteEngine>(*cluster, *scheduler, rng, *power, jobs, keys,
                                               key_count, config);
  }
  // Runs instants until `until` (or nothing is left).
  void run_until(int64_t until) {
    for (std::optional<int64_t> t = engine->next_time(); t && *t <= until;
         t = engine->next_time()) {
      ASSERT_TRUE(engine->handle_events(*t).ok());
      ASSERT_TRUE(engine->schedule(*t).ok());
    }
  }
};

// Both nodes asleep after 10 idle seconds; a job that fits either wakes the one that draws
// less ("cool"), waits the 300 s wake-up, and starts there; the hot node stays asleep.
TEST(SiteEngine, WakesTheNodeThatDrawsLeast) {
  Bench b(10, 1);
  b.engine->begin(0);
  b.run_until(10);
  ASSERT_TRUE(b.engine->sleeping(0) && b.engine->sleeping(1));
  EXPECT_EQ(b.engine->wake_candidate(b.pods[0]), 1);
  b.engine->enqueue(0, 0);
  ASSERT_TRUE(b.engine->schedule(20).ok());
  EXPECT_TRUE(b.engine->waking(1));
  EXPECT_TRUE(b.engine->sleeping(0));
  b.run_until(320);
  EXPECT_EQ(b.engine->first_start(0), 320);
  EXPECT_EQ(b.cluster->allocation_of(0)->node, 1);
  EXPECT_EQ(b.engine->wakeups(), 1);
}

// A node held for a job on its way is out of the scheduler's view: a job that arrives first
// cannot take it and wakes the other node instead; the held job's arrival finds it. Held while
// asleep, it wakes now and stays held after its wake-up until released.
TEST(SiteEngine, AHeldNodeWaitsForItsJob) {
  Bench b(10, 2);
  b.engine->begin(0);
  b.run_until(10);
  Rng preview(7);
  const NodeIndex held = b.engine->hold_for(1, 20, preview);
  EXPECT_EQ(held, 1);  // asleep: the cheapest to wake, woken now
  EXPECT_TRUE(b.engine->waking(1));
  b.run_until(400);  // its wake-up ends at 320: still held, still offline
  EXPECT_FALSE(b.cluster->state(1).online);
  b.engine->enqueue(0, 0);  // job 0 may not take it: it wakes the other node
  ASSERT_TRUE(b.engine->schedule(400).ok());
  EXPECT_TRUE(b.engine->waking(0));
  b.run_until(700);
  EXPECT_EQ(b.engine->first_start(0), 700);
  EXPECT_EQ(b.cluster->allocation_of(0)->node, 0);
  b.engine->enqueue(1, 1);
  ASSERT_TRUE(b.engine->arrive_held(1, held, 710).ok());
  ASSERT_TRUE(b.engine->schedule(710).ok());
  EXPECT_EQ(b.engine->first_start(1), 710);
  EXPECT_EQ(b.cluster->allocation_of(1)->node, 1);
}

// A held node goes to its job even where a job queued before it waits: job 1 queues at 30
// with both nodes claimed (the cool one held for job 2, the hot one woken by job 0) and still
// waits when job 2 arrives. Job 2 takes the held node the moment it arrives (at 400, the node
// awake since 320), or the moment the node wakes (320) if it arrives first (at 100); job 1
// waits for job 0 to leave the hot node (1320).
TEST(SiteEngine, AHeldNodeGoesToItsJobBeforeTheQueue) {
  for (const int64_t arrival : {int64_t{400}, int64_t{100}}) {
    SCOPED_TRACE(arrival);
    Bench b(10, 3);
    b.engine->begin(0);
    b.run_until(10);
    Rng preview(7);
    const NodeIndex held = b.engine->hold_for(2, 20, preview);
    ASSERT_EQ(held, 1);
    b.engine->enqueue(0, 0);
    ASSERT_TRUE(b.engine->schedule(20).ok());
    EXPECT_TRUE(b.engine->waking(0));
    b.engine->enqueue(1, 1);
    ASSERT_TRUE(b.engine->schedule(30).ok());
    b.run_until(arrival - 1);
    b.engine->enqueue(2, 2);
    ASSERT_TRUE(b.engine->arrive_held(2, held, arrival).ok());
    ASSERT_TRUE(b.engine->schedule(arrival).ok());
    b.run_until(400);
    EXPECT_EQ(b.engine->first_start(2), std::max<int64_t>(arrival, 320));
    ASSERT_TRUE(b.cluster->allocation_of(2).has_value());
    EXPECT_EQ(b.cluster->allocation_of(2)->node, held);
    EXPECT_EQ(b.engine->first_start(1), -1);
    b.run_until(2000);
    EXPECT_EQ(b.engine->first_start(0), 320);
    EXPECT_EQ(b.engine->first_start(1), 1320);
  }
}

// Where the policy places a job on its way now, its room is reserved: allocated at once, so a
// job that arrives during the transfer finds the node taken (and wakes the sleeping one); the
// reserved job starts there when it arrives, its delay from that moment.
TEST(SiteEngine, AReservationKeepsRoomOnABusyNodeUntilItsJobArrives) {
  Bench b(1800, 2);
  b.engine->begin(0);
  Rng preview(7);
  const NodeIndex node = b.engine->hold_for(1, 0, preview);
  ASSERT_GE(node, 0);
  EXPECT_TRUE(b.engine->reserved(1));
  EXPECT_EQ(b.engine->running(), 0);
  EXPECT_EQ(b.cluster->state(node).pods, 1);
  b.engine->enqueue(0, 0);
  ASSERT_TRUE(b.engine->schedule(10).ok());
  EXPECT_EQ(b.engine->first_start(0), 10);
  EXPECT_NE(b.cluster->allocation_of(0)->node, node);  // the other node, not the reserved one
  ASSERT_TRUE(b.engine->start_reserved(1, 60).ok());
  EXPECT_FALSE(b.engine->reserved(1));
  EXPECT_EQ(b.engine->first_start(1), 60);
  EXPECT_EQ(b.engine->running(), 2);
  b.run_until(1060);  // it leaves after its 1000 s, counted from 60
  EXPECT_EQ(b.engine->running(), 0);
  EXPECT_FALSE(b.engine->start_reserved(1, 2000).ok());  // nothing reserved any more
}

// Nodes that sleep as soon as they are idle (0 s): a job that woke one starts on it before it
// can fall asleep again.
TEST(SiteEngine, ANodeIdleForNoTimeServesTheJobThatWokeIt) {
  Bench b(0, 1);
  b.engine->begin(0);
  b.run_until(0);
  ASSERT_TRUE(b.engine->sleeping(0) && b.engine->sleeping(1));
  b.engine->enqueue(0, 0);
  ASSERT_TRUE(b.engine->schedule(5).ok());
  b.run_until(305);
  EXPECT_EQ(b.engine->first_start(0), 305);
}

}  // namespace
}  // namespace greensched
