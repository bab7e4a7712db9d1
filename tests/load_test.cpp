// Controlled load, energy management in replay, the proportional GPU power rule, the energy
// floor and the energy-aware FGD: hand-computed cases and properties.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "greensched/frag/fragmentation.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/load_generator.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/synthetic_times.hpp"
#include "greensched/trace/workload.hpp"
#include "test_data.hpp"
#include "test_pod.hpp"

namespace greensched {
namespace {

// ---------------------------------------------------------------------------------------------
// The load generator.

// Offered load computed here from first principles, not by the generator's helper.
double offered_pct(const std::vector<PodSpec>& pods, int64_t gpus, trace::LoadWindow w) {
  long double work = 0;
  for (const PodSpec& p : pods) {
    const int64_t a = std::max(p.creation_time, w.start_s);
    const int64_t b = std::min(p.deletion_time, w.end_s);
    if (b > a && p.num_gpu > 0) {
      work += static_cast<long double>(p.num_gpu) * p.gpu_milli / 1000.0L * (b - a);
    }
  }
  return static_cast<double>(100.0L * work / (static_cast<long double>(gpus) * w.length_s()));
}

int64_t gpus_of(const std::vector<NodeSpec>& nodes) {
  int64_t g = 0;
  for (const NodeSpec& n : nodes) g += n.gpu_count;
  return g;
}

trace::Workload builtin_with_times() {
  trace::Workload w = trace::builtin_openb_workload();
  trace::assign_synthetic_times(w.pods, 20230101, 28);
  return w;
}

void expect_loads_met(const trace::Workload& w) {
  const int64_t gpus = gpus_of(w.nodes);
  for (double load : {30.0, 50.0, 70.0, 90.0}) {
    trace::LoadSpec spec;
    spec.load_pct = load;
    spec.seed = 7;
    auto g = trace::generate_load(w.pods, gpus * kGpuMilli, spec);
    ASSERT_TRUE(g.ok()) << g.error();
    const trace::GeneratedLoad& out = g.value();
    SCOPED_TRACE(fmt::format("load {} %", load));
    EXPECT_EQ(out.window.start_s, 86400);
    EXPECT_EQ(out.window.end_s, 15 * 86400);
    const double realised = offered_pct(out.pods, gpus, out.window);
    EXPECT_NEAR(realised, load, 2.0);
    EXPECT_NEAR(out.offered_load_pct, realised, 1e-6);
    // Every job keeps a template's shape and QoS, and its duration unless it was already
    // running at the start (then it is the rest of one).
    EXPECT_TRUE(std::is_sorted(
        out.pods.begin(), out.pods.end(),
        [](const PodSpec& a, const PodSpec& b) { return a.creation_time < b.creation_time; }));
    EXPECT_GT(out.running_at_start, 0);
    EXPECT_LT(out.pods.back().creation_time, out.window.end_s);
  }
}

TEST(LoadGenerator, MeetsTheTargetOnTheBuiltinWorkload) {
  expect_loads_met(builtin_with_times());
}

TEST(LoadGenerator, MeetsTheTargetOnTheDefaultPodList) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = trace::load_openb_workload(testing::openb_path("openb_node_list_gpu_node.csv"),
                                      testing::openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  expect_loads_met(w.value());
}

TEST(LoadGenerator, KeepsTemplatesAndFollowsTheDailyProfile) {
  const trace::Workload w = builtin_with_times();
  std::map<std::string, const PodSpec*> by_name;
  for (const PodSpec& p : w.pods) by_name[p.name] = &p;
  trace::LoadSpec spec;
  spec.load_pct = 60;
  auto g = trace::generate_load(w.pods, gpus_of(w.nodes) * kGpuMilli, spec);
  ASSERT_TRUE(g.ok()) << g.error();
  std::array<int64_t, 24> by_hour{};
  for (const PodSpec& job : g.value().pods) {
    const PodSpec& t = *by_name.at(job.name.substr(0, job.name.rfind('~')));
    EXPECT_EQ(job.cpu_milli, t.cpu_milli);
    EXPECT_EQ(job.gpu_milli, t.gpu_milli);
    EXPECT_EQ(job.num_gpu, t.num_gpu);
    EXPECT_EQ(job.qos, t.qos);
    EXPECT_EQ(job.shape, t.shape);
    if (job.creation_time > 0) {
      EXPECT_EQ(job.deletion_time - job.creation_time, t.deletion_time - t.creation_time);
      ++by_hour[(job.creation_time / 3600) % 24];
    } else {
      EXPECT_LE(job.deletion_time, t.deletion_time - t.creation_time);
    }
  }
  // The openb profile has about 4 times as many arrivals at 18:00 as at 14:00.
  EXPECT_GT(by_hour[18], 2.5 * by_hour[14]);
}

TEST(LoadGenerator, SeededAndDeterministic) {
  const trace::Workload w = builtin_with_times();
  trace::LoadSpec spec;
  spec.load_pct = 40;
  spec.days = 3;
  const int64_t cap = gpus_of(w.nodes) * kGpuMilli;
  auto a = trace::generate_load(w.pods, cap, spec);
  auto b = trace::generate_load(w.pods, cap, spec);
  spec.seed = 43;
  auto c = trace::generate_load(w.pods, cap, spec);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_EQ(a.value().pods.size(), b.value().pods.size());
  for (std::size_t i = 0; i < a.value().pods.size(); ++i) {
    EXPECT_EQ(a.value().pods[i].name, b.value().pods[i].name);
    EXPECT_EQ(a.value().pods[i].creation_time, b.value().pods[i].creation_time);
  }
  EXPECT_NE(a.value().pods.front().name, c.value().pods.front().name);
}

TEST(LoadGenerator, RefusesBadInput) {
  const trace::Workload w = builtin_with_times();
  trace::LoadSpec spec;
  spec.load_pct = 0;
  EXPECT_FALSE(trace::generate_load(w.pods, 1000, spec).ok());
  spec.load_pct = 50;
  spec.days = 0;
  EXPECT_FALSE(trace::generate_load(w.pods, 1000, spec).ok());
  spec.days = 1;
  EXPECT_FALSE(trace::generate_load(w.pods, 0, spec).ok());
  std::vector<PodSpec> untimed = trace::builtin_openb_workload().pods;
  auto e = trace::generate_load(untimed, 1000, spec);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("creation/deletion"), std::string::npos) << e.error();
  std::vector<PodSpec> cpu_only(3);
  for (PodSpec& p : cpu_only) {
    p.cpu_milli = 1000;
    p.creation_time = 0;
    p.deletion_time = 100;
  }
  EXPECT_FALSE(trace::generate_load(cpu_only, 1000, spec).ok());
}

// Replayed, the load is served as offered (at 50 % little queues) and flat over the window:
// the jobs running at the start stand for an infinite past.
TEST(LoadGenerator, ReplayedLoadIsFlatAndServed) {
  trace::Workload w = builtin_with_times();
  trace::LoadSpec spec;
  spec.load_pct = 50;
  spec.days = 6;
  auto g = trace::generate_load(w.pods, gpus_of(w.nodes) * kGpuMilli, spec);
  ASSERT_TRUE(g.ok()) << g.error();
  const frag::TargetWorkload target = frag::build_target_workload(w.pods);
  w.pods = std::move(g.value().pods);
  auto power = power::PowerModel::builtin().resolve(w.nodes, w.models);
  ASSERT_TRUE(power.ok());
  sim::ReplayConfig config;
  config.policy = "fgd";
  config.queue = sim::QueueDiscipline::kBackfill;
  config.measure_from_s = g.value().window.start_s;
  config.measure_to_s = g.value().window.end_s;
  config.timeline_step_s = 3600;
  auto r = sim::run_replay(w, target, power.value(), 1.0, config);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NEAR(r.value().offered_load_pct, g.value().offered_load_pct, 1e-6);
  EXPECT_NEAR(r.value().gpu_alloc_pct, r.value().offered_load_pct, 2.0);
  EXPECT_EQ(r.value().pods_never_started, 0);
  // Mean allocation over the first and the last two days of the window.
  const double gpus = static_cast<double>(gpus_of(w.nodes));
  const auto mean_alloc = [&](double from, double to) {
    double sum = 0;
    int n = 0;
    for (const sim::TimelinePoint& p : r.value().timeline) {
      if (p.time_s >= from && p.time_s < to) {
        sum += p.allocated_gpus;
        ++n;
      }
    }
    return n > 0 ? 100.0 * sum / n / gpus : 0.0;
  };
  EXPECT_NEAR(mean_alloc(1 * 86400.0, 3 * 86400.0), 50.0, 6.0);
  EXPECT_NEAR(mean_alloc(5 * 86400.0, 7 * 86400.0), 50.0, 6.0);
}

// ---------------------------------------------------------------------------------------------
// Power: the proportional rule and the energy floor.

power::NodePower t4_figures(power::GpuPowerRule rule) {
  power::NodePower p;
  p.gpu = power::GpuPower{10, 70};
  p.cpu.name = "test-cpu";
  p.cpu.idle_watts = 15;
  p.cpu.max_watts = 120;
  p.cpu.cores_per_socket = 16;
  p.gpu_rule = rule;
  return p;
}

TEST(GpuPowerRule, ProportionalFollowsTheAllocatedShare) {
  const NodeSpec n{"n", 64000, 65536, 2, 0};
  const int32_t free[2] = {700, 1000};  // 30 % of GPU 0 allocated
  // PWR: GPU 0 draws max (70), GPU 1 idle (10); CPU all idle: 2 sockets x 15.
  EXPECT_DOUBLE_EQ(power::node_power_watts(n, t4_figures(power::GpuPowerRule::kPwr), 64000, free),
                   70 + 10 + 30);
  // Proportional: 10 + 60 x 0.3 = 28 for GPU 0.
  EXPECT_DOUBLE_EQ(
      power::node_power_watts(n, t4_figures(power::GpuPowerRule::kProportional), 64000, free),
      28 + 10 + 30);
  EXPECT_EQ(power::parse_gpu_power_rule("proportional").value(),
            power::GpuPowerRule::kProportional);
  EXPECT_FALSE(power::parse_gpu_power_rule("linear").ok());
}

TEST(GpuPowerRule, ModelFileKeyAndErrors) {
  const std::string base =
      R"({"gpus": {"T4": {"idle_watts": 10, "max_watts": 70}},
          "cpus": {"c": {"idle_watts": 15, "max_watts": 120, "cores_per_socket": 16}},
          "default_cpu": "c")";
  auto m = power::PowerModel::parse(base + R"(, "gpu_power": "proportional"})", "m.json");
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m.value().gpu_rule(), power::GpuPowerRule::kProportional);
  GpuModelRegistry models;
  const NodeSpec n{"n", 8000, 1000, 1, *models.intern("T4")};
  auto figures = m.value().resolve(std::span<const NodeSpec>(&n, 1), models);
  ASSERT_TRUE(figures.ok());
  EXPECT_EQ(figures.value()[0].gpu_rule, power::GpuPowerRule::kProportional);
  auto bad = power::PowerModel::parse(base + R"(, "gpu_power": 3})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("m.json: gpu_power"), std::string::npos) << bad.error();
}

