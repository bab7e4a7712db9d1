// The monitor's readers and formats on known inputs: /proc/stat, /proc/meminfo, /proc/cpuinfo,
// RAPL counters with wrap-around, a sampler over a fake /proc and /sys, the Prometheus text
// and the JSON line of a sample.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "greensched/monitor/agent.hpp"
#include "greensched/monitor/proc_stats.hpp"
#include "greensched/monitor/prometheus.hpp"
#include "greensched/monitor/rapl.hpp"
#include "greensched/monitor/sample_json.hpp"
#include "greensched/monitor/sampler.hpp"
#include "scratch_dir.hpp"

namespace greensched::monitor {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

const char* kStat1 =
    "cpu  100 0 50 800 50 0 0 0 0 0\n"
    "cpu0 60 0 30 390 20 0 0 0 0 0\n"
    "cpu1 40 0 20 410 30 0 0 0 0 0\n"
    "intr 1 2 3\nctxt 5\n";
// cpu0: busy 90 -> 135, total 500 -> 555; cpu1: busy 60 -> 70, total 500 -> 600.
const char* kStat2 =
    "cpu  155 5 45 895 55 0 0 0 0 0\n"
    "cpu0 110 5 20 400 20 0 0 0 0 0\n"
    "cpu1 45 0 25 495 35 0 0 0 0 0\n"
    "intr 1 2 3\nctxt 5\n";

TEST(ProcStat, ParsesBusyAndIdleTicks) {
  auto s = parse_proc_stat(kStat1, "stat");
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_EQ(s.value().cores.size(), 2U);
  EXPECT_EQ(s.value().all.busy, 150U);
  EXPECT_EQ(s.value().all.idle, 850U);
  EXPECT_EQ(s.value().cores[1].cpu, 1);
  EXPECT_EQ(s.value().cores[0].busy, 90U);
  EXPECT_EQ(s.value().cores[0].idle, 410U);
  // steal counts as busy, guest is already inside user.
  auto g = parse_proc_stat("cpu 10 0 0 80 0 0 0 10 7 0\n", "g");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g.value().all.busy, 20U);
  EXPECT_EQ(g.value().all.idle, 80U);
}

TEST(ProcStat, UtilizationOverAnInterval) {
  auto a = parse_proc_stat(kStat1, "a").value();
  auto b = parse_proc_stat(kStat2, "b").value();
  EXPECT_NEAR(utilization(a.cores[0], b.cores[0]), 45.0 / 55.0, 1e-12);
  EXPECT_NEAR(utilization(a.cores[1], b.cores[1]), 10.0 / 100.0, 1e-12);
  EXPECT_DOUBLE_EQ(utilization(a.cores[0], a.cores[0]), 0.0);
}

TEST(ProcStat, RejectsGarbage) {
  EXPECT_FALSE(parse_proc_stat("cpu0 1 2 3 4\n", "x").ok());  // no aggregate line
  auto bad = parse_proc_stat("cpu 1 2 x 4\n", "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("x:1:"), std::string::npos) << bad.error();
}

TEST(MemInfo, UsedIsTotalMinusAvailable) {
  auto m =
      parse_meminfo("MemTotal:       1000 kB\nMemFree: 100 kB\nMemAvailable:    250 kB\n", "m");
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m.value().total_bytes, 1024000U);
  EXPECT_EQ(m.value().used_bytes(), 750U * 1024U);
  EXPECT_FALSE(parse_meminfo("MemTotal: 1000 kB\n", "m").ok());
}

TEST(CpuInfo, ModelAndCoresPerSocket) {
  const CpuInfo c = parse_cpuinfo(
      "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz\n"
      "cpu cores\t: 26\n\nprocessor\t: 1\nmodel name\t: other\n");
  EXPECT_EQ(c.model, "Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz");
  EXPECT_EQ(c.cores_per_socket, 26);
}

TEST(Rapl, DeltaHandlesWrapAround) {
  EXPECT_EQ(rapl_delta_uj(100, 250, 1000), 150U);
  EXPECT_EQ(rapl_delta_uj(900, 50, 1000), 150U);  // wrapped at 1000
  EXPECT_EQ(rapl_delta_uj(900, 50, 0), 0U);       // no range known: a reset
}

