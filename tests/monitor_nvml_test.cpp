// Acceptance (b): the NVML path against a stand-in library built by the tests
// (monitor_fake_nvml.cpp), loaded by path through GREENSCHED_NVML_LIBRARY or the sampler
// option, with every GPU metric checked against the stand-in's fixed figures.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <string>

#include "greensched/monitor/agent.hpp"
#include "greensched/monitor/nvml.hpp"
#include "greensched/monitor/prometheus.hpp"
#include "greensched/monitor/sample_json.hpp"
#include "greensched/monitor/sampler.hpp"
#include "prometheus_text.hpp"

namespace greensched::monitor {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

using testing::parse_metrics;

TEST(Nvml, ReadsEveryFigureOfTheStandIn) {
  auto nvml = Nvml::open(GREENSCHED_FAKE_NVML);
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  ASSERT_EQ(nvml.value()->device_count(), 2U);
  std::vector<std::string> errors;
  const auto gpus = nvml.value()->read(errors);
  ASSERT_EQ(gpus.size(), 2U);
  const GpuReading& a = gpus[0];
  EXPECT_EQ(a.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(a.uuid, "GPU-00000000-1111-2222-3333-444444444444");
  EXPECT_DOUBLE_EQ(*a.power_watts, 123.456);
  EXPECT_DOUBLE_EQ(*a.energy_joules, 987654.321);
  EXPECT_DOUBLE_EQ(*a.utilization, 0.42);
  EXPECT_DOUBLE_EQ(*a.memory_utilization, 0.17);
  EXPECT_EQ(*a.memory_used_bytes, 12ULL << 30);
  EXPECT_EQ(*a.memory_total_bytes, 40ULL << 30);
  EXPECT_DOUBLE_EQ(*a.temperature_celsius, 55.0);
  const GpuReading& t = gpus[1];
  EXPECT_EQ(t.name, "Tesla T4");
  EXPECT_EQ(t.uuid, "");
  EXPECT_DOUBLE_EQ(*t.power_watts, 35.0);
  EXPECT_FALSE(t.energy_joules.has_value());  // not supported: absent, not zero
  EXPECT_DOUBLE_EQ(*t.utilization, 0.07);
  EXPECT_DOUBLE_EQ(*t.temperature_celsius, 41.0);
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_NE(errors[0].find("GPU 1 (Tesla T4): nvmlDeviceGetTotalEnergyConsumption: Not Supported"),
            std::string::npos)
      << errors[0];
}

TEST(Nvml, InitAndShutdownArePaired) {
  // Hold the library so that its counters survive the Nvml object's dlclose.
  void* handle = dlopen(GREENSCHED_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr);
  auto* inits = static_cast<int*>(dlsym(handle, "fake_nvml_init_calls"));
  auto* shutdowns = static_cast<int*>(dlsym(handle, "fake_nvml_shutdown_calls"));
  ASSERT_TRUE(inits && shutdowns);
  const int i0 = *inits, s0 = *shutdowns;
  {
    auto nvml = Nvml::open(GREENSCHED_FAKE_NVML);
    ASSERT_TRUE(nvml.ok());
    EXPECT_EQ(*inits, i0 + 1);
    EXPECT_EQ(*shutdowns, s0);
  }
  EXPECT_EQ(*shutdowns, s0 + 1);
  dlclose(handle);
}

TEST(Nvml, FailuresAreErrorValues) {
  auto missing = Nvml::open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("cannot load"), std::string::npos);
  auto wrong = Nvml::open("libm.so.6");  // loads, but has no NVML functions
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().find("missing nvmlInit_v2"), std::string::npos) << wrong.error();
  setenv("FAKE_NVML_FAIL_INIT", "1", 1);
  auto no_driver = Nvml::open(GREENSCHED_FAKE_NVML);
  unsetenv("FAKE_NVML_FAIL_INIT");
  ASSERT_FALSE(no_driver.ok());
  EXPECT_NE(no_driver.error().find("nvmlInit_v2: Driver Not Loaded"), std::string::npos)
      << no_driver.error();
}

TEST(Nvml, EnvironmentVariableChoosesTheLibrary) {
  setenv("GREENSCHED_NVML_LIBRARY", GREENSCHED_FAKE_NVML, 1);
  EXPECT_EQ(default_nvml_library(), GREENSCHED_FAKE_NVML);
  std::vector<std::string> notes;
  Sampler sampler(SamplerOptions{}, [&](const std::string& n) { notes.push_back(n); });
  unsetenv("GREENSCHED_NVML_LIBRARY");
  EXPECT_EQ(default_nvml_library(), "libnvidia-ml.so.1");
  EXPECT_EQ(sampler.gpu_count(), 2U);
  const NodeSample s = sampler.sample();
  ASSERT_EQ(s.gpus.size(), 2U);
  EXPECT_TRUE(sampler.sources().nvml);
  // The unsupported energy counter of GPU 1 is noted once, however often it is read.
  sampler.sample();
  std::size_t energy_notes = 0;
  for (const std::string& n : notes) {
    energy_notes += n.find("nvmlDeviceGetTotalEnergyConsumption") != std::string::npos;
  }
  EXPECT_EQ(energy_notes, 1U);
}

TEST(Nvml, EveryGpuMetricInTheAgentsExposition) {
  MonitorOptions opts;
  opts.interval_s = 0.05;
  opts.count = 1;
  opts.sampler.nvml_library = GREENSCHED_FAKE_NVML;
  MonitorAgent agent(opts, nullptr);
  ASSERT_TRUE(agent.start().ok());
  ASSERT_TRUE(agent.wait_for(20.0));
  const auto m = parse_metrics(agent.metrics());
  const std::string a =
      "{gpu=\"0\",uuid=\"GPU-00000000-1111-2222-3333-444444444444\",name=\"NVIDIA "
      "A100-SXM4-40GB\"}";
  const std::string t = "{gpu=\"1\",name=\"Tesla T4\"}";
  const std::map<std::string, double> expected = {
      {"greensched_gpu_power_watts" + a, 123.456},
      {"greensched_gpu_energy_joules_total" + a, 987654.321},
      {"greensched_gpu_utilization_ratio" + a, 0.42},
      {"greensched_gpu_memory_utilization_ratio" + a, 0.17},
      {"greensched_gpu_memory_used_bytes" + a, 12 * kGiB},
      {"greensched_gpu_memory_total_bytes" + a, 40 * kGiB},
      {"greensched_gpu_temperature_celsius" + a, 55},
      {"greensched_gpu_power_watts" + t, 35},
      {"greensched_gpu_utilization_ratio" + t, 0.07},
      {"greensched_gpu_memory_utilization_ratio" + t, 0.03},
      {"greensched_gpu_memory_used_bytes" + t, 1 * kGiB},
      {"greensched_gpu_memory_total_bytes" + t, 15 * kGiB},
      {"greensched_gpu_temperature_celsius" + t, 41},
      {"greensched_monitor_source_up{source=\"nvml\"}", 1},
  };
  for (const auto& [series, value] : expected) {
    ASSERT_TRUE(m.count(series)) << series;
    EXPECT_DOUBLE_EQ(m.at(series), value) << series;
  }
  EXPECT_FALSE(m.count("greensched_gpu_energy_joules_total" + t));
  // The JSON line carries the same figures.
  const auto s = agent.latest();
  ASSERT_TRUE(s.has_value());
  const nlohmann::json j = sample_to_json(*s);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["power_watts"].get<double>(), 123.456);
  EXPECT_FALSE(j["gpus"][1].contains("energy_joules"));
}

}  // namespace
}  // namespace greensched::monitor