TEST(EnergyFloor, PodShareOfMaxPower) {
  const NodeSpec n{"n", 64000, 65536, 2, 0};  // 32 cores: 2 sockets of 16
  PodSpec p;
  p.cpu_milli = 16000;
  p.num_gpu = 1;
  p.gpu_milli = 500;
  // Half a GPU at 70 W max, a quarter of the CPU at 2 x 120 W.
  EXPECT_DOUBLE_EQ(power::pod_floor_watts(n, t4_figures(power::GpuPowerRule::kPwr), p),
                   35.0 + 60.0);
}

// ---------------------------------------------------------------------------------------------
// Energy management in replay, on one node (IT watts: idle 40, one whole-GPU pod of 4 vCPU
// 205; facility x 1.5): 60 W idle, 307.5 W busy.

trace::Workload one_node(std::vector<PodSpec> pods) {
  trace::Workload w;
  w.nodes.push_back(NodeSpec{"node-a", 64000, 65536, 1, *w.models.intern("T4")});
  w.pods = std::move(pods);
  w.shape_count = trace::assign_shape_ids(w.pods);
  return w;
}

PodSpec timed_pod(std::string name, int64_t created, int64_t duration, Qos qos = Qos::kBE) {
  PodSpec p = testing::test_pod(std::move(name), 4000, 1, 1000);
  p.qos = qos;
  p.creation_time = created;
  p.deletion_time = created + duration;
  return p;
}