TEST(Rapl, ReadsPackagesOnlyAndAccumulatesAcrossWraps) {
  const testing::ScratchDir scratch;
  const fs::path& sys = scratch.dir();
  const fs::path pc = sys / "class" / "powercap";
  write(pc / "intel-rapl:0" / "name", "package-0\n");
  write(pc / "intel-rapl:0" / "energy_uj", "999000000\n");
  write(pc / "intel-rapl:0" / "max_energy_range_uj", "1000000000\n");
  write(pc / "intel-rapl:0:0" / "name", "core\n");  // a sub-zone: not a package
  write(pc / "intel-rapl:0:0" / "energy_uj", "5\n");
  write(pc / "intel-rapl:1" / "name", "psys\n");  // platform: not a package
  write(pc / "intel-rapl:1" / "energy_uj", "5\n");
  auto r = RaplReader::open(sys.string());
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.value().zones().size(), 1U);
  EXPECT_EQ(r.value().zones()[0].package, 0);
  write(pc / "intel-rapl:0" / "energy_uj", "2000000\n");  // wrapped: +1 J + 2 J
  std::vector<std::string> errors;
  r.value().read(errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_NEAR(r.value().zones()[0].total_joules, 3.0, 1e-9);
  write(pc / "intel-rapl:0" / "energy_uj", "7000000\n");
  r.value().read(errors);
  EXPECT_NEAR(r.value().zones()[0].total_joules, 8.0, 1e-9);
}

TEST(Rapl, AbsentOrUnreadableIsAnErrorValue) {
  const testing::ScratchDir scratch;
  const fs::path& sys = scratch.dir();
  auto none = RaplReader::open(sys.string());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("no powercap"), std::string::npos) << none.error();
  write(sys / "class" / "powercap" / "intel-rapl:0" / "name", "package-0\n");
  auto unreadable = RaplReader::open(sys.string());  // no energy_uj file
  ASSERT_FALSE(unreadable.ok());
  EXPECT_NE(unreadable.error().find("energy_uj"), std::string::npos) << unreadable.error();
}

