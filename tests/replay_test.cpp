#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "greensched/core/rng.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/report/timeline_writer.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/workload.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"
#include "test_pod.hpp"

namespace greensched::sim {
namespace {

// One node: 64 vCPU (32 physical cores, two sockets of 16), 64 GiB, one T4.
// Power (IT watts): GPU 10 idle / 70 busy; CPU 15 idle / 120 active per socket. With u vCPU
// in use, working cores = u / 2, active sockets = ceil(u / 32):
//   idle                      10 +  15 + 15 =  40
//   GPU pod(s), u <= 32       70 + 120 + 15 = 205
//   GPU pod(s), 32 < u <= 64  70 + 120 + 120 = 310
//   no GPU pod, 32 < u        10 + 120 + 120 = 250
// Facility power is 1.5 x that: 60, 307.5, 465, 375.
constexpr double kPue = 1.5;

trace::Workload one_node_cluster() {
  trace::Workload w;
  NodeSpec n;
  n.name = "node-a";
  n.cpu_milli = 64000;
  n.memory_mib = 65536;
  n.gpu_count = 1;
  n.model = *w.models.intern("T4");
  w.nodes.push_back(n);
  w.pods_source = "hand-made";
  return w;
}

power::NodePower hand_power() {
  power::NodePower p;
  p.gpu = power::GpuPower{10, 70};
  p.cpu.name = "test-cpu";
  p.cpu.idle_watts = 15;
  p.cpu.max_watts = 120;
  p.cpu.cores_per_socket = 16;
  p.gpu_name = "T4";
  return p;
}

PodSpec make_pod(std::string name, int64_t cpu, int num_gpu, int32_t gpu_milli, int64_t created,
                 int64_t duration) {
  PodSpec p = testing::test_pod(std::move(name), cpu, num_gpu, gpu_milli);
  p.creation_time = created;
  p.deletion_time = created + duration;
  return p;
}

void finish(trace::Workload& w) {
  w.shape_count = trace::assign_shape_ids(w.pods);
}

// P1 (a whole GPU) waits for P0's GPU; P2 (CPU only, 40 vCPU) fits at once but under FIFO
// waits behind P1; P3 waits for the GPU after P1; P4 asks for more CPU than the node has.
trace::Workload five_pods() {
  trace::Workload w = one_node_cluster();
  w.pods = {make_pod("p0", 4000, 1, 1000, 0, 100), make_pod("p1", 4000, 1, 1000, 10, 50),
            make_pod("p2", 40000, 0, 0, 20, 120), make_pod("p3", 4000, 1, 1000, 30, 40),
            make_pod("p4", 80000, 0, 0, 40, 10)};
  finish(w);
  return w;
}

Result<ReplayResult> replay(const trace::Workload& w, const ReplayConfig& config) {
  const std::vector<power::NodePower> power(w.nodes.size(), hand_power());
  return run_replay(w, frag::build_target_workload(w.pods), power, kPue, config);
}

ReplayConfig config_with(QueueDiscipline queue, double time_scale = 1.0) {
  ReplayConfig c;
  c.queue = queue;
  c.time_scale = time_scale;
  return c;
}

struct Row {
  double time;
  int64_t running;
  int64_t queued;
  double gpus;
  double watts;
  double joules;
};

void expect_timeline(const ReplayResult& r, const std::vector<Row>& rows) {
  ASSERT_EQ(r.timeline.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TimelinePoint& p = r.timeline[i];
    SCOPED_TRACE(fmt::format("row {} (time {})", i, rows[i].time));
    EXPECT_DOUBLE_EQ(p.time_s, rows[i].time);
    EXPECT_EQ(p.running_pods, rows[i].running);
    EXPECT_EQ(p.queued_pods, rows[i].queued);
    EXPECT_DOUBLE_EQ(p.allocated_gpus, rows[i].gpus);
    EXPECT_DOUBLE_EQ(p.power_watts, rows[i].watts);
    EXPECT_DOUBLE_EQ(p.energy_joules, rows[i].joules);
  }
}

TEST(ReplayPower, HandFiguresPerPhase) {
  const trace::Workload w = one_node_cluster();
  const NodeSpec& n = w.nodes[0];
  const power::NodePower p = hand_power();
  const int32_t gpu_free[1] = {1000};
  const int32_t gpu_busy[1] = {0};
  EXPECT_DOUBLE_EQ(power::node_power_watts(n, p, 64000, gpu_free), 40.0);
  EXPECT_DOUBLE_EQ(power::node_power_watts(n, p, 60000, gpu_busy), 205.0);  // P0 alone
  EXPECT_DOUBLE_EQ(power::node_power_watts(n, p, 20000, gpu_busy), 310.0);  // a GPU pod + P2
  EXPECT_DOUBLE_EQ(power::node_power_watts(n, p, 24000, gpu_free), 250.0);  // P2 alone
}

TEST(ReplayQueue, FifoHeadBlocksSmallerPods) {
  auto r = replay(five_pods(), config_with(QueueDiscipline::kFifo));
  ASSERT_TRUE(r.ok()) << r.error();
  const ReplayResult& res = r.value();
  EXPECT_EQ(res.pods_total, 5);
  EXPECT_EQ(res.pods_started, 4);
  EXPECT_EQ(res.pods_never_started, 1);  // p4
  EXPECT_EQ(res.pods_queued_at_end, 1);
  EXPECT_EQ(res.pods_requeued, 0);
  // Delays: p0 0, p1 90, p2 80 (behind p1), p3 120.
  EXPECT_DOUBLE_EQ(res.mean_queue_delay_s, 72.5);
  EXPECT_DOUBLE_EQ(res.p99_queue_delay_s, 120.0);
  EXPECT_DOUBLE_EQ(res.makespan_s, 220.0);
  // 100 s at 307.5 W, 90 s at 465 W, 30 s at 375 W (p2 alone after p3 left).
  expect_timeline(res, {
                           {0, 0, 0, 0, 60, 0},  // before the first event
                           {0, 1, 0, 1, 307.5, 0},
                           {10, 1, 1, 1, 307.5, 3075},
                           {20, 1, 2, 1, 307.5, 6150},
                           {30, 1, 3, 1, 307.5, 9225},
                           {40, 1, 4, 1, 307.5, 12300},
                           {100, 2, 2, 1, 465, 30750},  // p0 left; p1 and p2 start
                           {150, 2, 1, 1, 465, 54000},  // p1 left; p3 starts
                           {190, 1, 1, 0, 375, 72600},  // p3 left
                           {220, 0, 1, 0, 60, 83850},   // p2 left
                       });
  EXPECT_DOUBLE_EQ(res.energy_kwh, 83850.0 / 3.6e6);
}

TEST(ReplayQueue, BackfillLetsSmallPodsPass) {
  auto r = replay(five_pods(), config_with(QueueDiscipline::kBackfill));
  ASSERT_TRUE(r.ok()) << r.error();
  const ReplayResult& res = r.value();
  EXPECT_EQ(res.pods_started, 4);
  EXPECT_EQ(res.pods_never_started, 1);
  EXPECT_EQ(res.pods_requeued, 0);
  // Delays: p0 0, p1 90, p2 0 (backfilled), p3 120.
  EXPECT_DOUBLE_EQ(res.mean_queue_delay_s, 52.5);
  EXPECT_DOUBLE_EQ(res.p99_queue_delay_s, 120.0);
  EXPECT_DOUBLE_EQ(res.makespan_s, 190.0);
  // 20 s at 307.5 W, 120 s at 465 W, 50 s at 307.5 W.
  expect_timeline(res, {
                           {0, 0, 0, 0, 60, 0},
                           {0, 1, 0, 1, 307.5, 0},
                           {10, 1, 1, 1, 307.5, 3075},
                           {20, 2, 1, 1, 465, 6150},  // p2 starts beside p0
                           {30, 2, 2, 1, 465, 10800},
                           {40, 2, 3, 1, 465, 15450},
                           {100, 2, 2, 1, 465, 43350},    // p0 left; p1 starts, p3 and p4 wait
                           {140, 1, 2, 1, 307.5, 61950},  // p2 left
                           {150, 1, 1, 1, 307.5, 65025},  // p1 left; p3 starts
                           {190, 0, 1, 0, 60, 77325},     // p3 left
                       });
  EXPECT_DOUBLE_EQ(res.energy_kwh, 77325.0 / 3.6e6);
}

TEST(ReplayQueue, OlderPodStartsFirstUnderBothDisciplines) {
  // p1 and p2 (listed out of order) both wait for p0's GPU; at t=100 only one can start, and
  // it is the older one under both disciplines.
  trace::Workload w = one_node_cluster();
  w.pods = {make_pod("p0", 4000, 1, 1000, 0, 100), make_pod("p1", 4000, 1, 1000, 20, 10),
            make_pod("p2", 4000, 1, 1000, 10, 10)};
  finish(w);
  for (QueueDiscipline q : {QueueDiscipline::kFifo, QueueDiscipline::kBackfill}) {
    auto r = replay(w, config_with(q));
    ASSERT_TRUE(r.ok()) << r.error();
    // p2 (created 10) starts at 100, p1 (created 20) at 110.
    EXPECT_DOUBLE_EQ(r.value().mean_queue_delay_s, (0.0 + 90.0 + 90.0) / 3);
    EXPECT_DOUBLE_EQ(r.value().makespan_s, 120.0);
  }
}

TEST(ReplayQueue, PodThatNeverFitsStaysQueued) {
  trace::Workload w = one_node_cluster();
  w.pods = {make_pod("huge", 128000, 0, 0, 0, 10), make_pod("small", 1000, 0, 0, 5, 10)};
  finish(w);
  auto backfill = replay(w, config_with(QueueDiscipline::kBackfill));
  ASSERT_TRUE(backfill.ok()) << backfill.error();
  EXPECT_EQ(backfill.value().pods_started, 1);
  EXPECT_EQ(backfill.value().pods_never_started, 1);
  EXPECT_DOUBLE_EQ(backfill.value().mean_queue_delay_s, 0.0);
  EXPECT_DOUBLE_EQ(backfill.value().makespan_s, 15.0);
  EXPECT_EQ(backfill.value().timeline.back().queued_pods, 1);
  // Under strict FIFO the stuck head blocks everything behind it.
  auto fifo = replay(w, config_with(QueueDiscipline::kFifo));
  ASSERT_TRUE(fifo.ok()) << fifo.error();
  EXPECT_EQ(fifo.value().pods_started, 0);
  EXPECT_EQ(fifo.value().pods_never_started, 2);
  EXPECT_DOUBLE_EQ(fifo.value().mean_queue_delay_s, 0.0);
  EXPECT_DOUBLE_EQ(fifo.value().makespan_s, 5.0);
  EXPECT_DOUBLE_EQ(fifo.value().energy_kwh, 5 * 60.0 / 3.6e6);  // idle node for 5 s
}

TEST(ReplayTime, ScaleHalvesTimesDelaysAndEnergy) {
  auto r = replay(five_pods(), config_with(QueueDiscipline::kFifo, 2.0));
  ASSERT_TRUE(r.ok()) << r.error();
  const ReplayResult& res = r.value();
  EXPECT_DOUBLE_EQ(res.mean_queue_delay_s, 36.25);
  EXPECT_DOUBLE_EQ(res.p99_queue_delay_s, 60.0);
  EXPECT_DOUBLE_EQ(res.makespan_s, 110.0);
  EXPECT_DOUBLE_EQ(res.energy_kwh, 83850.0 / 2 / 3.6e6);
  ASSERT_EQ(res.timeline.size(), 10U);
  EXPECT_DOUBLE_EQ(res.timeline[6].time_s, 50.0);
  EXPECT_DOUBLE_EQ(res.timeline[6].energy_joules, 30750.0 / 2);
  EXPECT_DOUBLE_EQ(res.timeline[6].power_watts, 465.0);
}

TEST(ReplayTime, NonPositiveScaleIsAnError) {
  for (double scale : {0.0, -1.0}) {
    auto r = replay(five_pods(), config_with(QueueDiscipline::kFifo, scale));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("time scale"), std::string::npos) << r.error();
  }
}

TEST(ReplayTime, UnsortedInputGivesTheSameResult) {
  const trace::Workload sorted = five_pods();
  trace::Workload shuffled = sorted;
  shuffled.pods = {sorted.pods[3], sorted.pods[0], sorted.pods[4], sorted.pods[2], sorted.pods[1]};
  finish(shuffled);
  for (QueueDiscipline q : {QueueDiscipline::kFifo, QueueDiscipline::kBackfill}) {
    auto a = replay(sorted, config_with(q));
    auto b = replay(shuffled, config_with(q));
    ASSERT_TRUE(a.ok() && b.ok());
    std::ostringstream ta, tb;
    report::write_timeline_csv(ta, a.value());
    report::write_timeline_csv(tb, b.value());
    EXPECT_EQ(ta.str(), tb.str());
    EXPECT_EQ(a.value().pods_started, b.value().pods_started);
    EXPECT_DOUBLE_EQ(a.value().mean_queue_delay_s, b.value().mean_queue_delay_s);
    EXPECT_DOUBLE_EQ(a.value().energy_kwh, b.value().energy_kwh);
  }
}

TEST(ReplayTime, ZeroDurationPodFreesItsSlotAtOnce) {
  trace::Workload w = one_node_cluster();
  w.pods = {make_pod("blip", 4000, 1, 1000, 0, 0), make_pod("next", 4000, 1, 1000, 0, 10)};
  finish(w);
  auto r = replay(w, config_with(QueueDiscipline::kFifo));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().pods_started, 2);
  EXPECT_DOUBLE_EQ(r.value().mean_queue_delay_s, 0.0);
  // One point before and one after the instant at 0, one at 10.
  ASSERT_EQ(r.value().timeline.size(), 3U);
  EXPECT_EQ(r.value().timeline[1].running_pods, 1);
  EXPECT_DOUBLE_EQ(r.value().energy_kwh, 10 * 307.5 / 3.6e6);
}