Result<sim::ReplayResult> replay_one_node(const trace::Workload& w, sim::ReplayConfig config) {
  const std::vector<power::NodePower> power(1, t4_figures(power::GpuPowerRule::kPwr));
  return sim::run_replay(w, frag::build_target_workload(w.pods), power, 1.5, config);
}

// p0 runs 0-50; the node idles 50-150, sleeps 150-300; p1 arrives at 300, wakes it (30 s at
// idle power) and runs 330-380; the node idles until it sleeps again at 480.
TEST(ReplayPowerDown, SleepWakeAndDelayByHand) {
  const trace::Workload w = one_node({timed_pod("p0", 0, 50, Qos::kLS), timed_pod("p1", 300, 50)});
  sim::ReplayConfig config;
  config.power_down_idle_s = 100;
  config.wake_delay_s = 30;
  auto r = replay_one_node(w, config);
  ASSERT_TRUE(r.ok()) << r.error();
  const sim::ReplayResult& res = r.value();
  EXPECT_EQ(res.wakeups, 1);
  EXPECT_DOUBLE_EQ(res.makespan_s, 480);
  // 307.5 x 50 + 60 x 100 + 0 x 150 + 60 x 30 + 307.5 x 50 + 60 x 100 J.
  EXPECT_DOUBLE_EQ(res.energy_kwh, 44550.0 / 3.6e6);
  // Each pod: 70 W of GPU + 4/64 of 2 x 120 W CPU = 85 W IT, x 1.5, for 50 s.
  EXPECT_DOUBLE_EQ(res.energy_floor_kwh, 2 * 127.5 * 50 / 3.6e6);
  EXPECT_EQ(res.delay_ls.pods, 1);
  EXPECT_DOUBLE_EQ(res.delay_ls.p99_s, 0);
  EXPECT_EQ(res.delay_be.pods, 1);
  EXPECT_DOUBLE_EQ(res.delay_be.p99_s, 30);  // the wake-up counts as queueing
  EXPECT_DOUBLE_EQ(res.mean_nodes_awake, 330.0 / 480.0);
  EXPECT_DOUBLE_EQ(res.gpu_alloc_pct, 100.0 * 100 / 480);
  EXPECT_DOUBLE_EQ(res.gpu_hours, 100.0 / 3600);
  EXPECT_EQ(res.timeline.back().nodes_awake, 0);

  // Never sleeping: p1 runs 300-350; 307.5 x 100 + 60 x 250 J, no wake-up, no delay.
  config.power_down_idle_s = -1;
  auto always_on = replay_one_node(w, config);
  ASSERT_TRUE(always_on.ok());
  EXPECT_DOUBLE_EQ(always_on.value().energy_kwh, (307.5 * 100 + 60.0 * 250) / 3.6e6);
  EXPECT_DOUBLE_EQ(always_on.value().delay_be.p99_s, 0);
  EXPECT_EQ(always_on.value().wakeups, 0);
}