TEST(Sampler, FakeProcAndSysGiveExactFigures) {
  const testing::ScratchDir scratch;
  const fs::path& root = scratch.dir();
  const fs::path proc = root / "proc";
  const fs::path sys = root / "sys";
  write(proc / "stat", kStat1);
  write(proc / "meminfo", "MemTotal: 2048 kB\nMemAvailable: 512 kB\n");
  write(proc / "cpuinfo", "model name\t: Test CPU\ncpu cores\t: 1\n");
  write(sys / "devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
  write(sys / "devices/system/cpu/cpu1/topology/physical_package_id", "1\n");
  const fs::path pc = sys / "class" / "powercap";
  for (int p : {0, 1}) {
    const fs::path z = pc / ("intel-rapl:" + std::to_string(p));
    write(z / "name", "package-" + std::to_string(p) + "\n");
    write(z / "energy_uj", "1000000\n");
    write(z / "max_energy_range_uj", "262143328850\n");
  }
  std::vector<std::string> notes;
  SamplerOptions opts;
  opts.proc_root = proc.string();
  opts.sys_root = sys.string();
  opts.nvml_library = (root / "no-such-libnvidia-ml.so").string();
  Sampler sampler(opts, [&](const std::string& n) { notes.push_back(n); });
  ASSERT_EQ(notes.size(), 1U);  // NVML absent: noted once, not fatal
  EXPECT_NE(notes[0].find("NVML"), std::string::npos);

  write(proc / "stat", kStat2);
  write(pc / "intel-rapl:0" / "energy_uj", "6000000\n");  // +5 J
  write(pc / "intel-rapl:1" / "energy_uj", "3000000\n");  // +2 J
  const NodeSample s = sampler.sample();
  ASSERT_TRUE(s.has_cpu);
  ASSERT_EQ(s.cores.size(), 2U);
  EXPECT_NEAR(s.cores[0].utilization, 45.0 / 55.0, 1e-12);
  EXPECT_NEAR(s.cores[1].utilization, 0.1, 1e-12);
  EXPECT_EQ(s.cores[1].package, 1);
  EXPECT_NEAR(s.cpu_utilization, 55.0 / 155.0, 1e-12);  // busy 150 -> 205, total 1000 -> 1155
  EXPECT_EQ(s.cpu_model, "Test CPU");
  ASSERT_TRUE(s.has_memory);
  EXPECT_EQ(s.memory_total_bytes, 2048U * 1024U);
  EXPECT_EQ(s.memory_used_bytes, 1536U * 1024U);
  ASSERT_EQ(s.packages.size(), 2U);
  EXPECT_NEAR(s.packages[0].energy_joules, 5.0, 1e-9);
  EXPECT_NEAR(s.packages[1].energy_joules, 2.0, 1e-9);
  EXPECT_NEAR(s.packages[0].utilization, 45.0 / 55.0, 1e-12);
  EXPECT_GT(s.packages[0].power_watts, 0.0);
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(sampler.sources().proc_stat && sampler.sources().meminfo && sampler.sources().rapl);
  EXPECT_FALSE(sampler.sources().nvml);

  // Sources vanish: skipped with one note each, never fatal; repeats are not noted again.
  fs::remove(proc / "meminfo");
  fs::remove(proc / "stat");
  const NodeSample gone = sampler.sample();
  EXPECT_FALSE(gone.has_cpu);
  EXPECT_FALSE(gone.has_memory);
  const std::size_t after = notes.size();
  EXPECT_EQ(after, 3U);
  sampler.sample();
  EXPECT_EQ(notes.size(), after);
}

TEST(Prometheus, TextFormatAndEscaping) {
  NodeSample s;
  s.time_s = 1700000000.5;
  s.has_cpu = true;
  s.cpu_utilization = 0.25;
  s.cores.push_back(CoreUsage{3, 0, 0.5, 10, 30});
  s.has_memory = true;
  s.memory_total_bytes = 1000;
  s.memory_used_bytes = 400;
  s.packages.push_back(PackageEnergy{0, "intel-rapl:0", 12.5, 30, 0.5, true});
  GpuReading g;
  g.index = 0;
  g.name = "odd \"name\"\\";
  g.power_watts = 100;
  s.gpus.push_back(g);
  AgentStats stats;
  stats.samples = 7;
  const std::string t = prometheus_text(&s, stats);
  EXPECT_NE(t.find("# TYPE greensched_node_cpu_utilization_ratio gauge\n"), std::string::npos);
  EXPECT_NE(t.find("greensched_node_cpu_utilization_ratio{cpu=\"3\"} 0.5\n"), std::string::npos);
  EXPECT_NE(t.find("greensched_node_cpu_seconds_total{cpu=\"3\",mode=\"idle\"} 30\n"),
            std::string::npos);
  EXPECT_NE(t.find("greensched_node_memory_used_bytes 400\n"), std::string::npos);
  EXPECT_NE(t.find("greensched_node_cpu_package_energy_joules_total{package=\"0\",zone=\"intel-"
                   "rapl:0\"} 12.5\n"),
            std::string::npos);
  EXPECT_NE(t.find("greensched_gpu_power_watts{gpu=\"0\",name=\"odd \\\"name\\\"\\\\\"} 100\n"),
            std::string::npos)
      << t;
  // A figure the GPU lacks is absent, not zero.
  EXPECT_EQ(t.find("greensched_gpu_energy_joules_total"), std::string::npos);
  EXPECT_NE(t.find("greensched_monitor_samples_total 7\n"), std::string::npos);
  // No reading yet: only the agent's own metrics.
  const std::string empty = prometheus_text(nullptr, stats);
  EXPECT_EQ(empty.find("greensched_node_"), std::string::npos);
  EXPECT_NE(empty.find("greensched_monitor_source_up{source=\"nvml\"} 0"), std::string::npos);
}

TEST(SampleJson, RoundTrip) {
  NodeSample s;
  s.seq = 4;
  s.time_s = 12.5;
  s.interval_s = 1;
  s.host = "h";
  s.cpu_model = "c";
  s.cores_per_socket = 8;
  s.has_cpu = true;
  s.cpu_utilization = 0.3;
  s.cores.push_back(CoreUsage{0, 1, 0.3, 5, 9});
  s.packages.push_back(PackageEnergy{1, "intel-rapl:1", 40, 20, 0.3, true});
  GpuReading g;
  g.index = 2;
  g.name = "Tesla T4";
  g.power_watts = 33;
  g.utilization = 0.5;
  g.memory_used_bytes = 1ULL << 40;
  s.gpus.push_back(g);
  const std::string line = sample_to_json(s).dump();
  auto back = read_samples_jsonl(line + "\n\n" + line + "\n", "f");
  ASSERT_TRUE(back.ok()) << back.error();
  ASSERT_EQ(back.value().size(), 2U);
  const NodeSample& b = back.value()[0];
  EXPECT_EQ(b.seq, 4U);
  EXPECT_EQ(b.cores_per_socket, 8);
  EXPECT_EQ(b.cores[0].package, 1);
  EXPECT_DOUBLE_EQ(b.packages[0].energy_joules, 40);
  EXPECT_EQ(*b.gpus[0].memory_used_bytes, 1ULL << 40);
  EXPECT_FALSE(b.gpus[0].energy_joules.has_value());
  EXPECT_FALSE(b.has_memory);
  auto bad = read_samples_jsonl(line + "\n{oops\n", "f");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("f:2"), std::string::npos) << bad.error();
}

TEST(ListenAddress, Parses) {
  auto a = parse_listen_address("127.0.0.1:9400");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.value().first, "127.0.0.1");
  EXPECT_EQ(a.value().second, 9400);
  EXPECT_EQ(parse_listen_address("[::1]:0").value().first, "::1");
  EXPECT_EQ(parse_listen_address(":9400").value().first, "0.0.0.0");
  EXPECT_FALSE(parse_listen_address("localhost").ok());
  EXPECT_FALSE(parse_listen_address("h:70000").ok());
}

}  // namespace
}  // namespace greensched::monitor