TEST(ReplayErrors, PodsWithoutTimestampsCannotBeReplayed) {
  trace::Workload w = five_pods();
  w.pods[2].creation_time = -1;
  w.pods[2].deletion_time = -1;
  w.pods[3].creation_time = -1;
  w.pods[3].deletion_time = -1;
  auto r = replay(w, config_with(QueueDiscipline::kFifo));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("no creation/deletion times"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("p2"), std::string::npos) << r.error();
}

TEST(ReplayErrors, UnknownPolicyAndMismatchedPowerFigures) {
  const trace::Workload w = five_pods();
  ReplayConfig c;
  c.policy = "no-such-policy";
  EXPECT_FALSE(replay(w, c).ok());
  auto r = run_replay(w, frag::build_target_workload(w.pods), {}, kPue, ReplayConfig{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("power"), std::string::npos) << r.error();
}

TEST(ReplayNodeEvents, DownRequeuesAndUpRestartsWithFullDuration) {
  trace::Workload w = one_node_cluster();
  w.pods = {make_pod("p0", 4000, 1, 1000, 0, 100)};
  finish(w);
  ReplayConfig c;
  c.node_events = {NodeEvent{50, "node-a", true}, NodeEvent{30, "node-a", false}};
  auto r = replay(w, c);
  ASSERT_TRUE(r.ok()) << r.error();
  const ReplayResult& res = r.value();
  EXPECT_EQ(res.pods_requeued, 1);
  EXPECT_EQ(res.pods_started, 1);
  EXPECT_EQ(res.pods_never_started, 0);
  EXPECT_EQ(res.pods_queued_at_end, 0);
  EXPECT_DOUBLE_EQ(res.mean_queue_delay_s, 0.0);  // first start - creation
  EXPECT_DOUBLE_EQ(res.makespan_s, 150.0);        // restarted at 50 for the full 100 s
  expect_timeline(res, {
                           {0, 0, 0, 0, 60, 0},
                           {0, 1, 0, 1, 307.5, 0},
                           {30, 0, 1, 0, 0, 9225},  // the node is down and draws nothing
                           {50, 1, 0, 1, 307.5, 9225},
                           {150, 0, 0, 0, 60, 39975},
                       });
}

TEST(ReplayNodeEvents, EvictedPodMovesToAnotherNodeAtTheSameInstant) {
  trace::Workload w = one_node_cluster();
  NodeSpec b = w.nodes[0];
  b.name = "node-b";
  w.nodes.push_back(b);
  w.pods = {make_pod("p0", 4000, 1, 1000, 0, 100), make_pod("p1", 4000, 1, 1000, 30, 100)};
  finish(w);
  // Whichever node p0 lands on goes down at 30; p0 restarts on the other one before p1
  // arrives (node events come before arrivals), so p1 waits for p0's full 100 s.
  int64_t requeued = 0;
  for (const std::string node : {"node-a", "node-b"}) {
    ReplayConfig c;
    c.queue = QueueDiscipline::kBackfill;
    c.node_events = {NodeEvent{30, node, false}};
    auto r = replay(w, c);
    ASSERT_TRUE(r.ok()) << r.error();
    const ReplayResult& res = r.value();
    EXPECT_EQ(res.pods_started, 2);
    EXPECT_EQ(res.pods_never_started, 0);
    // Either p0 was evicted (restarts at 30, p1 waits until 130) or it was not (p1 waits on
    // a busy node until p0 leaves at 100).
    requeued += res.pods_requeued;
    if (res.pods_requeued == 1) {
      EXPECT_DOUBLE_EQ(res.makespan_s, 230.0);
      EXPECT_DOUBLE_EQ(res.mean_queue_delay_s, 50.0);
    } else {
      EXPECT_EQ(res.pods_requeued, 0);
      EXPECT_DOUBLE_EQ(res.makespan_s, 200.0);
      EXPECT_DOUBLE_EQ(res.mean_queue_delay_s, 35.0);
    }
  }
  EXPECT_EQ(requeued, 1);  // exactly one of the two nodes hosted p0
}

TEST(ReplayNodeEvents, NodeUpAtAnArrivalInstantIsUsedAtOnce) {
  trace::Workload w = one_node_cluster();
  w.pods = {make_pod("p0", 4000, 1, 1000, 0, 10), make_pod("p1", 4000, 1, 1000, 20, 10)};
  finish(w);
  ReplayConfig c;
  // Down at 0 comes before p0's arrival at 0; up at 20 comes before p1's arrival at 20.
  c.node_events = {NodeEvent{0, "node-a", false}, NodeEvent{20, "node-a", true}};
  auto r = replay(w, c);
  ASSERT_TRUE(r.ok()) << r.error();
  // p0 starts at 20 (delay 20) and p1 waits for it until 30 (delay 10).
  EXPECT_DOUBLE_EQ(r.value().mean_queue_delay_s, 15.0);
  EXPECT_DOUBLE_EQ(r.value().makespan_s, 40.0);
  EXPECT_EQ(r.value().pods_requeued, 0);
  ASSERT_FALSE(r.value().timeline.empty());
  EXPECT_DOUBLE_EQ(r.value().timeline[1].power_watts, 0.0);  // down at 0
  EXPECT_DOUBLE_EQ(r.value().energy_kwh, 20 * 307.5 / 3.6e6);
}

TEST(ReplayNodeEvents, UnknownNodeInConfigIsAnError) {
  ReplayConfig c;
  c.node_events = {NodeEvent{5, "node-zz", false}};
  auto r = replay(five_pods(), c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("node-zz"), std::string::npos) << r.error();
}

class NodeEventsFile : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    return scratch_.write(name, text);
  }
  Result<std::vector<NodeEvent>> read(const std::string& text) {
    return read_node_events(write("events.csv", text), one_node_cluster().nodes);
  }
  std::string path() const { return scratch_.file("events.csv"); }

  testing::ScratchDir scratch_;
};