// The windowed case: p0 runs 0-50 and p1 300-350 on one node that sleeps after 100 s idle and
// takes 30 s to wake, measured from t = 100 to `measure_to_s`.
struct WindowCase {
  trace::Workload w = one_node({timed_pod("p0", 0, 50), timed_pod("p1", 300, 50)});
  sim::ReplayConfig config;

  explicit WindowCase(int64_t measure_to_s) {
    config.power_down_idle_s = 100;
    config.wake_delay_s = 30;
    config.measure_from_s = 100;
    config.measure_to_s = measure_to_s;
  }
  Result<sim::ReplayResult> run() const { return replay_one_node(w, config); }
};

TEST(ReplayPowerDown, WindowLimitsEveryMetric) {
  auto r = WindowCase(400).run();
  ASSERT_TRUE(r.ok()) << r.error();
  // [100,150) idle 60 W, [150,300) asleep, [300,330) waking 60 W, [330,380) 307.5 W,
  // [380,400) idle 60 W.
  EXPECT_DOUBLE_EQ(r.value().energy_kwh, (3000 + 1800 + 15375 + 1200) / 3.6e6);
  EXPECT_DOUBLE_EQ(r.value().window_s, 300);
  EXPECT_EQ(r.value().delay_be.pods, 1);  // only p1 was created inside the window
  EXPECT_DOUBLE_EQ(r.value().mean_queue_delay_s, 30);
  // p1's 50 s of one GPU over 300 s of one GPU.
  EXPECT_DOUBLE_EQ(r.value().offered_load_pct, 100.0 * 50 / 300);
}

