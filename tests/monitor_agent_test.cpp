// Acceptance (a): the node agent runs on this machine (no GPU needed). It is started
// in-process on a free port, /metrics is read twice over HTTP, and the CPU and memory figures
// are checked against /proc read by the test itself.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <httplib.h>

#include "greensched/monitor/agent.hpp"
#include "greensched/monitor/proc_stats.hpp"
#include "greensched/monitor/sample_json.hpp"
#include "prometheus_text.hpp"
#include "scratch_dir.hpp"

namespace greensched::monitor {
namespace {

using testing::parse_metrics;

CpuStat proc_stat() {
  auto text = read_text_file("/proc/stat");
  EXPECT_TRUE(text.ok());
  auto stat = parse_proc_stat(text.value(), "/proc/stat");
  EXPECT_TRUE(stat.ok());
  return stat.value();
}

MemInfo proc_meminfo() {
  auto text = read_text_file("/proc/meminfo");
  EXPECT_TRUE(text.ok());
  auto m = parse_meminfo(text.value(), "/proc/meminfo");
  EXPECT_TRUE(m.ok());
  return m.value();
}

std::string busy_key(int cpu) {
  return "greensched_node_cpu_seconds_total{cpu=\"" + std::to_string(cpu) + "\",mode=\"busy\"}";
}
std::string idle_key(int cpu) {
  return "greensched_node_cpu_seconds_total{cpu=\"" + std::to_string(cpu) + "\",mode=\"idle\"}";
}

TEST(MonitorAgent, ServesMetricsThatMatchProc) {
  if (!std::filesystem::exists("/proc/stat")) GTEST_SKIP() << "no /proc on this machine";
  MonitorOptions opts;
  opts.interval_s = 0.2;
  opts.listen = "127.0.0.1:0";
  opts.sampler.nvml = false;
  std::vector<std::string> notes;
  MonitorAgent agent(opts, [&](const std::string& n) { notes.push_back(n); });
  ASSERT_TRUE(agent.start().ok());
  ASSERT_GT(agent.port(), 0);
  for (int i = 0; i < 200 && agent.samples() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(agent.samples(), 2U);

  httplib::Client client("127.0.0.1", agent.port());
  client.set_read_timeout(10, 0);
  auto first = client.Get("/metrics");
  const CpuStat p1 = proc_stat();
  const MemInfo m1 = proc_meminfo();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200);
  EXPECT_NE(first->get_header_value("Content-Type").find("text/plain"), std::string::npos);
  EXPECT_NE(first->body.find("# TYPE greensched_node_cpu_utilization_ratio gauge"),
            std::string::npos);
  const auto a = parse_metrics(first->body);

  const double hz = clock_ticks_per_second();
  // Every CPU of /proc/stat has a utilisation in [0, 1] and counters that lag /proc by at most
  // the interval plus the scrape (3 s is generous for a loaded test machine).
  for (const CpuTimes& c : p1.cores) {
    const std::string util =
        "greensched_node_cpu_utilization_ratio{cpu=\"" + std::to_string(c.cpu) + "\"}";
    ASSERT_TRUE(a.count(util)) << util;
    EXPECT_GE(a.at(util), 0.0);
    EXPECT_LE(a.at(util), 1.0);
    const double busy = a.at(busy_key(c.cpu));
    const double total = busy + a.at(idle_key(c.cpu));
    const double proc_busy = static_cast<double>(c.busy) / hz;
    const double proc_total = static_cast<double>(c.total()) / hz;
    EXPECT_LE(busy, proc_busy + 1e-9);
    EXPECT_LE(total, proc_total + 1e-9);
    EXPECT_LT(proc_total - total, 3.0) << "cpu " << c.cpu;
    EXPECT_LT(proc_busy - busy, 3.0) << "cpu " << c.cpu;
  }
  std::size_t series = 0;
  for (const auto& [k, v] : a) series += k.rfind("greensched_node_cpu_utilization_ratio{", 0) == 0;
  EXPECT_EQ(series, p1.cores.size());
  const double avg = a.at("greensched_node_cpu_utilization_average_ratio");
  EXPECT_GE(avg, 0.0);
  EXPECT_LE(avg, 1.0);
  // Memory: the total exactly, the used figure within 5 % of memory (it moves by itself).
  EXPECT_EQ(a.at("greensched_node_memory_total_bytes"), static_cast<double>(m1.total_bytes));
  EXPECT_NEAR(a.at("greensched_node_memory_used_bytes"), static_cast<double>(m1.used_bytes()),
              0.05 * static_cast<double>(m1.total_bytes));
  EXPECT_EQ(a.at("greensched_monitor_source_up{source=\"proc_stat\"}"), 1.0);
  EXPECT_EQ(a.at("greensched_monitor_source_up{source=\"meminfo\"}"), 1.0);
  EXPECT_EQ(a.at("greensched_monitor_source_up{source=\"nvml\"}"), 0.0);

  // Second read, 2 s later: more readings, counters moved forward, and the utilisation
  // over the window from the agent's counters matches the one from /proc.
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  auto second = client.Get("/metrics");
  const CpuStat p2 = proc_stat();
  ASSERT_TRUE(second);
  ASSERT_EQ(second->status, 200);
  const auto b = parse_metrics(second->body);
  EXPECT_GE(b.at("greensched_monitor_samples_total"), a.at("greensched_monitor_samples_total") + 3);
  EXPECT_GT(b.at("greensched_monitor_last_sample_timestamp_seconds"),
            a.at("greensched_monitor_last_sample_timestamp_seconds"));
  double agent_busy = 0, agent_total = 0;
  for (const CpuTimes& c : p2.cores) {
    const double db = b.at(busy_key(c.cpu)) - a.at(busy_key(c.cpu));
    const double di = b.at(idle_key(c.cpu)) - a.at(idle_key(c.cpu));
    EXPECT_GE(db, 0.0);
    EXPECT_GE(di, 0.0);
    agent_busy += db;
    agent_total += db + di;
  }
  const double proc_util = utilization(p1.all, p2.all);
  ASSERT_GT(agent_total, 0.5);
  EXPECT_NEAR(agent_busy / agent_total, proc_util, 0.25);
  EXPECT_GT(b.at("greensched_monitor_cpu_seconds_total"), 0.0);

  // /sample gives the latest reading as JSON.
  auto sample = client.Get("/sample");
  ASSERT_TRUE(sample);
  auto parsed = sample_from_json(nlohmann::json::parse(sample->body), "/sample");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_TRUE(parsed.value().has_cpu);
  agent.stop();
  EXPECT_TRUE(agent.finished());
}

TEST(MonitorAgent, CountAndJsonLinesFile) {
  const testing::ScratchDir scratch;
  const std::string path = scratch.file("samples.jsonl");
  MonitorOptions opts;
  opts.interval_s = 0.05;
  opts.jsonl = path;
  opts.count = 3;
  opts.sampler.nvml = false;
  MonitorAgent agent(opts, nullptr);
  ASSERT_TRUE(agent.start().ok());
  EXPECT_EQ(agent.port(), -1);
  ASSERT_TRUE(agent.wait_for(20.0));
  EXPECT_EQ(agent.samples(), 3U);
  agent.stop();
  std::ifstream in(path);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto samples = read_samples_jsonl(all, path);
  ASSERT_TRUE(samples.ok()) << samples.error();
  ASSERT_EQ(samples.value().size(), 3U);
  EXPECT_EQ(samples.value()[2].seq, 3U);
  EXPECT_GT(samples.value()[2].time_s, samples.value()[0].time_s);
}

TEST(MonitorAgent, BadListenAddressOrFileIsAnError) {
  MonitorOptions opts;
  opts.sampler.nvml = false;
  opts.listen = "nonsense";
  MonitorAgent bad_listen(opts, nullptr);
  EXPECT_FALSE(bad_listen.start().ok());
  opts.listen.clear();
  opts.jsonl = "/nonexistent-dir/x.jsonl";
  MonitorAgent bad_file(opts, nullptr);
  const Status s = bad_file.start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/x.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace greensched::monitor