TEST_F(NodeEventsFile, ParsesDownAndUpInAnyColumnOrder) {
  auto r = read("node,event,time\r\nnode-a,down,30\r\n\r\nnode-a,up,50\r\n");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.value().size(), 2U);
  EXPECT_EQ(r.value()[0].time, 30);
  EXPECT_EQ(r.value()[0].node, "node-a");
  EXPECT_FALSE(r.value()[0].up);
  EXPECT_EQ(r.value()[1].time, 50);
  EXPECT_TRUE(r.value()[1].up);
}

TEST_F(NodeEventsFile, ErrorsNameFileAndLine) {
  struct Case {
    std::string text;
    std::string expected;  // after "path:"
  };
  const std::vector<Case> cases = {
      {"time,node,event\nx,node-a,down\n", "2: time: 'x' is not an integer"},
      {"time,node,event\n1.5,node-a,down\n", "2: time: '1.5' is not an integer"},
      {"time,node,event\n10,node-a,down\n-5,node-a,up\n", "3: time: -5 is negative"},
      {"time,node,event\n10,node-q,down\n", "2: node: unknown node 'node-q'"},
      {"time,node,event\n10,node-a,reboot\n", "2: event: unknown event 'reboot'"},
      {"time,node,event\n10,node-a\n", "2: expected 3 fields as in the header, got 2"},
      {"time,node,event\n10,node-a,up,x\n", "2: expected 3 fields as in the header, got 4"},
      {"time,node\n10,node-a\n", "1: missing column 'event'"},
      {"when,node,event\n", "1: missing column 'time'"},
  };
  for (const Case& c : cases) {
    auto r = read(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().rfind(path() + ":" + c.expected, 0), 0U) << r.error();
  }
}