// A window that ends after the last event is measured to its end: the cluster idles, then
// sleeps, until then, and the window is its whole length.
TEST(ReplayPowerDown, WindowPastTheLastEventIsMeasuredToItsEnd) {
  WindowCase c(1000);
  auto r = c.run();
  ASSERT_TRUE(r.ok()) << r.error();
  // [100,150) idle 60 W, [150,300) asleep, [300,330) waking 60 W, [330,380) 307.5 W,
  // [380,480) idle 60 W, [480,1000) asleep.
  EXPECT_DOUBLE_EQ(r.value().energy_kwh, (3000 + 1800 + 15375 + 6000) / 3.6e6);
  EXPECT_DOUBLE_EQ(r.value().window_s, 900);
  EXPECT_DOUBLE_EQ(r.value().offered_load_pct, 100.0 * 50 / 900);
  EXPECT_DOUBLE_EQ(r.value().gpu_alloc_pct, 100.0 * 50 / 900);
  EXPECT_DOUBLE_EQ(r.value().makespan_s, 480);  // the last event, not the window's end

  // Never sleeping: [100,300) and [350,1000) idle 60 W, [300,350) 307.5 W.
  c.config.power_down_idle_s = -1;
  auto always_on = c.run();
  ASSERT_TRUE(always_on.ok());
  EXPECT_DOUBLE_EQ(always_on.value().energy_kwh, (12000 + 15375 + 39000) / 3.6e6);
  EXPECT_DOUBLE_EQ(always_on.value().window_s, 900);
}

// All three nodes sleep from t = 51 (a CPU pod at t = 0 starts the clock). Two GPU pods arrive
// together at 200 and each wakes its own node; a CPU pod arriving at 205 claims a node already
// waking instead of waking the third. At 220 all three start.
TEST(ReplayPowerDown, PodsClaimWakingNodesBeforeWakingMore) {
  trace::Workload w;
  const GpuModelId t4 = *w.models.intern("T4");
  for (const char* name : {"a", "b", "c"}) w.nodes.push_back(NodeSpec{name, 64000, 65536, 1, t4});
  PodSpec early = timed_pod("early", 0, 1);
  early.num_gpu = 0;
  early.gpu_milli = 0;
  PodSpec cpu = early;
  cpu.name = "cpu";
  cpu.creation_time = 205;
  cpu.deletion_time = 215;
  w.pods = {early, timed_pod("g0", 200, 10), timed_pod("g1", 200, 10), cpu};
  w.shape_count = trace::assign_shape_ids(w.pods);
  const std::vector<power::NodePower> power(3, t4_figures(power::GpuPowerRule::kPwr));
  sim::ReplayConfig config;
  config.queue = sim::QueueDiscipline::kBackfill;
  config.power_down_idle_s = 50;
  config.wake_delay_s = 20;
  auto r = sim::run_replay(w, frag::build_target_workload(w.pods), power, 1.0, config);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().wakeups, 2);
  EXPECT_EQ(r.value().pods_started, 4);
  EXPECT_DOUBLE_EQ(r.value().p99_queue_delay_s, 20);
  EXPECT_DOUBLE_EQ(r.value().mean_queue_delay_s, (0.0 + 20 + 20 + 15) / 4);
}

// ---------------------------------------------------------------------------------------------
// The energy-aware FGD.

class FgdEnergy : public ::testing::Test {
 protected:
  PodSpec pod(int64_t cpu, int num_gpu, int32_t milli) {
    return testing::test_pod("", cpu, num_gpu, milli, 0, /*memory_mib=*/1000);
  }