TEST_F(NodeEventsFile, MissingAndEmptyFiles) {
  auto missing = read_node_events(scratch_.file("nope.csv"), one_node_cluster().nodes);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("nope.csv"), std::string::npos);
  auto empty = read("");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().find("events.csv"), std::string::npos);
  auto header_only = read("time,node,event\n");
  ASSERT_TRUE(header_only.ok()) << header_only.error();
  EXPECT_TRUE(header_only.value().empty());
}

TEST(ReplayReport, TimelineAndSummaryCsv) {
  trace::Workload w = one_node_cluster();
  w.pods = {make_pod("p0", 4000, 1, 1000, 0, 100)};
  finish(w);
  ReplayConfig c;
  c.queue = QueueDiscipline::kBackfill;
  c.seed = 7;
  c.node_events = {NodeEvent{30, "node-a", false}, NodeEvent{50, "node-a", true}};
  auto r = replay(w, c);
  ASSERT_TRUE(r.ok()) << r.error();
  std::ostringstream timeline;
  report::write_timeline_csv(timeline, r.value());
  EXPECT_EQ(timeline.str(),
            "time_s,running_pods,queued_pods,allocated_gpus,power_watts,energy_joules,"
            "nodes_awake\n"
            "0.000,0,0,0.000,60.000,0.000,1\n"
            "0.000,1,0,1.000,307.500,0.000,1\n"
            "30.000,0,1,0.000,0.000,9225.000,0\n"
            "50.000,1,0,1.000,307.500,9225.000,1\n"
            "150.000,0,0,0.000,60.000,39975.000,1\n");
  // No wall time in the file: the same run gives the same bytes. p0 ran 130 of the 150 s: its
  // floor is 127.5 W x 130 s = 0.004604 kWh; 130 GPU-seconds are 0.036111 GPU-hours; its trace
  // lifetime (100 s) is 66.667 % of the GPU over the window. Re-queued while its node was down
  // (30 to 50 s), it waited 20 GPU-seconds: 0.0056 GPU-hours pending.
  ReplayResult row = r.value();
  row.wall_seconds = 0.25;
  std::ostringstream summary;
  report::write_replay_summary_csv(summary, std::span<const ReplayResult>(&row, 1));
  EXPECT_EQ(
      summary.str(),
      "policy,seed,queue,pods_total,pods_started,pods_never_started,pods_requeued,"
      "mean_queue_delay_s,p99_queue_delay_s,energy_kwh,makespan_s,gpu_power,"
      "power_down_idle_s,wake_delay_s,target_load_pct,offered_load_pct,window_s,"
      "energy_floor_kwh,energy_over_floor,kwh_per_gpu_hour,gpu_alloc_pct,"
      "mean_nodes_awake,wakeups,ls_pods,ls_mean_delay_s,ls_p99_delay_s,be_pods,"
      "be_mean_delay_s,be_p99_delay_s,window_start_s,migrate_budget_pct,pods_migrated,"
      "pods_rescued,lost_gpu_hours,lost_energy_kwh,pending_gpu_hours,consolidate,nodes_drained\n"
      "fgd,7,backfill,1,1,0,1,0.000,0.000,0.011104,150.000,pwr,-1,300,,66.667,150.000,"
      "0.004604,2.4118,0.3075,86.667,0.87,0,0,0.000,0.000,1,0.000,0.000,0.000,"
      "0,0,0,0.0000,0.0000,0.0056,0,0\n");
}