  // The node `policy` picks for `p` on `cluster` under tie order `rank`. The target workload
  // is `target` (each pod its own shape id).
  NodeIndex pick(std::string_view policy, const Cluster& cluster, PodSpec p,
                 std::vector<uint32_t> rank, std::vector<PodSpec> target,
                 std::vector<power::NodePower> figures) {
    target.push_back(p);
    const uint32_t shapes = trace::assign_shape_ids(target);
    p.shape = target.back().shape;
    policy::PolicyContext context;
    context.frag = std::make_shared<frag::FragmentationModel>(frag::build_target_workload(target));
    context.shape_count = shapes;
    context.power = std::make_shared<const std::vector<power::NodePower>>(std::move(figures));
    auto made = policy::make_policy(policy, context);
    EXPECT_TRUE(made.ok()) << made.error();
    policy::Scheduler s(*made.value(), std::move(rank));
    Rng rng(1);
    return s.schedule(cluster, p, rng).node;
  }
};

// A and B look the same to FGD (B's small CPU pod changes nothing it measures); FGD follows
// the tie order, fgd-energy takes B, the node already in use, under either order.
TEST_F(FgdEnergy, AmongFgdTiesPrefersANodeInUse) {
  Cluster c({NodeSpec{"A", 32000, 64000, 2, 0}, NodeSpec{"B", 32000, 64000, 2, 0}});
  ASSERT_TRUE(c.allocate(100, pod(1000, 0, 0), 1, 0).ok());
  const std::vector<PodSpec> target = {pod(1000, 1, 1000)};
  const std::vector<power::NodePower> figures(2, t4_figures(power::GpuPowerRule::kPwr));
  EXPECT_EQ(pick("fgd", c, pod(1000, 1, 1000), {0, 1}, target, figures), 0);
  EXPECT_EQ(pick("fgd", c, pod(1000, 1, 1000), {1, 0}, target, figures), 1);
  EXPECT_EQ(pick("fgd-energy", c, pod(1000, 1, 1000), {0, 1}, target, figures), 1);
  EXPECT_EQ(pick("fgd-energy", c, pod(1000, 1, 1000), {1, 0}, target, figures), 1);
}

// Both nodes in use and tied for FGD: the one whose GPU adds less power (T4: 70 - 10 = 60 W
// against V100: 300 - 30 = 270 W) wins, whatever the tie order.
TEST_F(FgdEnergy, AmongBusyTiesPrefersTheLeastPower) {
  Cluster c({NodeSpec{"V100", 32000, 64000, 2, 0}, NodeSpec{"T4", 32000, 64000, 2, 0}});
  ASSERT_TRUE(c.allocate(100, pod(1000, 0, 0), 0, 0).ok());
  ASSERT_TRUE(c.allocate(101, pod(1000, 0, 0), 1, 0).ok());
  std::vector<power::NodePower> figures(2, t4_figures(power::GpuPowerRule::kPwr));
  figures[0].gpu = power::GpuPower{30, 300};
  const std::vector<PodSpec> target = {pod(1000, 1, 1000)};
  EXPECT_EQ(pick("fgd-energy", c, pod(1000, 1, 1000), {0, 1}, target, figures), 1);
  EXPECT_EQ(pick("fgd-energy", c, pod(1000, 1, 1000), {1, 0}, target, figures), 1);
}

// FGD's own preference is never overruled: B is in use but a 500-milli share there leaves a
// 100-milli sliver no 500-milli pod of the target can use (score 47); on empty A it leaves a
// usable half GPU (score 50). Both FGD and fgd-energy take A.
TEST_F(FgdEnergy, FgdPreferenceComesFirst) {
  Cluster c({NodeSpec{"A", 32000, 64000, 1, 0}, NodeSpec{"B", 32000, 64000, 1, 0}});
  ASSERT_TRUE(c.allocate(100, pod(1000, 1, 400), 1, 0b1).ok());
  const std::vector<PodSpec> target = {pod(1000, 1, 500)};
  const std::vector<power::NodePower> figures(2, t4_figures(power::GpuPowerRule::kPwr));
  for (std::vector<uint32_t> rank : {std::vector<uint32_t>{0, 1}, std::vector<uint32_t>{1, 0}}) {
    EXPECT_EQ(pick("fgd", c, pod(1000, 1, 500), rank, target, figures), 0);
    EXPECT_EQ(pick("fgd-energy", c, pod(1000, 1, 500), rank, target, figures), 0);
  }
}

}  // namespace
}  // namespace greensched