TEST(ReplayQueue, DisciplineNames) {
  EXPECT_EQ(queue_name(QueueDiscipline::kFifo), "fifo");
  EXPECT_EQ(queue_name(QueueDiscipline::kBackfill), "backfill");
  ASSERT_TRUE(parse_queue_discipline("backfill").ok());
  EXPECT_EQ(parse_queue_discipline("fifo").value(), QueueDiscipline::kFifo);
  EXPECT_FALSE(parse_queue_discipline("lifo").ok());
}

// Properties on a random workload over three nodes: counts add up, the timeline is ordered,
// and energy is the integral of the timeline's own power column.
TEST(ReplayProperties, RandomWorkloadInvariants) {
  trace::Workload w = one_node_cluster();
  for (int i = 1; i < 3; ++i) {
    NodeSpec n = w.nodes[0];
    n.name = fmt::format("node-{}", i);
    n.gpu_count = 2 + i;
    w.nodes.push_back(n);
  }
  Rng rng(3);
  for (int i = 0; i < 200; ++i) {
    const int kind = static_cast<int>(rng.uniform(4));
    const int64_t created = static_cast<int64_t>(rng.uniform(500));
    const int64_t duration = static_cast<int64_t>(rng.uniform(100));
    const int64_t cpu = 1000 * static_cast<int64_t>(1 + rng.uniform(16));
    PodSpec p = kind == 0   ? make_pod("", cpu, 0, 0, created, duration)
                : kind == 1 ? make_pod("", cpu, 1, 250 * static_cast<int32_t>(1 + rng.uniform(3)),
                                       created, duration)
                            : make_pod("", cpu, kind - 1, 1000, created, duration);
    p.name = fmt::format("pod-{}", i);
    w.pods.push_back(p);
  }
  w.pods.push_back(make_pod("never", 1000, 8, 1000, 10, 10));
  finish(w);
  for (QueueDiscipline q : {QueueDiscipline::kFifo, QueueDiscipline::kBackfill}) {
    ReplayConfig c = config_with(q);
    c.node_events = {NodeEvent{100, "node-1", false}, NodeEvent{250, "node-1", true},
                     NodeEvent{300, "node-2", false}};
    auto r = replay(w, c);
    ASSERT_TRUE(r.ok()) << r.error();
    const ReplayResult& res = r.value();
    EXPECT_EQ(res.pods_started + res.pods_never_started, res.pods_total);
    EXPECT_GE(res.pods_never_started, 1);
    EXPECT_GE(res.pods_queued_at_end, res.pods_never_started);
    EXPECT_LE(res.mean_queue_delay_s, res.p99_queue_delay_s);
    ASSERT_GE(res.timeline.size(), 2U);
    double energy = 0;
    for (std::size_t i = 1; i < res.timeline.size(); ++i) {
      const TimelinePoint& a = res.timeline[i - 1];
      const TimelinePoint& b = res.timeline[i];
      EXPECT_LE(a.time_s, b.time_s);
      energy += a.power_watts * (b.time_s - a.time_s);
      EXPECT_NEAR(b.energy_joules, energy, 1e-6 * std::max(1.0, energy));
      EXPECT_LE(b.allocated_gpus, 8.0);
    }
    EXPECT_NEAR(res.energy_kwh * 3.6e6, energy, 1e-6 * energy);
    EXPECT_DOUBLE_EQ(res.makespan_s, res.timeline.back().time_s);
  }
}

// The real default trace: 8152 pods over 149 days on the 1213 GPU nodes.
TEST(ReplayOpenb, DefaultTraceWithFgd) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = trace::load_openb_workload(testing::openb_path("openb_node_list_gpu_node.csv"),
                                      testing::openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  const trace::Workload& workload = w.value();
  const frag::TargetWorkload target = frag::build_target_workload(workload.pods);
  const power::PowerModel model = power::PowerModel::builtin();
  auto figures = model.resolve(workload.nodes, workload.models);
  ASSERT_TRUE(figures.ok()) << figures.error();
  // Expected figures. At its own rate the trace never fills the cluster (at most 66 of the
  // 6212 GPUs are allocated), so no pod waits under either discipline: every delay is 0 and
  // the makespan is the trace's span, both derived here from the pods. The energy is pinned
  // from `greensched simulate --mode replay --nodes openb_node_list_gpu_node.csv --pods
  // openb_pod_list_default.csv --policy fgd --queue fifo|backfill` (summary.csv, the
  // README's 840,219 kWh); with no queueing the discipline cannot change it. It lies between
  // the idle cluster's energy over the span and that plus, for every pod's run time, the
  // largest step from idle to full power of any node, both computed here from the figures.
  int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
  double pod_seconds = 0;
  for (const PodSpec& p : workload.pods) {
    first = std::min(first, p.creation_time);
    last = std::max(last, p.deletion_time);
    pod_seconds += static_cast<double>(p.deletion_time - p.creation_time);
  }
  const double span = static_cast<double>(last - first);
  double idle_watts = 0, max_step_watts = 0;
  for (std::size_t n = 0; n < workload.nodes.size(); ++n) {
    const NodeSpec& spec = workload.nodes[n];
    const power::NodePower& fig = figures.value()[n];
    std::array<int32_t, kMaxGpusPerNode> free{}, full{};
    free.fill(kGpuMilli);
    const double idle = power::node_power_watts(spec, fig, spec.cpu_milli, free.data());
    idle_watts += idle;
    max_step_watts =
        std::max(max_step_watts, power::node_power_watts(spec, fig, 0, full.data()) - idle);
  }
  const double idle_kwh = idle_watts * model.pue() * span / 3.6e6;
  const double busy_kwh = max_step_watts * model.pue() * pod_seconds / 3.6e6;
  for (QueueDiscipline q : {QueueDiscipline::kFifo, QueueDiscipline::kBackfill}) {
    ReplayConfig c;
    c.policy = "fgd";
    c.queue = q;
    auto r = run_replay(workload, target, figures.value(), model.pue(), c);
    ASSERT_TRUE(r.ok()) << r.error();
    const ReplayResult& res = r.value();
    EXPECT_EQ(res.pods_total, 8152);
    EXPECT_EQ(res.pods_started + res.pods_never_started, 8152);
    EXPECT_EQ(res.pods_started, 8152);
    EXPECT_EQ(res.pods_never_started, 0);
    EXPECT_EQ(res.mean_queue_delay_s, 0.0);
    EXPECT_EQ(res.p99_queue_delay_s, 0.0);
    EXPECT_EQ(res.delay_ls.p99_s, 0.0);
    EXPECT_EQ(res.delay_be.p99_s, 0.0);
    EXPECT_EQ(res.makespan_s, span);
    EXPECT_EQ(res.makespan_s, 12902960.0);
    EXPECT_NEAR(res.energy_kwh, 840218.858822, 1e-6);
    EXPECT_GT(res.energy_kwh, idle_kwh);
    EXPECT_LT(res.energy_kwh, idle_kwh + busy_kwh);
    for (std::size_t i = 1; i < res.timeline.size(); ++i) {
      ASSERT_LE(res.timeline[i - 1].time_s, res.timeline[i].time_s) << i;
      ASSERT_LE(res.timeline[i - 1].energy_joules, res.timeline[i].energy_joules) << i;
    }
    const std::string name(queue_name(q));
    std::cout << fmt::format(
        "[ replay ] fgd {}: {:.3f} s wall, {:.1f} kWh, started {}, never {}, mean delay "
        "{:.1f} s, p99 {:.1f} s, makespan {:.0f} s, {} timeline points\n",
        name, res.wall_seconds, res.energy_kwh, res.pods_started, res.pods_never_started,
        res.mean_queue_delay_s, res.p99_queue_delay_s, res.makespan_s, res.timeline.size());
    ::testing::Test::RecordProperty(name + "_wall_seconds",
                                    fmt::format("{:.3f}", res.wall_seconds));
    ::testing::Test::RecordProperty(name + "_energy_kwh", fmt::format("{:.3f}", res.energy_kwh));
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
    EXPECT_LT(res.wall_seconds, 10.0);  // optimised builds only; about 0.1 s on two cores
#endif
  }
}

}  // namespace
}  // namespace greensched::sim

namespace greensched::sim {
namespace {

// Two nodes of two T4s under best fit. At t=0 four 0.6 shares take a GPU each (node a, then
// node b, by best fit) and four 0.3 shares join them (each on the tightest GPU: a0, a1, b0,
// b1). At t=100 the 0.6 shares on a0 and b0 leave: a0 and b0 keep a 0.3 each. At t=200 a
// whole-GPU pod fits nowhere. With moves, one 0.3 share moves next to the other and frees a
// GPU: one move. The moved pod started at 0; checkpoints every 150 s, so at 200 it loses 50 s
// and leaves at 1050 instead of 1000.
trace::Workload fragmented_pair() {
  trace::Workload w;
  for (const char* name : {"a", "b"}) {
    NodeSpec n;
    n.name = name;
    n.cpu_milli = 64000;
    n.memory_mib = 65536;
    n.gpu_count = 2;
    n.model = *w.models.intern("T4");
    w.nodes.push_back(n);
  }
  w.pods_source = "hand-made";
  for (int i = 0; i < 4; ++i) {
    w.pods.push_back(make_pod(fmt::format("big{}", i), 1000, 1, 600, 0, i % 2 == 0 ? 100 : 1000));
  }
  for (int i = 0; i < 4; ++i)
    w.pods.push_back(make_pod(fmt::format("small{}", i), 1000, 1, 300, 0, 1000));
  w.pods.push_back(make_pod("whole", 1000, 1, 1000, 200, 500));
  finish(w);
  return w;
}

TEST(ReplayMoves, AMoveStartsAWholeGpuPodAndCostsItsLostRunTime) {
  const trace::Workload w = fragmented_pair();
  ReplayConfig c;
  c.policy = "bestfit";
  auto plain = replay(w, c);
  ASSERT_TRUE(plain.ok()) << plain.error();
  // Without moves the whole-GPU pod waits until a 0.3 share leaves at 1000.
  EXPECT_DOUBLE_EQ(plain.value().p99_queue_delay_s, 800.0);
  EXPECT_EQ(plain.value().pods_migrated, 0);
  EXPECT_DOUBLE_EQ(plain.value().lost_gpu_hours, 0.0);

  c.migrate_budget_pct = 50;  // 8 pods started by t=200: 4 moves allowed
  c.checkpoint_interval_s = 150;
  auto moved = replay(w, c);
  ASSERT_TRUE(moved.ok()) << moved.error();
  const ReplayResult& r = moved.value();
  EXPECT_EQ(r.pods_migrated, 1);
  EXPECT_EQ(r.pods_rescued, 1);
  EXPECT_DOUBLE_EQ(r.p99_queue_delay_s, 0.0);  // started on arrival
  // 50 s lost on 0.3 of a GPU.
  EXPECT_NEAR(r.lost_gpu_hours, 50 * 0.3 / 3600.0, 1e-12);
  EXPECT_NEAR(r.lost_energy_kwh, r.lost_gpu_hours * r.kwh_per_gpu_hour, 1e-12);
  // The moved share runs 50 s longer: the last departure is at 1050, not 1000.
  EXPECT_DOUBLE_EQ(r.makespan_s, 1050.0);
  EXPECT_DOUBLE_EQ(plain.value().makespan_s, 1500.0);  // the whole-GPU pod from 1000 to 1500
  // The whole-GPU pod waited 800 s without moves: 800 s x 1 GPU pending; with moves none.
  EXPECT_NEAR(plain.value().pending_gpu_hours, 800.0 / 3600.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.pending_gpu_hours, 0.0);

  // No checkpoint: all 200 s of its run are lost.
  c.checkpoint_interval_s = 0;
  auto no_ckpt = replay(w, c);
  ASSERT_TRUE(no_ckpt.ok());
  EXPECT_NEAR(no_ckpt.value().lost_gpu_hours, 200 * 0.3 / 3600.0, 1e-12);
  EXPECT_DOUBLE_EQ(no_ckpt.value().makespan_s, 1200.0);
}

// Consolidation: two nodes of two T4s; at t=0 four whole-GPU pods fill them (a0, a1, b0, b1 by
// best fit). w1 and w2 leave at short_s, so each node keeps one pod until long_s.
trace::Workload two_long_pods(int64_t short_s, int64_t long_s) {
  trace::Workload w;
  for (const char* name : {"a", "b"}) {
    NodeSpec n;
    n.name = name;
    n.cpu_milli = 64000;
    n.memory_mib = 65536;
    n.gpu_count = 2;
    n.model = *w.models.intern("T4");
    w.nodes.push_back(n);
  }
  w.pods_source = "hand-made";
  w.pods = {make_pod("w0", 1000, 1, 1000, 0, long_s), make_pod("w1", 1000, 1, 1000, 0, short_s),
            make_pod("w2", 1000, 1, 1000, 0, short_s), make_pod("w3", 1000, 1, 1000, 0, long_s)};
  finish(w);
  return w;
}

// With nodes sleeping after 600 idle seconds, at 100 one node's pod moves onto the other and
// the emptied node sleeps at once, instead of at 10600; the moved pod loses its 100 s of run
// (checkpoints every 1800 s) and leaves at 10100 (the run ends when its node sleeps, 600 s
// later).
TEST(ReplayMoves, ConsolidationEmptiesANodeSoItSleeps) {
  const trace::Workload w = two_long_pods(100, 10000);
  ReplayConfig c;
  c.policy = "bestfit";
  c.power_down_idle_s = 600;
  c.wake_delay_s = 300;
  c.migrate_budget_pct = 50;  // 4 started: 2 moves, of which consolidation may spend 1
  c.checkpoint_interval_s = 1800;
  auto plain = replay(w, c);
  ASSERT_TRUE(plain.ok()) << plain.error();
  EXPECT_EQ(plain.value().nodes_drained, 0);
  EXPECT_EQ(plain.value().pods_migrated, 0);
  EXPECT_DOUBLE_EQ(plain.value().makespan_s, 10600.0);

  c.consolidate = true;
  auto drained = replay(w, c);
  ASSERT_TRUE(drained.ok()) << drained.error();
  const ReplayResult& r = drained.value();
  EXPECT_EQ(r.nodes_drained, 1);
  EXPECT_EQ(r.pods_migrated, 1);
  EXPECT_EQ(r.pods_rescued, 0);
  EXPECT_NEAR(r.lost_gpu_hours, 100.0 / 3600.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.makespan_s, 10700.0);
  // One node idle from 100 to 10600 without; asleep from 100 with: the 100 s the moved pod runs
  // again on one GPU cost far less.
  EXPECT_LT(r.energy_kwh, plain.value().energy_kwh);
  EXPECT_LT(r.mean_nodes_awake, plain.value().mean_nodes_awake);

  // Without budget for it (a move a pass at most half the budget: 4 x 20 % / 2 < 1), none.
  c.migrate_budget_pct = 20;
  auto small = replay(w, c);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small.value().nodes_drained, 0);
}

// The run time a move loses decides: at 5000 each node's pod has 300 s left. Without
// checkpoints a move would lose all 5000 s of its run, more than the energy the sleep spares;
// with 30-minute checkpoints it loses 1400 s (5000 mod 1800), and the drain pays.
TEST(ReplayMoves, ConsolidationWeighsTheRunTimeAMoveLoses) {
  const trace::Workload w = two_long_pods(5000, 5300);
  ReplayConfig c;
  c.policy = "bestfit";
  c.power_down_idle_s = 600;
  c.wake_delay_s = 300;
  c.migrate_budget_pct = 50;
  c.consolidate = true;
  c.checkpoint_interval_s = 0;
  auto none = replay(w, c);
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_EQ(none.value().nodes_drained, 0);
  EXPECT_EQ(none.value().pods_migrated, 0);
  c.checkpoint_interval_s = 1800;
  auto some = replay(w, c);
  ASSERT_TRUE(some.ok()) << some.error();
  EXPECT_EQ(some.value().nodes_drained, 1);
  EXPECT_NEAR(some.value().lost_gpu_hours, 1400.0 / 3600.0, 1e-12);
}

}  // namespace
}  // namespace greensched::sim
